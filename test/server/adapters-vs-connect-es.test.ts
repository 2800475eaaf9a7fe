/**
 * The service's own protocol adapters against connect-es's: the same raw
 * requests go to the service's front door and to a reference server built
 * from connect-node's `connectNodeAdapter` with the same routes and the same
 * interceptors over the same database, and must get the same answer —
 * status, codes, messages, details, challenges, and the decoded messages
 * (compressed bytes may differ: brotli qualities do). Where the service
 * answers differently on purpose, the test says so and checks both sides.
 */
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { brotliDecompressSync, gunzipSync, gzipSync } from "node:zlib";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { compressionBrotli, compressionGzip, connectNodeAdapter } from "@connectrpc/connect-node";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CounteragentService } from "../../gen/docflow/api/v1/counteragents_pb";
import { DocumentService } from "../../gen/docflow/api/v1/documents_pb";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { StatusSchema } from "../../gen/google/rpc/status_pb";
import { loadFixture } from "../../src/fixtures/load";
import { createPipeline } from "../../src/rpc/pipeline";
import { MAX_REQUEST_BYTES } from "../../src/wire/body";
import { authHeader, BOX, ENDED_BOX, fullPageFixture, HEAD, USERS } from "../support/fixture";
import { TEST_TIMEOUTS, useHarness } from "../support/harness";
import { envelope, envelopes } from "../support/wire";

const h = useHarness(fullPageFixture);
beforeEach(async () => {
  await loadFixture(h.db, fullPageFixture());
});

/** connect-node serving the same routes through the same interceptors: the reference. */
let reference: { h2: http2.Http2Server; h1: http.Server; h2Url: string; h1Url: string };
beforeAll(async () => {
  const pipeline = createPipeline(h.deps, { callDeadlineMs: TEST_TIMEOUTS.callDeadlineMs });
  const routes = (router: ConnectRouter) => {
    for (const route of pipeline.routes.values()) {
      router.rpc(route.method as never, route.spec.impl as never);
    }
    return router;
  };
  const adapter = connectNodeAdapter({
    routes,
    interceptors: [...pipeline.interceptors],
    readMaxBytes: MAX_REQUEST_BYTES,
    acceptCompression: [compressionGzip, compressionBrotli],
  });
  const h2 = http2.createServer(adapter);
  const h1 = http.createServer(adapter);
  await new Promise<void>((r) => h2.listen(0, "127.0.0.1", r));
  await new Promise<void>((r) => h1.listen(0, "127.0.0.1", r));
  reference = {
    h2,
    h1,
    h2Url: `http://127.0.0.1:${(h2.address() as AddressInfo).port}`,
    h1Url: `http://127.0.0.1:${(h1.address() as AddressInfo).port}`,
  };
});
afterAll(async () => {
  await new Promise((r) => reference?.h2.close(r));
  await new Promise((r) => reference?.h1.close(r));
});

const pathOf = (m: { parent: { typeName: string }; name: string }) =>
  `/${m.parent.typeName}/${m.name}`;
const list = CounteragentService.method.getCounteragentsFromGroup;
const page = toBinary(list.input, create(list.input, { boxId: BOX, counteragentGroupId: HEAD }));
const ended = toBinary(
  list.input,
  create(list.input, { boxId: ENDED_BOX, counteragentGroupId: HEAD }),
);
const get = SubscriptionService.method.getSubscriptions;
const subscriptions = toBinary(
  get.input,
  create(get.input, { boxId: BOX, userId: USERS.clerk.userId }),
);
const update = SubscriptionService.method.updateSubscriptions;
const change = toBinary(
  update.input,
  create(update.input, {
    boxId: BOX,
    userId: USERS.clerk.userId,
    subscriptions: { Subscriptions: [{ Id: "News", IsSubscribed: false }] },
  }),
);
const restore = DocumentService.method.restore;
const restoreUnknown = toBinary(
  restore.input,
  create(restore.input, { boxId: BOX, messageId: "nope" }),
);
const admin = authHeader("admin");
const garbage = Buffer.from([0xff, 0xff, 0xff]);

/** What a gRPC client reads of an answer, compression undone. */
interface GrpcAnswer {
  readonly status: unknown;
  readonly grpcStatus: unknown;
  readonly grpcMessage: string | undefined;
  readonly reasons: string[];
  readonly challenge: unknown;
  readonly messages: string[];
}

async function grpcCall(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<GrpcAnswer> {
  const session = http2.connect(baseUrl);
  session.on("error", () => undefined);
  try {
    return await new Promise<GrpcAnswer>((resolve, reject) => {
      const req = session.request({
        ":method": "POST",
        ":path": path,
        "content-type": "application/grpc",
        te: "trailers",
        authorization: admin,
        ...headers,
      });
      let head: http2.IncomingHttpHeaders = {};
      let trailers: http2.IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      req.on("response", (h) => {
        head = h;
      });
      req.on("trailers", (t) => {
        trailers = t;
      });
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("error", reject);
      req.on("close", () => {
        const all = { ...head, ...trailers };
        const bin = all["grpc-status-details-bin"];
        const reasons = bin
          ? fromBinary(StatusSchema, Buffer.from(String(bin), "base64")).details.flatMap((any) => {
              const info = anyUnpack(any, ErrorInfoSchema);
              return info ? [`${info.reason}:${info.metadata.errorCode}`] : [];
            })
          : [];
        const coding = String(all["grpc-encoding"] ?? "identity");
        resolve({
          status: head[":status"],
          grpcStatus: all["grpc-status"],
          grpcMessage:
            all["grpc-message"] === undefined
              ? undefined
              : decodeURIComponent(String(all["grpc-message"])),
          reasons,
          challenge: all["www-authenticate"],
          messages: envelopes(Buffer.concat(chunks)).map((e) =>
            (e.flags & 1
              ? coding === "br"
                ? brotliDecompressSync(e.data)
                : gunzipSync(e.data)
              : e.data
            ).toString("hex"),
          ),
        });
      });
      req.end(body);
    });
  } finally {
    session.close();
  }
}

interface Case {
  readonly name: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body: Buffer;
}

const SAME: readonly Case[] = [
  { name: "a page", path: pathOf(list), body: envelope(page) },
  {
    name: "a page, gzip accepted",
    path: pathOf(list),
    headers: { "grpc-accept-encoding": "gzip" },
    body: envelope(page),
  },
  {
    name: "a page, br accepted",
    path: pathOf(list),
    headers: { "grpc-accept-encoding": "br" },
    body: envelope(page),
  },
  {
    name: "a gzip request",
    path: pathOf(list),
    headers: { "grpc-encoding": "gzip" },
    body: envelope(gzipSync(page), 1),
  },
  {
    name: "a client deadline",
    path: pathOf(list),
    headers: { "grpc-timeout": "5S" },
    body: envelope(page),
  },
  {
    name: "GetSubscriptions",
    path: pathOf(get),
    headers: { authorization: authHeader("clerk") },
    body: envelope(subscriptions),
  },
  { name: "UpdateSubscriptions (a write)", path: pathOf(update), body: envelope(change) },
  {
    name: "permission denied, with its ErrorInfo",
    path: pathOf(restore),
    body: envelope(restoreUnknown),
  },
  {
    name: "no credentials (a challenge)",
    path: pathOf(get),
    headers: { authorization: "" },
    body: envelope(subscriptions),
  },
  {
    name: "subscription ended (failed_precondition + ErrorInfo)",
    path: pathOf(list),
    body: envelope(ended),
  },
  { name: "a required field missing", path: pathOf(list), body: envelope(new Uint8Array()) },
  { name: "an empty body", path: pathOf(list), body: Buffer.alloc(0) },
  {
    name: "two messages for a unary method",
    path: pathOf(list),
    body: Buffer.concat([envelope(page), envelope(page)]),
  },
  {
    name: "a message over the size limit",
    path: pathOf(list),
    body: (() => {
      const b = Buffer.alloc(5 + 16);
      b.writeUInt32BE(MAX_REQUEST_BYTES + 1, 1);
      return b;
    })(),
  },
  {
    name: "a compressed flag without grpc-encoding",
    path: pathOf(list),
    body: envelope(gzipSync(page), 1),
  },
  {
    name: "grpc-encoding gzip over bytes that are not gzip",
    path: pathOf(list),
    headers: { "grpc-encoding": "gzip" },
    body: envelope(Buffer.from("not gzip"), 1),
  },
  {
    name: "an unparsable grpc-timeout",
    path: pathOf(list),
    headers: { "grpc-timeout": "5X" },
    body: envelope(page),
  },
  {
    name: "an unknown grpc-encoding",
    path: pathOf(list),
    headers: { "grpc-encoding": "zstd" },
    body: envelope(page),
  },
  {
    name: "application/grpc+json",
    path: pathOf(list),
    headers: { "content-type": "application/grpc+json" },
    body: envelope(Buffer.from(JSON.stringify({ boxId: BOX, counteragentGroupId: HEAD }))),
  },
];

describe("gRPC: the service answers as connect-es's gRPC handler does", () => {
  it.each(SAME)("$name", async (c) => {
    const ours = await grpcCall(h.baseUrl, c.path, c.headers ?? {}, c.body);
    const theirs = await grpcCall(reference.h2Url, c.path, c.headers ?? {}, c.body);
    expect(ours).toEqual(theirs);
    expect(ours.status).toBe(200);
  });

  it("the answers differ from each other where the cases do (the comparison can fail)", async () => {
    const a = await grpcCall(h.baseUrl, pathOf(list), {}, envelope(page));
    const b = await grpcCall(h.baseUrl, pathOf(list), {}, envelope(ended));
    expect(a).not.toEqual(b);
  });
});

describe("gRPC: where the service answers differently on purpose", () => {
  it("bytes that are not protobuf: invalid_argument (docs/api.md §4: malformed data), where connect-es says internal", async () => {
    const ours = await grpcCall(h.baseUrl, pathOf(list), {}, envelope(garbage));
    const theirs = await grpcCall(reference.h2Url, pathOf(list), {}, envelope(garbage));
    expect(ours).toMatchObject({
      grpcStatus: "3",
      grpcMessage:
        "the request is not a valid protobuf docflow.api.v1.GetCounteragentsFromGroupRequest",
    });
    expect(theirs).toMatchObject({ grpcStatus: "13" });
  });

  it("bytes that are not protobuf and no credentials: unauthenticated first (the order of checks), where connect-es never gets to them", async () => {
    const ours = await grpcCall(h.baseUrl, pathOf(list), { authorization: "" }, envelope(garbage));
    const theirs = await grpcCall(
      reference.h2Url,
      pathOf(list),
      { authorization: "" },
      envelope(garbage),
    );
    expect(ours).toMatchObject({ grpcStatus: "16" });
    expect(theirs).toMatchObject({ grpcStatus: "13" });
  });

  it("a body cut mid-message: both invalid_argument, the service says how many bytes came", async () => {
    const cut = envelope(page).subarray(0, 8);
    const ours = await grpcCall(h.baseUrl, pathOf(list), {}, cut);
    const theirs = await grpcCall(reference.h2Url, pathOf(list), {}, cut);
    expect(ours.grpcStatus).toBe("3");
    expect(theirs.grpcStatus).toBe("3");
    expect(ours.grpcMessage).toMatch(
      /^protocol error: promised \d+ bytes in enveloped message, got 3 bytes$/,
    );
  });
});

// ---------------------------------------------------------------- Connect

interface ConnectAnswer {
  readonly status: number | undefined;
  readonly contentType: string | undefined;
  readonly challenge: unknown;
  readonly body: unknown;
}

function connectCall(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
  method = "POST",
): Promise<ConnectAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${baseUrl}${path}`,
      {
        method,
        agent: false,
        headers: {
          "content-type": "application/proto",
          "connect-protocol-version": "1",
          authorization: admin,
          "content-length": body.length,
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          let raw = Buffer.concat(chunks);
          const coding = res.headers["content-encoding"];
          if (coding === "gzip") raw = gunzipSync(raw);
          if (coding === "br") raw = brotliDecompressSync(raw);
          const type = res.headers["content-type"]?.split(";")[0];
          resolve({
            status: res.statusCode,
            contentType: type,
            challenge: res.headers["www-authenticate"],
            body:
              type === "application/json"
                ? JSON.parse(raw.toString("utf8") || "null")
                : raw.toString("hex"),
          });
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const CONNECT_SAME: readonly Case[] = [
  { name: "a page", path: pathOf(list), body: Buffer.from(page) },
  {
    name: "a page, gzip accepted",
    path: pathOf(list),
    headers: { "accept-encoding": "gzip" },
    body: Buffer.from(page),
  },
  {
    name: "a page, br accepted",
    path: pathOf(list),
    headers: { "accept-encoding": "br" },
    body: Buffer.from(page),
  },
  {
    name: "a gzip request body",
    path: pathOf(list),
    headers: { "content-encoding": "gzip" },
    body: gzipSync(page),
  },
  {
    name: "a client deadline",
    path: pathOf(list),
    headers: { "connect-timeout-ms": "5000" },
    body: Buffer.from(page),
  },
  { name: "UpdateSubscriptions (a write)", path: pathOf(update), body: Buffer.from(change) },
  {
    name: "permission denied (403, JSON error with details)",
    path: pathOf(restore),
    body: Buffer.from(restoreUnknown),
  },
  {
    name: "no credentials (401, WWW-Authenticate)",
    path: pathOf(get),
    headers: { authorization: "" },
    body: Buffer.from(subscriptions),
  },
  { name: "subscription ended", path: pathOf(list), body: Buffer.from(ended) },
  { name: "a required field missing", path: pathOf(list), body: Buffer.alloc(0) },
  {
    name: "JSON",
    path: pathOf(list),
    headers: { "content-type": "application/json" },
    body: Buffer.from(JSON.stringify({ boxId: BOX, counteragentGroupId: HEAD })),
  },
  {
    name: "an unparsable Connect-Timeout-Ms",
    path: pathOf(list),
    headers: { "connect-timeout-ms": "soon" },
    body: Buffer.from(page),
  },
  {
    name: "an unknown Content-Encoding",
    path: pathOf(list),
    headers: { "content-encoding": "zstd" },
    body: Buffer.from(page),
  },
  {
    name: "Content-Encoding gzip over bytes that are not gzip",
    path: pathOf(list),
    headers: { "content-encoding": "gzip" },
    body: Buffer.from("not gzip"),
  },
];

describe("Connect: the service answers as connect-es's Connect handler does", () => {
  it.each(CONNECT_SAME)("$name", async (c) => {
    const ours = await connectCall(h.baseUrl, c.path, c.headers ?? {}, c.body);
    const theirs = await connectCall(reference.h1Url, c.path, c.headers ?? {}, c.body);
    expect(ours).toEqual(theirs);
  });

  it("a Connect GET of a method without side effects", async () => {
    const query = `?connect=v1&encoding=proto&base64=1&message=${Buffer.from(page).toString("base64url")}`;
    const ours = await connectCall(
      h.baseUrl,
      pathOf(list) + query,
      { "content-type": "" },
      Buffer.alloc(0),
      "GET",
    );
    const theirs = await connectCall(
      reference.h1Url,
      pathOf(list) + query,
      { "content-type": "" },
      Buffer.alloc(0),
      "GET",
    );
    expect(ours).toEqual(theirs);
    expect(ours.status).toBe(200);
  });
});

describe("Connect: where the service answers differently on purpose", () => {
  it("bytes that are not protobuf: 400 invalid_argument, where connect-es says 500 internal", async () => {
    const ours = await connectCall(h.baseUrl, pathOf(list), {}, garbage);
    const theirs = await connectCall(reference.h1Url, pathOf(list), {}, garbage);
    expect(ours).toMatchObject({ status: 400, body: { code: "invalid_argument" } });
    expect(theirs).toMatchObject({ status: 500, body: { code: "internal" } });
  });

  it("a body over the size limit: resource_exhausted on both, the service without reading past the limit", async () => {
    const big = Buffer.alloc(MAX_REQUEST_BYTES + 10, 0x0a);
    const ours = await connectCall(h.baseUrl, pathOf(update), {}, big);
    const theirs = await connectCall(reference.h1Url, pathOf(update), {}, big);
    expect(ours).toMatchObject({ status: 429, body: { code: "resource_exhausted" } });
    expect(theirs).toMatchObject({ status: 429, body: { code: "resource_exhausted" } });
  });
});
