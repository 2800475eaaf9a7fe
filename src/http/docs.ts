/**
 * GET /openapi.json and the offline API page GET /docs (swagger-ui-dist,
 * served from node_modules: the page loads nothing from outside the server).
 */
import { createReadStream } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

type NodeRequest = IncomingMessage | Http2ServerRequest;
type NodeResponse = ServerResponse | Http2ServerResponse;

const ASSETS: Readonly<Record<string, string>> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
  "favicon-16x16.png": "image/png",
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>docflow-api — legacy HTTP API</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

// validatorUrl null: no call to the public validator; BaseLayout: no top bar.
// The page asks for legacy JSON unless a media type was picked (the server's
// default, for */* as for no Accept, is protobuf, which a browser cannot show).
const INIT = `window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  validatorUrl: null,
  deepLinking: true,
  layout: "BaseLayout",
  presets: [SwaggerUIBundle.presets.apis],
  tryItOutEnabled: true,
  requestInterceptor: (request) => {
    const accept = request.headers.Accept || request.headers.accept;
    if (!accept || accept === "*/*") request.headers.Accept = "application/json";
    return request;
  },
});
`;

export interface DocsRoutes {
  /** True when the request was for the document or the page. */
  handle(req: NodeRequest, res: NodeResponse, path: string): boolean;
}

export function createDocsRoutes(openApi: object): DocsRoutes {
  const document = Buffer.from(JSON.stringify(openApi, null, 2), "utf8");
  const assetDir = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  const send = (res: NodeResponse, type: string, body: Buffer | string) => {
    res.statusCode = 200;
    res.setHeader("content-type", type);
    res.setHeader("cache-control", "no-cache");
    res.end(body);
  };
  return {
    handle(req, res, path) {
      const isDocs =
        path === "/openapi.json" ||
        path === "/docs" ||
        path === "/docs/" ||
        path.startsWith("/docs/");
      if (!isDocs) return false;
      req.resume();
      if (req.method !== "GET" && req.method !== "HEAD") {
        res.statusCode = 405;
        res.setHeader("allow", "GET, HEAD");
        res.end();
        return true;
      }
      if (path === "/openapi.json") {
        send(res, "application/json; charset=utf-8", document);
      } else if (path === "/docs" || path === "/docs/") {
        send(res, "text/html; charset=utf-8", PAGE);
      } else if (path === "/docs/init.js") {
        send(res, "text/javascript; charset=utf-8", INIT);
      } else {
        const name = path.slice("/docs/".length);
        const type = ASSETS[name];
        if (!type) {
          res.statusCode = 404;
          res.setHeader("content-type", "text/plain; charset=utf-8");
          res.end("not found");
          return true;
        }
        res.statusCode = 200;
        res.setHeader("content-type", type);
        res.setHeader("cache-control", "public, max-age=3600");
        createReadStream(join(assetDir, name))
          .on("error", () => res.destroy())
          .pipe(res as NodeJS.WritableStream);
      }
      return true;
    },
  };
}
