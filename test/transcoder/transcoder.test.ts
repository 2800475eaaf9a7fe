/**
 * The transcoder (src/transcoder, docs/transcoding.md) on the front door,
 * over a test service with a rule for every feature (proto/…/library.proto,
 * built by buf for the run): path templates and their decoding, the query by
 * field paths, bodies, response_body, custom verbs and methods, HttpBody,
 * server streaming as NDJSON and SSE, errors as google.rpc.Status, the
 * interceptors on every call, conflicts refused at start-up.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createFileRegistry,
  type DescMethod,
  type DescService,
  type FileRegistry,
  fromBinary,
  getOption,
  hasOption,
  type Message,
} from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter, type ServiceImpl } from "@connectrpc/connect";
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http } from "../../gen/google/api/annotations_pb";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { DEFAULT_TIMEOUTS } from "../../src/config";
import type { Deps } from "../../src/deps";
import { createHttpServer, type HttpServer } from "../../src/http/server";
import { createLogger } from "../../src/log";
import { createJsonProfile } from "../../src/transcoder/json-profile";
import { createTranscoder } from "../../src/transcoder/transcoder";
import { CODES } from "../../src/wire/errors";

const ROOT = new URL("../../", import.meta.url).pathname;
const PKG = "transcoding.test.v1";

let registry: FileRegistry;
let service: DescService;
let server: HttpServer;
let base: string;

function buildImage(): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), "transcoder-proto-"));
  cpSync(join(ROOT, "test/transcoder/proto"), dir, { recursive: true });
  for (const f of ["annotations.proto", "http.proto"]) {
    cpSync(join(ROOT, "proto/third_party/google/api", f), join(dir, "google/api", f));
  }
  const out = join(dir, "image.binpb");
  execFileSync(
    join(ROOT, "node_modules/.bin/buf"),
    ["build", dir, "--as-file-descriptor-set", "-o", out],
    { stdio: "pipe" },
  );
  return readFileSync(out);
}

type Any = Message & Record<string, unknown>;

function routes(router: ConnectRouter): ConnectRouter {
  const book = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    title: `title of ${name}`,
    ...extra,
  });
  const impl = {
    getBook: (req: Any) => book(req.name as string),
    listBooks: (req: Any) => ({ request: req }),
    updateBook: (req: Any) => req.book,
    createBook: (req: Any) => req,
    archiveBook: (req: Any) => book(req.name as string, { title: "archived" }),
    getTitle: (req: Any) => book(req.name as string),
    purgeBook: (req: Any) => book(req.name as string, { title: "purged" }),
    upload: (req: Any) => {
      const content = req.content as { contentType: string; data: Uint8Array } | undefined;
      return {
        contentType: "text/plain; charset=utf-8",
        data: new TextEncoder().encode(
          `${req.id}: ${content?.contentType} ${content?.data.length} bytes: ${new TextDecoder().decode(content?.data)}`,
        ),
      };
    },
    tag: (req: Any) => req,
    renameBook: (req: Any) => req,
    async *watchBooks(req: Any) {
      yield book(`${req.shelf}/1`);
      yield book(`${req.shelf}/2`);
      if (req.pageSize === 2) throw new ConnectError("the shelf burned", Code.Unavailable);
    },
    async *export(req: Any) {
      const text = (t: string) => ({ contentType: "text/csv", data: new TextEncoder().encode(t) });
      yield text("id,title\n");
      yield text(`1,${req.name}\n`);
      if (req.withNotes) throw new ConnectError("the export failed", Code.Internal);
    },
    fail: (req: Any) => {
      if (req.unexpected) throw new Error("secret database detail");
      throw new ConnectError(req.message as string, req.code as Code, undefined, [
        { desc: ErrorInfoSchema, value: { reason: "TEST", domain: "transcoding.test" } },
      ]);
    },
  };
  return router.service(service, impl as unknown as ServiceImpl<DescService>);
}

beforeAll(async () => {
  registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, buildImage()));
  service = registry.getService(`${PKG}.Library`) as DescService;
  const log = createLogger("silent", () => undefined);
  const deps = { log, now: () => new Date(), healthy: async () => true } as unknown as Deps;
  server = createHttpServer(
    deps,
    { ...DEFAULT_TIMEOUTS, shutdownMs: 500 },
    {
      corsAllowedOrigins: [],
      routes,
      publicServices: new Set([service.typeName]),
      jsonRegistry: registry,
    },
  );
  const address = await server.listen(0, "127.0.0.1");
  base = `http://127.0.0.1:${address.port}`;
}, 60_000);
afterAll(async () => {
  await server?.close();
});

async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: unknown; text: string; headers: Headers }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers };
}

describe("path templates", () => {
  it("a variable with a sub-pattern takes its segments; the path is matched raw", async () => {
    const r = await call("GET", "/v1/shelves/s1/books/b%2F1");
    expect(r.status).toBe(200);
    // A variable of several segments keeps %2F encoded (google/api/http.proto).
    expect(r.json).toEqual({
      name: "shelves/s1/books/b%2F1",
      title: "title of shelves/s1/books/b%2F1",
    });
  });

  it("an additional binding with ** takes the rest of the path", async () => {
    const r = await call("GET", "/v1/books/a/b/c%20d");
    expect(r.status).toBe(200);
    expect((r.json as { name: string }).name).toBe("a/b/c d");
  });

  it("a single-segment variable decodes every %XX, %2F and %25 included, once", async () => {
    const r = await call("GET", "/v1/shelves/a%2Fb%2525/books?pageSize=1");
    expect(r.status).toBe(200);
    expect((r.json as { request: { shelf: string } }).request.shelf).toBe("a/b%25");
  });

  it("a custom verb and a custom HTTP method", async () => {
    const archived = await call("POST", "/v1/shelves/s/books/b:archive", {});
    expect(archived.json).toMatchObject({ name: "shelves/s/books/b", title: "archived" });
    const purged = await call("PURGE", "/v1/shelves/s/books/b");
    expect(purged.status).toBe(200);
    expect(purged.json).toMatchObject({ title: "purged" });
  });

  it("a path bound with other methods: 405 with Allow, as google.rpc.Status", async () => {
    const r = await call("DELETE", "/v1/shelves/s/books/b");
    expect(r.status).toBe(405);
    // HEAD beside GET: the JSON profile serves it wherever GET is (RFC 9110 §9.3.2).
    expect(r.headers.get("allow")?.split(", ").sort()).toEqual(["GET", "HEAD", "PATCH", "PURGE"]);
    expect(r.json).toMatchObject({ error: { code: 405, status: "UNIMPLEMENTED" } });
  });

  it("a path bound by nothing is the front door's 404", async () => {
    expect((await call("GET", "/v1/shelves/s/chairs")).status).toBe(404);
  });
});

describe("query parameters", () => {
  it("nested fields, repeated keys, enums by name or number, well-known types, JSON or proto names", async () => {
    const q = [
      "page_size=7",
      "filter.author=Ann+Lee",
      "filter.kind=ESSAY",
      "tags=a&tags=b%26c",
      "kinds=NOVEL&kinds=2",
      "after=2024-01-02T03:04:05Z",
      "within=1.5s",
      "mask=title,filter.author",
      "limit=5",
      "note=",
      "ratio=-Inf",
      "token=aGk_",
    ].join("&");
    const r = await call("GET", `/v1/shelves/s/books?${q}`);
    expect(r.status).toBe(200);
    expect((r.json as { request: unknown }).request).toEqual({
      shelf: "s",
      pageSize: 7,
      filter: { author: "Ann Lee", kind: "ESSAY" },
      tags: ["a", "b&c"],
      kinds: ["NOVEL", "ESSAY"],
      after: "2024-01-02T03:04:05Z",
      within: "1.500s",
      mask: "title,filter.author",
      limit: 5,
      note: "",
      ratio: "-Infinity",
      token: "aGk/",
    });
  });

  it("an unknown parameter is a 400 that names it", async () => {
    const r = await call("GET", "/v1/shelves/s/books?pageSize=1&colour=red");
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({
      error: {
        code: 400,
        status: "INVALID_ARGUMENT",
        message: expect.stringContaining('"colour"'),
      },
    });
  });

  it("a field the path binds is never set from the query", async () => {
    const r = await call("GET", "/v1/shelves/s/books?shelf=other");
    expect(r.status).toBe(400);
    expect((r.json as { error: { message: string } }).error.message).toContain('"shelf"');
  });

  it('with body "*" no parameter is taken', async () => {
    const r = await call("POST", "/v1/shelves/s/books?title=x", { title: "t" });
    expect(r.status).toBe(400);
  });

  it("a value that does not parse is a 400 naming the parameter", async () => {
    for (const bad of ["pageSize=seven", "kinds=POEM", "after=yesterday", "pageSize=99999999999"]) {
      const r = await call("GET", `/v1/shelves/s/books?${bad}`);
      expect(r.status, bad).toBe(400);
      expect((r.json as { error: { message: string } }).error.message, bad).toContain(
        bad.split("=")[0],
      );
    }
  });

  it("$alt=json;enum-encoding=int writes enums as numbers", async () => {
    const r = await call(
      "GET",
      "/v1/shelves/s/books?filter.kind=ESSAY&$alt=json%3Benum-encoding%3Dint",
    );
    expect((r.json as { request: { filter: unknown } }).request.filter).toEqual({ kind: 2 });
  });
});

describe("bodies and answers", () => {
  it("a body field, with a path variable inside it", async () => {
    const r = await call("PATCH", "/v1/shelves/s/books/b", { title: "New", pages: "12" });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ name: "shelves/s/books/b", title: "New", pages: "12" });
  });

  it('body "*": every field but the path\'s; the path wins', async () => {
    const r = await call("POST", "/v1/shelves/s/books", { shelf: "other", title: "T", kind: 1 });
    expect(r.json).toEqual({ shelf: "s", title: "T", kind: "NOVEL" });
  });

  it("a scalar body field: the body is its JSON value", async () => {
    const r = await call("POST", "/v1/shelves/s/books/b:rename", JSON.stringify("New title"));
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ name: "shelves/s/books/b", title: "New title" });
    expect((await call("POST", "/v1/shelves/s/books/b:rename", 7)).status).toBe(400);
  });

  it("a repeated body field", async () => {
    const r = await call("POST", "/v1/shelves/s:tag", ["x", "y"]);
    expect(r.json).toEqual({ shelf: "s", tags: ["x", "y"] });
  });

  it("response_body: the answer is the field", async () => {
    const r = await call("GET", "/v1/shelves/s/books/b:title");
    expect(r.status).toBe(200);
    expect(r.json).toBe("title of shelves/s/books/b");
  });

  it("HttpBody in and out, any content type", async () => {
    const r = await call("POST", "/v1/uploads/u1", "a,b\n1,2\n", { "content-type": "text/csv" });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(r.text).toBe("u1: text/csv 8 bytes: a,b\n1,2\n");
  });

  it("a body that is not JSON, or not the message, is a 400 that says so", async () => {
    const notJson = await call("POST", "/v1/shelves/s/books", "{");
    expect(notJson.status).toBe(400);
    const unknownField = await call("POST", "/v1/shelves/s/books", { colour: "red" });
    expect(unknownField.status).toBe(400);
    expect((unknownField.json as { error: { message: string } }).error.message).toContain("colour");
  });
});

describe("server streaming", () => {
  it("newline-delimited JSON by default", async () => {
    const r = await call("GET", "/v1/shelves/s/books:watch");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/x-ndjson");
    expect(
      r.text
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { name: "s/1", title: "title of s/1" },
      { name: "s/2", title: "title of s/2" },
    ]);
  });

  it("Server-Sent Events when asked; an error mid-stream ends it with an error event", async () => {
    const r = await call("GET", "/v1/shelves/s/books:watch?pageSize=2", undefined, {
      accept: "text/event-stream",
    });
    expect(r.headers.get("content-type")).toBe("text/event-stream");
    const events = r.text.trim().split("\n\n");
    expect(events).toHaveLength(3);
    expect(events[0]).toBe(`data: ${JSON.stringify({ name: "s/1", title: "title of s/1" })}`);
    expect(events[2]).toBe(
      `event: error\ndata: ${JSON.stringify({ error: { code: 503, message: "the shelf burned", status: "UNAVAILABLE" } })}`,
    );
  });

  it("NDJSON: an error mid-stream is the last record", async () => {
    const r = await call("GET", "/v1/shelves/s/books:watch?pageSize=2");
    const records = r.text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(records.at(-1)).toEqual({
      error: { code: 503, message: "the shelf burned", status: "UNAVAILABLE" },
    });
  });
});

describe("a stream of HttpBody", () => {
  it("is one body of the first message's content type, chunk by chunk", async () => {
    const r = await call("GET", "/v1/exports/b1");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/csv");
    expect(r.text).toBe("id,title\n1,b1\n");
  });

  it("an error after the first chunk cuts the answer off: never a body that looks whole", async () => {
    await expect(call("GET", "/v1/exports/b1?withNotes=true")).rejects.toThrow();
  });
});

describe("errors as google.rpc.Status", () => {
  it("the code's status from the error table, the message, ErrorInfo in details", async () => {
    const r = await call("POST", "/v1/fail", { code: Code.NotFound, message: "no such book" });
    expect(r.status).toBe(404);
    expect(r.json).toEqual({
      error: {
        code: 404,
        message: "no such book",
        status: "NOT_FOUND",
        details: [
          {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            reason: "TEST",
            domain: "transcoding.test",
          },
        ],
      },
    });
  });

  it("the interceptors run: an unexpected error is hidden, as on every protocol", async () => {
    const r = await call("POST", "/v1/fail", { unexpected: true });
    expect(r.status).toBe(500);
    expect(r.text).not.toContain("secret");
    expect(r.json).toMatchObject({ error: { code: 500, status: "INTERNAL" } });
  });
});

describe("rules refused at start-up", () => {
  const methodsOf = () => service.methods as DescMethod[];
  const compile = (ruleOf: (m: DescMethod) => unknown) =>
    createTranscoder(methodsOf(), {
      ruleOf: ruleOf as never,
      profileOf: () => createJsonProfile({ statusOf: (e) => CODES[e.code].connectStatus }),
    });
  const ruleOf = (m: DescMethod) => (hasOption(m, http) ? getOption(m, http) : undefined);

  it("the test service's rules compile", () => {
    expect(compile(ruleOf).bindings.length).toBe(14);
  });

  it("two bindings that match the same requests: both methods named", () => {
    const clash = (m: DescMethod) =>
      m.name === "ArchiveBook"
        ? {
            ...getOption(m, http),
            pattern: { case: "get", value: "/v1/{other=shelves/*/books/*}" },
          }
        : ruleOf(m);
    expect(() => compile(clash)).toThrow(/ArchiveBook.*GetBook|GetBook.*ArchiveBook/);
  });

  it("a path variable that names no field, a bad template, a body on GET, nested additional bindings", () => {
    const with_ = (change: Record<string, unknown>) => (m: DescMethod) =>
      m.name === "GetTitle" ? { ...getOption(m, http), ...change } : ruleOf(m);
    expect(() => compile(with_({ pattern: { case: "get", value: "/v1/{nope}" } }))).toThrow(
      /GetTitle: nope is not a field path/,
    );
    expect(() => compile(with_({ pattern: { case: "get", value: "/v1/**/x/*" } }))).toThrow(
      /GetTitle: .*only literal segments may follow/,
    );
    expect(() => compile(with_({ body: "*" }))).toThrow(
      /GetTitle: a GET binding cannot have a body/,
    );
    const nested = {
      pattern: { case: "get", value: "/x" },
      body: "",
      responseBody: "",
      additionalBindings: [],
    };
    expect(() =>
      compile(with_({ additionalBindings: [{ ...nested, additionalBindings: [nested] }] })),
    ).toThrow(/GetTitle: an additional binding cannot have additional bindings/);
  });
});

describe("/openapi.json from the same bindings", () => {
  type Doc = {
    paths: Record<
      string,
      Record<string, { parameters?: { name: string; in: string }[]; [k: string]: unknown }>
    >;
    components: { schemas: Record<string, unknown> };
  };
  let doc: Doc;
  beforeAll(async () => {
    doc = (await (await fetch(`${base}/openapi.json`)).json()) as Doc;
  });

  it("is valid OpenAPI 3.1", async () => {
    const validator = new Validator();
    const result = await validator.validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(validator.version).toBe("3.1");
  });

  it("path templates become path parameters; a sub-pattern's wildcards each one; same paths share names", () => {
    const book = doc.paths["/v1/shelves/{name.1}/books/{name.2}"];
    expect(Object.keys(book ?? {}).sort()).toEqual(["get", "patch", "x-purge"]);
    expect(book?.get?.parameters?.filter((p) => p.in === "path").map((p) => p.name)).toEqual([
      "name.1",
      "name.2",
    ]);
    // UpdateBook binds book.name: the same path, the first binding's names.
    expect(book?.patch?.parameters?.filter((p) => p.in === "path").map((p) => p.name)).toEqual([
      "name.1",
      "name.2",
    ]);
    expect(doc.paths["/v1/books/{name.1}"]?.get).toBeDefined();
    expect(doc.paths["/v1/shelves/{name.1}/books/{name.2}:archive"]?.post).toBeDefined();
  });

  it("query parameters: the fields the path leaves, by JSON field path", () => {
    const list = doc.paths["/v1/shelves/{shelf}/books"]?.get;
    const query = list?.parameters?.filter((p) => p.in === "query").map((p) => p.name);
    expect(query).toEqual(
      expect.arrayContaining(["pageSize", "filter.author", "filter.kind", "tags", "after", "mask"]),
    );
    expect(query).not.toContain("shelf");
  });

  it("response_body, HttpBody and streams are described as served; errors as google.rpc.Status", () => {
    const ok = (path: string, verb: string) => {
      const responses = doc.paths[path]?.[verb]?.responses as
        | Record<string, { content: Record<string, unknown> }>
        | undefined;
      return responses?.["200"]?.content;
    };
    expect(ok("/v1/shelves/{name.1}/books/{name.2}:title", "get")).toEqual({
      "application/json": { schema: { type: "string" } },
    });
    expect(Object.keys(ok("/v1/uploads/{id}", "post") ?? {})).toEqual(["*/*"]);
    expect(Object.keys(ok("/v1/shelves/{shelf}/books:watch", "get") ?? {})).toEqual([
      "application/x-ndjson",
      "text/event-stream",
    ]);
    expect(doc.components.schemas["google.rpc.Status"]).toBeDefined();
  });
});
