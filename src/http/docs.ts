/**
 * GET /openapi.json, the offline API page GET /docs (swagger-ui-dist,
 * served from node_modules: the page loads nothing from outside the server)
 * and GET /, which leads to it.
 *
 * The document names the server (docs/security.md, "Host"): PUBLIC_URL when
 * the deployment sets it; else the address the service listens on, when
 * that is one address (generators need an absolute URL: a relative "/"
 * makes them call http://localhost); else "/". Never what a request's Host
 * says: a document that repeated it could be poisoned in a shared cache.
 *
 * Every answer here carries the browser's defences: a strict Content
 * Security Policy (the page's assets are all local: no inline script or
 * style, nothing from elsewhere), no framing, no referrer, no sniffing.
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

/** A row of the demo note of /docs: what it is, and the value to paste. */
export type DemoCredential = readonly [label: string, value: string];

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The demo note: shown only when the service loaded the demo fixture. */
function demoNote(demo: readonly DemoCredential[]): string {
  if (demo.length === 0) return "";
  const rows = demo
    .map(
      ([label, value]) =>
        `      <tr><th>${escapeHtml(label)}</th><td><code>${escapeHtml(value)}</code></td></tr>`,
    )
    .join("\n");
  return `  <section class="demo" aria-label="Demo credentials">
    <p>This server runs on the built-in <strong>demo data</strong>. To try an operation: <em>Authorize</em> → ServiceAuth, paste the value below; then open an operation, fill in its parameters (the values below) and press <em>Execute</em>.</p>
    <table>
${rows}
    </table>
  </section>
`;
}

const page = (demo: readonly DemoCredential[]) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>docflow-api — HTTP API</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="stylesheet" href="/docs/docs.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">
</head>
<body>
${demoNote(demo)}  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

/** The page's own style (a file: the policy allows no inline style). */
const DOCS_CSS = `.demo { max-width: 1420px; margin: 1em auto 0; padding: 0 20px; font-family: sans-serif; font-size: 14px; }
.demo th { text-align: left; padding-right: 1em; font-weight: normal; color: #555; }
`;

/**
 * What a browser may do with the answers here: scripts, styles, images and
 * calls of this server only (swagger-ui's icons are data: URIs), nothing
 * inline, no plug-in, no framing, no form posted elsewhere.
 */
export const DOCS_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
};

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
  /**
   * The service listens at `url` (one address), or on every address
   * (undefined): the server of /openapi.json unless PUBLIC_URL names it.
   */
  listening(url: string | undefined): void;
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

function staticFile(
  type: string,
  cacheControl: string,
  body: Buffer | string,
  compressed = true,
): StaticFile {
  const identity = Buffer.isBuffer(body) ? body : Buffer.from(body, "utf8");
  const worth = compressed && identity.length >= COMPRESS_MIN_BYTES;
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

/** What GET / answers a client that does not follow the redirect. */
const ROOT_TEXT = `docflow-api: the API page is /docs, the OpenAPI document /openapi.json.
Health: /livez, /readyz. Metrics: /metrics.
`;

/** Stands for the server URL in the serialized document until the service knows it. */
const SERVER_URL_MARK = "\u0000server-url\u0000";

export interface DocsOptions {
  /** PUBLIC_URL: the URL clients reach the service at; undefined: the address it listens on, or "/". */
  readonly publicUrl?: string;
  /** The demo credentials, shown on /docs; empty when the demo fixture is not loaded. */
  readonly demo?: readonly DemoCredential[];
}

/**
 * `buildDocument(serverUrl)` is called once, with a mark where the URL goes;
 * each authority's document is the text around it with the URL put in.
 */
export function createDocsRoutes(
  buildDocument: (serverUrl: string) => object,
  options: DocsOptions = {},
): DocsRoutes {
  const [before, after] = JSON.stringify(buildDocument(SERVER_URL_MARK), null, 2).split(
    JSON.stringify(SERVER_URL_MARK).slice(1, -1),
  ) as [string, string];
  const documentFor = (serverUrl: string, compressed = true) =>
    staticFile(
      "application/json; charset=utf-8",
      "no-cache",
      `${before}${serverUrl}${after}`,
      compressed,
    );
  let document = documentFor(options.publicUrl ?? "/");
  const assetDir = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  // The document and page may change with a release: revalidate (304 when unchanged).
  // The swagger-ui assets change only with the package: cache them for a day.
  const files = new Map<string, StaticFile>([
    ["/docs", staticFile("text/html; charset=utf-8", "no-cache", page(options.demo ?? []))],
    ["/docs/init.js", staticFile("text/javascript; charset=utf-8", "no-cache", INIT)],
    ["/docs/docs.css", staticFile("text/css; charset=utf-8", "no-cache", DOCS_CSS)],
  ]);
  files.set("/docs/", files.get("/docs") as StaticFile);
  for (const [name, type] of Object.entries(ASSETS)) {
    files.set(
      `/docs/${name}`,
      staticFile(type, "public, max-age=86400", readFileSync(join(assetDir, name))),
    );
  }
  return {
    listening(url) {
      if (options.publicUrl === undefined) document = documentFor(url ?? "/");
    },
    route(path) {
      if (path === "/openapi.json" || path === "/docs" || path === "/") return path;
      return path.startsWith("/docs/") ? "/docs/{file}" : undefined;
    },
    async handle(req, res, path) {
      req.resume();
      for (const [name, value] of Object.entries(DOCS_HEADERS)) res.setHeader(name, value);
      if (req.method !== "GET" && req.method !== "HEAD") {
        sendError(req, res, legacyError(405, `use GET for ${path.slice(0, 200)}`), {
          allow: "GET, HEAD",
        });
        return;
      }
      if (path === "/") {
        // Browsers follow it to the API page; curl shows where things are.
        const body = Buffer.from(ROOT_TEXT, "utf8");
        res.statusCode = 302;
        res.setHeader("location", "/docs");
        res.setHeader("content-type", "text/plain; charset=utf-8");
        res.setHeader("content-length", String(body.length));
        if (req.method === "HEAD") res.end();
        else res.end(body);
        return;
      }
      const file = path === "/openapi.json" ? document : files.get(path);
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
