/**
 * GET /openapi.json and the offline API page GET /docs (swagger-ui-dist,
 * served from node_modules: the page loads nothing from outside the server).
 */
import { createReadStream } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { legacyError } from "../rpc/error-table";
import { type NodeRequest, type NodeResponse, sendError } from "./responder";

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
  /** The declared route a path belongs to (`/openapi.json`, `/docs`, `/docs/{file}`), if any. */
  route(path: string): string | undefined;
  /** Answers a request on one of those routes. */
  handle(req: NodeRequest, res: NodeResponse, path: string): void;
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
    route(path) {
      if (path === "/openapi.json" || path === "/docs") return path;
      return path.startsWith("/docs/") ? "/docs/{file}" : undefined;
    },
    handle(req, res, path) {
      req.resume();
      if (req.method !== "GET" && req.method !== "HEAD") {
        sendError(req, res, legacyError(405, `use GET for ${path.slice(0, 200)}`), {
          allow: "GET, HEAD",
        });
        return;
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
          sendError(req, res, legacyError(404, `no such file: ${name.slice(0, 200)}`));
          return;
        }
        res.statusCode = 200;
        res.setHeader("content-type", type);
        res.setHeader("cache-control", "public, max-age=3600");
        createReadStream(join(assetDir, name))
          .on("error", () => res.destroy())
          .pipe(res as NodeJS.WritableStream);
      }
    },
  };
}
