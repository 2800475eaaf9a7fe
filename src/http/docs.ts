/**
 * GET /openapi.json and the offline API page GET /docs (swagger-ui-dist,
 * served from node_modules: the page loads nothing from outside the server).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import {
  COMPRESS_MIN_BYTES,
  type ContentCoding,
  compress,
  negotiateCoding,
} from "../wire/compression";
import { legacyError } from "../wire/errors";
import type { NodeRequest, NodeResponse } from "../wire/http";
import { addVary, sendError } from "../wire/plain";

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
  handle(req: NodeRequest, res: NodeResponse, path: string): Promise<void>;
}

/** One file served by the docs routes: its bytes, and its compressed forms, made once at start-up. */
interface StaticFile {
  readonly type: string;
  readonly cacheControl: string;
  readonly identity: Buffer;
  /** The same bytes in each content coding; undefined where compressing does not pay. */
  readonly coded: Partial<Record<ContentCoding, Promise<Buffer>>>;
  readonly etag: string;
}

function staticFile(type: string, cacheControl: string, body: Buffer | string): StaticFile {
  const identity = Buffer.isBuffer(body) ? body : Buffer.from(body, "utf8");
  const worth = identity.length >= COMPRESS_MIN_BYTES;
  const coded: StaticFile["coded"] = worth
    ? { gzip: compress(identity, "gzip"), br: compress(identity, "br", 9) }
    : {};
  // Compression failures show up when the file is served; keep them from being unhandled meanwhile.
  for (const promise of Object.values(coded)) promise.catch(() => undefined);
  const etag = createHash("sha256").update(identity).digest("base64url").slice(0, 22);
  return { type, cacheControl, identity, coded, etag };
}

/** Each representation has its own entity tag: the coding is part of it. */
const etagOf = (file: StaticFile, coding: ContentCoding | undefined) =>
  `"${file.etag}${coding ? `-${coding}` : ""}"`;

export function createDocsRoutes(openApi: object): DocsRoutes {
  const assetDir = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  // The document and page may change with a release: revalidate (304 when unchanged).
  // The swagger-ui assets change only with the package: cache them for a day.
  const files = new Map<string, StaticFile>([
    [
      "/openapi.json",
      staticFile("application/json; charset=utf-8", "no-cache", JSON.stringify(openApi, null, 2)),
    ],
    ["/docs", staticFile("text/html; charset=utf-8", "no-cache", PAGE)],
    ["/docs/init.js", staticFile("text/javascript; charset=utf-8", "no-cache", INIT)],
  ]);
  files.set("/docs/", files.get("/docs") as StaticFile);
  for (const [name, type] of Object.entries(ASSETS)) {
    files.set(
      `/docs/${name}`,
      staticFile(type, "public, max-age=86400", readFileSync(join(assetDir, name))),
    );
  }
  return {
    route(path) {
      if (path === "/openapi.json" || path === "/docs") return path;
      return path.startsWith("/docs/") ? "/docs/{file}" : undefined;
    },
    async handle(req, res, path) {
      req.resume();
      if (req.method !== "GET" && req.method !== "HEAD") {
        sendError(req, res, legacyError(405, `use GET for ${path.slice(0, 200)}`), {
          allow: "GET, HEAD",
        });
        return;
      }
      const file = files.get(path);
      if (!file) {
        sendError(req, res, legacyError(404, `no such file: ${path.slice(0, 200)}`));
        return;
      }
      const wanted = negotiateCoding(req.headers["accept-encoding"]);
      const coding = wanted && file.coded[wanted] ? wanted : undefined;
      res.setHeader("cache-control", file.cacheControl);
      addVary(res, "Accept-Encoding");
      res.setHeader("etag", etagOf(file, coding));
      const known = (req.headers["if-none-match"] ?? "").split(",").map((t) => t.trim());
      if (
        known.includes("*") ||
        [undefined, "gzip", "br"].some((c) =>
          known.includes(etagOf(file, c as ContentCoding | undefined)),
        )
      ) {
        res.statusCode = 304;
        res.end();
        return;
      }
      const body = coding ? await (file.coded[coding] as Promise<Buffer>) : file.identity;
      res.statusCode = 200;
      res.setHeader("content-type", file.type);
      if (coding) res.setHeader("content-encoding", coding);
      res.setHeader("content-length", String(body.length));
      if (req.method === "HEAD") res.end();
      else res.end(body);
    },
  };
}
