/** Compression on every protocol (docs/api.md §3): requests and answers, RPC and legacy, and the docs with ETags. */
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from "node:zlib";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import {
  compressionGzip,
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { beforeEach, describe, expect, it } from "vitest";
import { CounteragentService } from "../../gen/docflow/api/v1/counteragents_pb";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import { CounteragentFromGroupResponseSchema } from "../../gen/docflow/legacy/counteragents_pb";
import {
  SubscriptionSchema,
  SubscriptionsToUpdateSchema,
} from "../../gen/docflow/legacy/subscriptions_pb";
import { loadFixture } from "../../src/fixtures/load";
import { MAX_REQUEST_BYTES } from "../../src/wire/body";
import { authHeader, BOX, fullPageFixture, HEAD, USERS } from "../support/fixture";
import { legacy, useHarness } from "../support/harness";
import { envelope, envelopes, h2Request } from "../support/wire";

const h = useHarness(fullPageFixture);
beforeEach(async () => {
  await loadFixture(h.db, fullPageFixture());
});

const auth = authHeader("admin");
const page = create(CounteragentService.method.getCounteragentsFromGroup.input, {
  boxId: BOX,
  counteragentGroupId: HEAD,
});
const stored = async () =>
  (await h.db.collection("employees").findOne({ boxId: BOX, userId: USERS.clerk.userId }))
    ?.subscriptions;

const update = SubscriptionService.method.updateSubscriptions;
const updateRpcPath = `/${update.parent.typeName}/${update.name}`;
/** Turns the clerk's ChatMessages off: an answer proves nothing, the stored change does. */
const chatOff = create(update.input, {
  boxId: BOX,
  userId: USERS.clerk.userId,
  subscriptions: { Subscriptions: [{ Id: "ChatMessages", IsSubscribed: false }] },
});
const chatOffBinary = toBinary(update.input, chatOff);
const chatOffJson = Buffer.from(
  JSON.stringify({
    boxId: BOX,
    userId: USERS.clerk.userId,
    subscriptions: { Subscriptions: [{ Id: "ChatMessages", IsSubscribed: false }] },
  }),
);
const CODINGS = {
  gzip: (bytes: Uint8Array) => gzipSync(bytes),
  br: (bytes: Uint8Array) => brotliCompressSync(bytes),
} as const;

/**
 * Each protocol with a request body compressed by hand (so it is compressed,
 * whatever its size): the status it answered, read from the wire.
 */
const compressedCalls: Record<
  string,
  (coding: keyof typeof CODINGS) => Promise<{ ok: boolean; detail: string }>
> = {
  "Connect JSON": async (coding) => {
    const res = await legacy(h, {
      method: "POST",
      path: updateRpcPath,
      headers: {
        "content-type": "application/json",
        "content-encoding": coding,
        authorization: auth,
      },
      body: CODINGS[coding](chatOffJson),
    });
    return { ok: res.status === 200, detail: `${res.status} ${res.text}` };
  },
  "Connect binary": async (coding) => {
    const res = await legacy(h, {
      method: "POST",
      path: updateRpcPath,
      headers: {
        "content-type": "application/proto",
        "content-encoding": coding,
        authorization: auth,
      },
      body: CODINGS[coding](chatOffBinary),
    });
    return { ok: res.status === 200, detail: `${res.status} ${res.text}` };
  },
  "gRPC-Web": async (coding) => {
    const res = await legacy(h, {
      method: "POST",
      path: updateRpcPath,
      headers: {
        "content-type": "application/grpc-web+proto",
        "grpc-encoding": coding,
        authorization: auth,
      },
      body: envelope(CODINGS[coding](chatOffBinary), 1),
    });
    const trailer = envelopes(res.body).find((e) => e.flags & 0x80);
    const status = /grpc-status:\s*(\d+)/.exec(trailer?.data.toString("latin1") ?? "")?.[1];
    return { ok: res.status === 200 && status === "0", detail: `${res.status} ${status}` };
  },
  gRPC: async (coding) => {
    const res = await h2Request(
      h.baseUrl,
      {
        ":method": "POST",
        ":path": updateRpcPath,
        "content-type": "application/grpc",
        te: "trailers",
        "grpc-encoding": coding,
        authorization: auth,
      },
      envelope(CODINGS[coding](chatOffBinary), 1),
    );
    const status = res.trailers?.["grpc-status"] ?? res.headers["grpc-status"];
    return { ok: status === "0", detail: `${status} ${res.trailers?.["grpc-message"] ?? ""}` };
  },
};

describe("RPC protocols: compressed request bodies (gzip and br) are decompressed", () => {
  for (const [protocol, send] of Object.entries(compressedCalls)) {
    it.each(Object.keys(CODINGS) as (keyof typeof CODINGS)[])(
      `${protocol}, %s: the change is stored`,
      async (coding) => {
        expect(await stored()).toEqual({ News: false });
        const answer = await send(coding);
        expect(answer.ok, answer.detail).toBe(true);
        expect(await stored()).toEqual({ News: false, ChatMessages: false });
      },
    );
  }
});

describe("RPC protocols: clients that compress their requests", () => {
  // compressMinBytes 0: connect-node compresses only from 1 KiB by default,
  // and these requests are about 80 bytes.
  it.each([
    [
      "Connect",
      () =>
        createConnectTransport({
          baseUrl: h.baseUrl,
          httpVersion: "1.1",
          sendCompression: compressionGzip,
          compressMinBytes: 0,
        }),
    ],
    [
      "gRPC-Web",
      () =>
        createGrpcWebTransport({
          baseUrl: h.baseUrl,
          httpVersion: "1.1",
          sendCompression: compressionGzip,
          compressMinBytes: 0,
        }),
    ],
    [
      "gRPC (connect-node)",
      () =>
        createGrpcTransport({
          baseUrl: h.baseUrl,
          sendCompression: compressionGzip,
          compressMinBytes: 0,
        }),
    ],
  ])("%s with gzip", async (_name, transport) => {
    const client = createClient(SubscriptionService, transport());
    await client.updateSubscriptions(chatOff, { headers: { authorization: auth } });
    expect(await stored()).toEqual({ News: false, ChatMessages: false });
  });

  it("@grpc/grpc-js with default compression gzip", async () => {
    const client = new grpc.Client(`127.0.0.1:${h.port}`, grpc.credentials.createInsecure(), {
      "grpc.default_compression_algorithm": 2,
    });
    const metadata = new grpc.Metadata();
    metadata.set("authorization", auth);
    const method = CounteragentService.method.getCounteragentsFromGroup;
    const res = await new Promise<Buffer>((resolve, reject) =>
      client.makeUnaryRequest(
        `/${method.parent.typeName}/${method.name}`,
        (m: typeof page) => Buffer.from(toBinary(method.input, m)),
        (b: Buffer) => b,
        page,
        metadata,
        (e, r) => (e || !r ? reject(e) : resolve(r)),
      ),
    );
    client.close();
    expect(fromBinary(CounteragentFromGroupResponseSchema, res).CounteragentBoxId).toHaveLength(60);
  });
});

describe("RPC protocols: answers compressed when asked", () => {
  it("a Connect answer over 1 KiB is gzip-compressed when Accept-Encoding asks; a small one is not", async () => {
    const path = `/${CounteragentService.typeName}/GetCounteragentsFromGroup`;
    const big = await fetch(`${h.baseUrl}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "accept-encoding": "gzip",
        authorization: auth,
      },
      body: JSON.stringify({ boxId: BOX, counteragentGroupId: HEAD }),
    });
    expect(big.status).toBe(200);
    expect(big.headers.get("content-encoding")).toBe("gzip");
    expect(((await big.json()) as { CounteragentBoxId: string[] }).CounteragentBoxId).toHaveLength(
      60,
    );
    const small = await fetch(`${h.baseUrl}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "accept-encoding": "gzip",
        authorization: auth,
      },
      body: JSON.stringify({ boxId: BOX, counteragentGroupId: HEAD, count: 1 }),
    });
    expect(small.headers.get("content-encoding")).toBeNull();
  });
});

const updatePath = `/UpdateSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`;
const proto = toBinary(
  SubscriptionsToUpdateSchema,
  create(SubscriptionsToUpdateSchema, {
    Subscriptions: [create(SubscriptionSchema, { Id: "ChatMessages", IsSubscribed: false })],
  }),
);

describe("legacy paths: Content-Encoding of the request", () => {
  it.each([
    ["gzip", gzipSync(proto)],
    ["br", brotliCompressSync(proto)],
  ])("%s bodies are accepted", async (coding, body) => {
    const res = await legacy(h, {
      method: "POST",
      path: updatePath,
      headers: { authorization: auth, "content-encoding": coding },
      body,
    });
    expect(res.status).toBe(200);
    expect(await stored()).toEqual({ News: false, ChatMessages: false });
  });

  it.each([
    ["an unsupported coding", "compress", Buffer.from(proto), 415, "Http.UnsupportedMediaType"],
    ["a malformed gzip body", "gzip", Buffer.from("not gzip at all"), 400, "Http.BadRequest"],
    [
      "a gzip body that expands past the limit (a zip bomb)",
      "gzip",
      gzipSync(Buffer.alloc(MAX_REQUEST_BYTES + 1, 0x0a)),
      413,
      "Http.PayloadTooLarge",
    ],
  ])("%s: %s → %i, nothing changes", async (_name, coding, body, status, errorCode) => {
    const res = await legacy(h, {
      method: "POST",
      path: updatePath,
      headers: { authorization: auth, "content-encoding": coding },
      body,
    });
    expect(res.status).toBe(status);
    expect(res.headers["x-service-errorcode"]).toBe(errorCode);
    expect(await stored()).toEqual({ News: false });
  });

  it("a bad encoding without credentials is still a 401 first", async () => {
    const res = await legacy(h, {
      method: "POST",
      path: updatePath,
      headers: { "content-encoding": "compress" },
      body: proto,
    });
    expect(res.status).toBe(401);
  });
});

describe("legacy paths: compressed answers", () => {
  const listing = `/GetCounteragentsFromGroup?boxId=${BOX}&counteragentGroupId=${HEAD}`;

  it("br when Accept-Encoding prefers it, for an answer over 1 KiB", async () => {
    const res = await legacy(h, {
      method: "GET",
      path: listing,
      headers: { authorization: auth, "accept-encoding": "gzip;q=0.5, br" },
    });
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBe("br");
    expect(res.headers.vary).toBe("Accept, Accept-Encoding");
    const message = fromBinary(CounteragentFromGroupResponseSchema, brotliDecompressSync(res.body));
    expect(message.CounteragentBoxId).toHaveLength(60);
  });

  it("nothing when the client did not ask (existing SDKs)", async () => {
    const res = await legacy(h, { method: "GET", path: listing, headers: { authorization: auth } });
    expect(res.headers["content-encoding"]).toBeUndefined();
    expect(
      fromBinary(CounteragentFromGroupResponseSchema, res.body).CounteragentBoxId,
    ).toHaveLength(60);
  });
});

describe("docs: compressed once, ETag, 304", () => {
  it.each(["/openapi.json", "/docs/swagger-ui-bundle.js"])("%s", async (path) => {
    const first = await legacy(h, { method: "GET", path, headers: { "accept-encoding": "gzip" } });
    expect(first.status).toBe(200);
    expect(first.headers["content-encoding"]).toBe("gzip");
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^".+-gzip"$/);
    expect(gunzipSync(first.body).length).toBeGreaterThan(first.body.length);
    expect(first.headers["cache-control"]).toBeDefined();
    const again = await legacy(h, {
      method: "GET",
      path,
      headers: { "accept-encoding": "gzip", "if-none-match": etag },
    });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    const plain = await legacy(h, { method: "GET", path });
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.body.equals(gunzipSync(first.body))).toBe(true);
  });
});
