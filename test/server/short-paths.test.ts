/**
 * gRPC unary calls on HTTP/2 and binary Connect unary calls take short paths
 * (src/rpc/grpc-unary.ts, connect-unary.ts) that must answer exactly as
 * connect-es's handlers do: the same request, sent raw to a server with the
 * short paths and to one without them, gets the same status, headers, body
 * bytes and trailers — successes (compressed or not), domain errors with
 * their details, and every protocol edge, which a short path hands to the
 * router with the bytes it already read.
 */
import http from "node:http";
import http2 from "node:http2";
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import {
  compressionGzip,
  createConnectTransport,
  createGrpcTransport,
} from "@connectrpc/connect-node";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { CounteragentService } from "../../gen/docflow/api/v1/counteragents_pb";
import { DocumentService } from "../../gen/docflow/api/v1/documents_pb";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import { loadFixture } from "../../src/fixtures/load";
import { MAX_REQUEST_BYTES } from "../../src/rpc/router";
import { authHeader, BOX, ENDED_BOX, fullPageFixture, HEAD, USERS } from "../support/fixture";
import { type Harness, TEST_TIMEOUTS, useHarness } from "../support/harness";

/** How often a short path served a call itself, and how often it handed one to the router. */
const taken = vi.hoisted(() => ({ served: 0, toRouter: 0 }));
/** A short path whose `serve` counts what it did (the same shape for gRPC and Connect). */
type Serve = (
  req: never,
  res: never,
  call: never,
  values: never,
  toRouter: (body?: AsyncIterable<Uint8Array>) => Promise<void>,
) => Promise<void>;
const counting = vi.hoisted(
  () =>
    <T extends { serve: Serve }>(real: T): T => ({
      ...real,
      serve: ((req, res, call, values, toRouter) => {
        let handedOver = false;
        return real
          .serve(req, res, call, values, (body) => {
            handedOver = true;
            taken.toRouter++;
            return toRouter(body);
          })
          .finally(() => {
            if (!handedOver) taken.served++;
          });
      }) as Serve as T["serve"],
    }),
);
vi.mock("../../src/rpc/connect-unary", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/rpc/connect-unary")>();
  return {
    ...original,
    createConnectUnary: (...args: Parameters<typeof original.createConnectUnary>) =>
      counting(original.createConnectUnary(...args)),
  };
});
vi.mock("../../src/rpc/grpc-unary", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/rpc/grpc-unary")>();
  return {
    ...original,
    createGrpcUnary: (...args: Parameters<typeof original.createGrpcUnary>) =>
      counting(original.createGrpcUnary(...args)),
  };
});

const short = useHarness(fullPageFixture);
const router = useHarness(fullPageFixture, TEST_TIMEOUTS, { shortPaths: false });
beforeEach(async () => {
  await Promise.all([
    loadFixture(short.db, fullPageFixture()),
    loadFixture(router.db, fullPageFixture()),
  ]);
  taken.served = 0;
  taken.toRouter = 0;
});

const envelope = (message: Uint8Array, flags = 0) => {
  const frame = Buffer.alloc(5 + message.length);
  frame[0] = flags;
  frame.writeUInt32BE(message.length, 1);
  Buffer.from(message).copy(frame, 5);
  return frame;
};
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
  create(restore.input, { boxId: BOX, messageId: "no-such-message" }),
);

interface Case {
  readonly name: string;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** The body in two DATA frames, some time apart. */
  readonly split?: boolean;
}

const admin = authHeader("admin");
const grpc = (headers: Record<string, string> = {}) => ({
  "content-type": "application/grpc",
  te: "trailers",
  authorization: admin,
  ...headers,
});
const overSize = Buffer.alloc(5 + 16);
overSize.writeUInt32BE(MAX_REQUEST_BYTES + 1, 1);

/** Requests the short path answers itself. */
const SERVED: readonly Case[] = [
  { name: "a page, uncompressed", path: pathOf(list), body: envelope(page) },
  {
    name: "a page, gzip accepted (compressed answer)",
    path: pathOf(list),
    headers: { "grpc-accept-encoding": "identity,deflate,gzip" },
    body: envelope(page),
  },
  {
    name: "a page, br accepted, application/grpc+proto",
    path: pathOf(list),
    headers: { "content-type": "application/grpc+proto", "grpc-accept-encoding": "br" },
    body: envelope(page),
  },
  {
    name: "a gzip-compressed request (and so a gzip answer)",
    path: pathOf(list),
    headers: { "grpc-encoding": "gzip" },
    body: envelope(gzipSync(page), 1),
  },
  { name: "the body in two frames", path: pathOf(list), body: envelope(page), split: true },
  {
    name: "a client deadline",
    path: pathOf(list),
    headers: { "grpc-timeout": "5S" },
    body: envelope(page),
  },
  {
    name: "GetSubscriptions (a small answer)",
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
    name: "no credentials (unauthenticated, WWW-Authenticate)",
    path: pathOf(get),
    headers: { authorization: "" },
    body: envelope(subscriptions),
  },
  {
    name: "subscription ended (failed_precondition + ErrorInfo)",
    path: pathOf(list),
    body: envelope(ended),
  },
  {
    name: "a required field missing",
    path: pathOf(list),
    body: envelope(new Uint8Array()),
  },
];

/** Requests the short path hands to the router, after reading what it needed to decide. */
const HANDED_OVER: readonly Case[] = [
  { name: "an empty body", path: pathOf(list), body: Buffer.alloc(0) },
  {
    name: "two messages for a unary method",
    path: pathOf(list),
    body: Buffer.concat([envelope(page), envelope(page)]),
  },
  {
    name: "bytes that are not protobuf",
    path: pathOf(list),
    body: envelope(Buffer.from([0xff, 0xff, 0xff])),
  },
  {
    name: "bytes that are not protobuf, without credentials",
    path: pathOf(list),
    headers: { authorization: "" },
    body: envelope(Buffer.from([0xff, 0xff, 0xff])),
  },
  { name: "a body cut mid-message", path: pathOf(list), body: envelope(page).subarray(0, 8) },
  { name: "a message over the size limit", path: pathOf(list), body: overSize },
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
];

/** Requests the short path does not take at all. */
const NOT_TAKEN: readonly Case[] = [
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

interface Answer {
  readonly headers: Record<string, unknown>;
  readonly trailers: Record<string, unknown> | undefined;
  readonly body: string;
  readonly rstCode: number | undefined;
}

async function send(h: Harness, c: Case): Promise<Answer> {
  const session = http2.connect(h.baseUrl);
  try {
    return await new Promise<Answer>((resolve, reject) => {
      const headers = Object.fromEntries(
        Object.entries(grpc(c.headers)).filter(([, value]) => value !== ""),
      );
      const req = session.request({ ":method": "POST", ":path": c.path, ...headers });
      let answerHeaders: Record<string, unknown> = {};
      let trailers: Record<string, unknown> | undefined;
      const chunks: Buffer[] = [];
      req.on("response", (received) => {
        const { date: _date, "x-request-id": _id, ...rest } = received;
        answerHeaders = rest;
      });
      req.on("trailers", (received) => {
        trailers = { ...received };
      });
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("error", reject);
      req.on("close", () =>
        resolve({
          headers: answerHeaders,
          trailers,
          body: Buffer.concat(chunks).toString("hex"),
          rstCode: req.rstCode,
        }),
      );
      if (c.split) {
        req.write(c.body.subarray(0, 3));
        setTimeout(() => req.end(c.body.subarray(3)), 20);
      } else {
        req.end(c.body);
      }
    });
  } finally {
    session.close();
  }
}

describe("the short path answers byte for byte as connect-es's gRPC handler", () => {
  it.each(SERVED)("served by the short path: $name", async (c) => {
    const viaShort = await send(short, c);
    expect(taken).toEqual({ served: 1, toRouter: 0 });
    const viaRouter = await send(router, c);
    // The reference server took no short path: the counts did not move.
    expect(taken).toEqual({ served: 1, toRouter: 0 });
    expect(viaShort).toEqual(viaRouter);
    expect(viaShort.headers[":status"]).toBe(200);
    expect(viaShort.trailers?.["grpc-status"]).toBeDefined();
  });

  it.each(HANDED_OVER)("handed to the router: $name", async (c) => {
    const viaShort = await send(short, c);
    expect(taken).toEqual({ served: 0, toRouter: 1 });
    const viaRouter = await send(router, c);
    expect(taken).toEqual({ served: 0, toRouter: 1 });
    expect(viaShort).toEqual(viaRouter);
    expect(viaShort.trailers?.["grpc-status"]).not.toBe("0");
  });

  it.each(NOT_TAKEN)("not taken: $name", async (c) => {
    const viaShort = await send(short, c);
    expect(taken).toEqual({ served: 0, toRouter: 0 });
    expect(viaShort).toEqual(await send(router, c));
    expect(taken).toEqual({ served: 0, toRouter: 0 });
  });

  it("a page compressed with gzip is the page, and smaller", async () => {
    const plain = await send(short, SERVED[0] as Case);
    const gzip = await send(short, SERVED[1] as Case);
    expect(gzip.headers["grpc-encoding"]).toBe("gzip");
    expect(gzip.body.slice(0, 2)).toBe("01");
    expect(gzip.body.length).toBeLessThan(plain.body.length / 4);
    expect(plain.trailers?.["grpc-status"]).toBe("0");
  });

  it("a write through the short path is stored", async () => {
    await send(short, SERVED.find((c) => c.path === pathOf(update)) as Case);
    const clerk = await short.db
      .collection("employees")
      .findOne({ boxId: BOX, userId: USERS.clerk.userId });
    expect(clerk?.subscriptions?.News).toBe(false);
  });

  it("a client that resets its stream mid-body gets nothing, nothing fails, the next call is served", async () => {
    const session = http2.connect(short.baseUrl);
    try {
      const req = session.request({ ":method": "POST", ":path": pathOf(list), ...grpc() });
      req.write(envelope(page).subarray(0, 10));
      await new Promise((resolve) => setTimeout(resolve, 50));
      req.close(http2.constants.NGHTTP2_CANCEL);
      await new Promise((resolve) => req.once("close", resolve));
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      session.close();
    }
    // Node ends a reset stream's request before saying it was aborted: the router gets it.
    expect(taken).toEqual({ served: 0, toRouter: 1 });
    const lines = short.logs.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.filter((l) => l.level === "error")).toEqual([]);
    expect(lines.at(-1)).toMatchObject({ msg: "request", protocol: "grpc" });
    const next = await send(short, SERVED[0] as Case);
    expect(next.trailers?.["grpc-status"]).toBe("0");
  });

  it("a real gRPC client (connect-node, gzip both ways) gets its page through the short path", async () => {
    const client = createClient(
      CounteragentService,
      createGrpcTransport({
        baseUrl: short.baseUrl,
        sendCompression: compressionGzip,
        acceptCompression: [compressionGzip],
        compressMinBytes: 0,
      }),
    );
    const answer = await client.getCounteragentsFromGroup(
      { boxId: BOX, counteragentGroupId: HEAD },
      { headers: { authorization: admin }, timeoutMs: 5_000 },
    );
    expect(answer.CounteragentBoxId).toHaveLength(60);
    expect(answer.TotalCount).toBe(60);
    expect(taken.served).toBe(1);
  });
});

// ---------------------------------------------------------------- Connect unary, binary

interface ConnectCase {
  readonly name: string;
  readonly path: string;
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** Sent chunked, without Content-Length. */
  readonly chunked?: boolean;
}

const connect = (headers: Record<string, string> = {}) => ({
  "content-type": "application/proto",
  "connect-protocol-version": "1",
  authorization: admin,
  ...headers,
});

const CONNECT_SERVED: readonly ConnectCase[] = [
  { name: "a page", path: pathOf(list), body: Buffer.from(page) },
  {
    name: "a page, gzip accepted (compressed answer)",
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
  {
    name: "a chunked body",
    path: pathOf(get),
    headers: { authorization: authHeader("clerk") },
    body: Buffer.from(subscriptions),
    chunked: true,
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
];

const CONNECT_HANDED_OVER: readonly ConnectCase[] = [
  { name: "bytes that are not protobuf", path: pathOf(list), body: Buffer.from([0xff, 0xff]) },
  {
    name: "a chunked body over the size limit",
    path: pathOf(update),
    body: Buffer.alloc(MAX_REQUEST_BYTES + 10, 0x0a),
    chunked: true,
  },
  {
    name: "Content-Encoding gzip over bytes that are not gzip",
    path: pathOf(list),
    headers: { "content-encoding": "gzip" },
    body: Buffer.from("not gzip"),
  },
];

const CONNECT_NOT_TAKEN: readonly ConnectCase[] = [
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
    name: "a Content-Length over the size limit",
    path: pathOf(update),
    body: Buffer.alloc(MAX_REQUEST_BYTES + 10, 0x0a),
  },
];

interface ConnectAnswer {
  readonly status: number | undefined;
  readonly headers: Record<string, unknown>;
  readonly body: string;
}

function sendConnect(h: Harness, c: ConnectCase): Promise<ConnectAnswer> {
  return new Promise((resolve, reject) => {
    const headers = Object.fromEntries(
      Object.entries(connect(c.headers)).filter(([, value]) => value !== ""),
    );
    const req = http.request(
      `${h.baseUrl}${c.path}`,
      {
        method: c.method ?? "POST",
        agent: false,
        headers: c.chunked
          ? { ...headers, "transfer-encoding": "chunked" }
          : { ...headers, "content-length": c.body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const {
            date: _date,
            "x-request-id": _id,
            connection: _connection,
            "keep-alive": _keepAlive,
            ...rest
          } = res.headers;
          resolve({
            status: res.statusCode,
            headers: rest,
            body: Buffer.concat(chunks).toString("hex"),
          });
        });
      },
    );
    req.on("error", reject);
    req.end(c.body);
  });
}

describe("the Connect short path answers byte for byte as connect-es's Connect handler", () => {
  it.each(CONNECT_SERVED)("served by the short path: $name", async (c) => {
    const viaShort = await sendConnect(short, c);
    expect(taken).toEqual({ served: 1, toRouter: 0 });
    expect(viaShort).toEqual(await sendConnect(router, c));
    expect(taken).toEqual({ served: 1, toRouter: 0 });
  });

  it.each(CONNECT_HANDED_OVER)("handed to the router: $name", async (c) => {
    const viaShort = await sendConnect(short, c);
    expect(taken).toEqual({ served: 0, toRouter: 1 });
    expect(viaShort).toEqual(await sendConnect(router, c));
    expect(taken).toEqual({ served: 0, toRouter: 1 });
    expect(viaShort.status).not.toBe(200);
  });

  it.each(CONNECT_NOT_TAKEN)("not taken: $name", async (c) => {
    const viaShort = await sendConnect(short, c);
    expect(taken).toEqual({ served: 0, toRouter: 0 });
    expect(viaShort).toEqual(await sendConnect(router, c));
    expect(taken).toEqual({ served: 0, toRouter: 0 });
  });

  it("a page is compressed when accepted, an error is JSON with its HTTP status", async () => {
    const gzip = await sendConnect(short, CONNECT_SERVED[1] as ConnectCase);
    expect(gzip).toMatchObject({ status: 200, headers: { "content-encoding": "gzip" } });
    const denied = await sendConnect(short, CONNECT_SERVED[7] as ConnectCase);
    expect(denied.status).toBe(403);
    expect(denied.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(Buffer.from(denied.body, "hex").toString("utf8"))).toMatchObject({
      code: "permission_denied",
    });
  });

  it("a real Connect client (binary, over HTTP/1.1 and HTTP/2) gets its page through the short path", async () => {
    for (const httpVersion of ["1.1", "2"] as const) {
      const client = createClient(
        CounteragentService,
        createConnectTransport({ baseUrl: short.baseUrl, httpVersion, useBinaryFormat: true }),
      );
      const answer = await client.getCounteragentsFromGroup(
        { boxId: BOX, counteragentGroupId: HEAD },
        { headers: { authorization: admin }, timeoutMs: 5_000 },
      );
      expect(answer.CounteragentBoxId).toHaveLength(60);
    }
    expect(taken).toEqual({ served: 2, toRouter: 0 });
  });
});
