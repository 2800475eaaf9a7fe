/** docs/api.md §4: malformed data is a 400 / invalid_argument on every protocol; over the size limit is 413 / resource_exhausted. */
import http from "node:http";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import { beforeEach, describe, expect, it } from "vitest";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import {
  SubscriptionSchema,
  SubscriptionsToUpdateSchema,
} from "../../gen/docflow/legacy/subscriptions_pb";
import { loadFixture } from "../../src/fixtures/load";
import { MAX_REQUEST_BYTES } from "../../src/wire/body";
import { authHeader, BOX, baseFixture, USERS } from "../support/fixture";
import { callRpc, legacy, RPC_PROTOCOLS, useHarness } from "../support/harness";

const h = useHarness();
beforeEach(async () => {
  await loadFixture(h.db, baseFixture());
});

const method = SubscriptionService.method.updateSubscriptions;
const rpcPath = `/${method.parent.typeName}/${method.name}`;
const auth = authHeader("admin");
const stored = async () =>
  (await h.db.collection("employees").findOne({ boxId: BOX, userId: USERS.clerk.userId }))
    ?.subscriptions;

/** Sends raw bytes as one gRPC message, with @grpc/grpc-js. */
function grpcRaw(payload: Buffer): Promise<grpc.ServiceError | null> {
  const client = new grpc.Client(`127.0.0.1:${h.port}`, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  metadata.set("authorization", auth);
  return new Promise((resolve) =>
    client.makeUnaryRequest(
      rpcPath,
      (b: Buffer) => b,
      (b: Buffer) => b,
      payload,
      metadata,
      (error) => {
        client.close();
        resolve(error);
      },
    ),
  );
}

/** One gRPC-Web request with a raw payload; returns the grpc-status in the trailer frame. */
async function grpcWebRaw(payload: Buffer): Promise<string | undefined> {
  const frame = Buffer.alloc(5 + payload.length);
  frame.writeUInt32BE(payload.length, 1);
  payload.copy(frame, 5);
  const res = await legacy(h, {
    method: "POST",
    path: rpcPath,
    headers: { "content-type": "application/grpc-web+proto", authorization: auth },
    body: frame,
  });
  return (
    /grpc-status:\s*(\d+)/.exec(res.body.toString("latin1"))?.[1] ??
    (res.headers["grpc-status"] as string | undefined)
  );
}

/**
 * Each malformed body is a valid request that turns News on (the clerk has
 * News off), followed by bytes that break it: a lenient decoder that kept the
 * valid prefix would change storage. The control test sends the valid part
 * alone, which does change it.
 */
const turnNewsOn = create(SubscriptionsToUpdateSchema, {
  Subscriptions: [create(SubscriptionSchema, { Id: "News", IsSubscribed: true })],
});
const rpcValid = Buffer.from(
  toBinary(
    method.input,
    create(method.input, { boxId: BOX, userId: USERS.clerk.userId, subscriptions: turnNewsOn }),
  ),
);
/** A field tag for a length-delimited field 1, and then nothing: the body ends mid-field. */
const CUT = Buffer.from([0x0a]);
const legacyValid = Buffer.from(toBinary(SubscriptionsToUpdateSchema, turnNewsOn));
const connectJsonValid = JSON.stringify({
  boxId: BOX,
  userId: USERS.clerk.userId,
  subscriptions: { Subscriptions: [{ Id: "News", IsSubscribed: true }] },
});
const legacyJsonValid = JSON.stringify({ Subscriptions: [{ Id: "News", IsSubscribed: "true" }] });
const legacyPath = `/UpdateSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`;

/** Each protocol: how to send a body, and whether the answer says "malformed". */
const senders: Record<
  string,
  { valid: Buffer | string; broken: Buffer | string; send(body: Buffer | string): Promise<boolean> }
> = {
  "Connect binary": {
    valid: rpcValid,
    broken: Buffer.concat([rpcValid, CUT]),
    async send(body) {
      const res = await legacy(h, {
        method: "POST",
        path: rpcPath,
        headers: { "content-type": "application/proto", authorization: auth },
        body,
      });
      if (res.status === 200) return false;
      expect(res.status).toBe(400);
      expect(JSON.parse(res.text)).toEqual({
        code: "invalid_argument",
        message: "the request is not a valid protobuf docflow.api.v1.UpdateSubscriptionsRequest",
      });
      return true;
    },
  },
  "Connect JSON": {
    valid: connectJsonValid,
    // The closing brace is missing.
    broken: connectJsonValid.slice(0, -1),
    async send(body) {
      const res = await legacy(h, {
        method: "POST",
        path: rpcPath,
        headers: { "content-type": "application/json", authorization: auth },
        body,
      });
      if (res.status === 200) return false;
      expect(res.status).toBe(400);
      expect(JSON.parse(res.text).code).toBe("invalid_argument");
      return true;
    },
  },
  gRPC: {
    valid: rpcValid,
    broken: Buffer.concat([rpcValid, CUT]),
    async send(body) {
      const error = await grpcRaw(Buffer.from(body));
      if (error === null) return false;
      expect(error.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(error.details).toBe(
        "the request is not a valid protobuf docflow.api.v1.UpdateSubscriptionsRequest",
      );
      return true;
    },
  },
  "gRPC-Web": {
    valid: rpcValid,
    broken: Buffer.concat([rpcValid, CUT]),
    async send(body) {
      const status = await grpcWebRaw(Buffer.from(body));
      if (status === "0") return false;
      expect(status).toBe(String(Code.InvalidArgument));
      return true;
    },
  },
  "legacy protobuf": {
    valid: legacyValid,
    broken: Buffer.concat([legacyValid, CUT]),
    async send(body) {
      const res = await legacy(h, {
        method: "POST",
        path: legacyPath,
        headers: { authorization: auth },
        body,
      });
      if (res.status === 200) return false;
      expect(res.status).toBe(400);
      expect(res.headers["x-service-errorcode"]).toBe("Http.BadRequest");
      return true;
    },
  },
  "legacy JSON": {
    valid: legacyJsonValid,
    broken: legacyJsonValid.slice(0, -1),
    async send(body) {
      const res = await legacy(h, {
        method: "POST",
        path: legacyPath,
        headers: { authorization: auth, "content-type": "application/json" },
        body,
      });
      if (res.status === 200) return false;
      expect(res.status).toBe(400);
      expect(res.headers["x-service-errorcode"]).toBe("Http.BadRequest");
      return true;
    },
  },
};

describe("a malformed body is 400 / invalid_argument on every protocol, and nothing changes", () => {
  it.each(Object.keys(senders))("%s: refused, News still off", async (name) => {
    const sender = senders[name] as (typeof senders)[string];
    expect(await stored()).toEqual({ News: false });
    expect(await sender.send(sender.broken)).toBe(true);
    expect(await stored()).toEqual({ News: false });
  });

  it.each(Object.keys(senders))(
    "%s: the control, the valid part alone turns News on",
    async (name) => {
      const sender = senders[name] as (typeof senders)[string];
      expect(await sender.send(sender.valid)).toBe(false);
      expect(await stored()).toEqual({ News: true });
    },
  );
});

/** A SubscriptionsToUpdate whose encoding is exactly `size` bytes (one Subscription with a long unknown Id). */
function bodyOfSize(size: number): Uint8Array {
  let idLength = size - 10;
  for (;;) {
    const bytes = toBinary(
      SubscriptionsToUpdateSchema,
      create(SubscriptionsToUpdateSchema, {
        Subscriptions: [
          create(SubscriptionSchema, { Id: "x".repeat(idLength), IsSubscribed: true }),
        ],
      }),
    );
    if (bytes.length === size) return bytes;
    idLength += size - bytes.length;
  }
}

/** An UpdateSubscriptionsRequest whose encoding is exactly `size` bytes. */
function requestOfSize(size: number) {
  const head = toBinary(
    method.input,
    create(method.input, { boxId: BOX, userId: USERS.clerk.userId }),
  ).length;
  let inner = size - head - 4;
  for (;;) {
    const subscriptions = create(SubscriptionsToUpdateSchema, {
      Subscriptions: [create(SubscriptionSchema, { Id: "x".repeat(inner), IsSubscribed: true })],
    });
    const request = create(method.input, { boxId: BOX, userId: USERS.clerk.userId, subscriptions });
    const length = toBinary(method.input, request).length;
    if (length === size) return request;
    inner += size - length;
  }
}

describe("the size limit (1 MiB) on every protocol: exactly the limit passes, one byte more does not", () => {
  it.each(RPC_PROTOCOLS.filter((p) => p !== "connect-json"))("%s", async (protocol) => {
    const atLimit = await callRpc(h, protocol, method, requestOfSize(MAX_REQUEST_BYTES), auth);
    // Past the size check: the domain refuses the unknown Id.
    expect(atLimit).toMatchObject({ ok: false, code: Code.InvalidArgument });
    const over = await callRpc(h, protocol, method, requestOfSize(MAX_REQUEST_BYTES + 1), auth);
    expect(over).toMatchObject({ ok: false, code: Code.ResourceExhausted });
  });

  it("connect-json (the limit counts the JSON bytes)", async () => {
    const json = (size: number) => {
      const text = JSON.stringify({
        boxId: BOX,
        userId: USERS.clerk.userId,
        subscriptions: { Subscriptions: [{ Id: "x", IsSubscribed: true }] },
      });
      return text.replace('"x"', `"${"x".repeat(size + 1 - text.length)}"`);
    };
    const post = (body: string) =>
      legacy(h, {
        method: "POST",
        path: rpcPath,
        headers: { "content-type": "application/json", authorization: auth },
        body,
      });
    expect(Buffer.byteLength(json(MAX_REQUEST_BYTES))).toBe(MAX_REQUEST_BYTES);
    const at = await post(json(MAX_REQUEST_BYTES));
    expect(at.status).toBe(400);
    expect(JSON.parse(at.text).code).toBe("invalid_argument");
    const over = await post(json(MAX_REQUEST_BYTES + 1));
    expect(JSON.parse(over.text).code).toBe("resource_exhausted");
  });

  it.each([
    ["legacy protobuf", {}],
    [
      "legacy JSON (the same bytes, declared as protobuf by omission)",
      { accept: "application/json" },
    ],
  ])("%s: at the limit 400, one byte over 413 Http.PayloadTooLarge", async (_name, extra) => {
    const path = `/UpdateSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`;
    const at = await legacy(h, {
      method: "POST",
      path,
      headers: { authorization: auth, ...extra },
      body: bodyOfSize(MAX_REQUEST_BYTES),
    });
    expect(at.status).toBe(400);
    expect(at.headers["x-service-errorcode"]).toBe("Subscriptions.UnknownId");
    const over = await legacy(h, {
      method: "POST",
      path,
      headers: { authorization: auth, ...extra },
      body: bodyOfSize(MAX_REQUEST_BYTES + 1),
    });
    expect(over.status).toBe(413);
    expect(over.headers["x-service-errorcode"]).toBe("Http.PayloadTooLarge");
  });

  it("legacy JSON body one byte over the limit: 413", async () => {
    const text = JSON.stringify({ Subscriptions: [{ Id: "x", IsSubscribed: "true" }] });
    const body = text.replace('"x"', `"${"x".repeat(MAX_REQUEST_BYTES + 2 - text.length)}"`);
    expect(Buffer.byteLength(body)).toBe(MAX_REQUEST_BYTES + 1);
    const res = await legacy(h, {
      method: "POST",
      path: `/UpdateSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`,
      headers: { authorization: auth, "content-type": "application/json" },
      body,
    });
    expect(res.status).toBe(413);
  });

  it("a chunked legacy body over the limit (no Content-Length): 413, and the connection still answers", async () => {
    const res = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: "127.0.0.1",
          port: h.port,
          method: "POST",
          path: `/UpdateSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`,
          headers: { authorization: auth },
          agent: false,
        },
        (r) => {
          r.resume();
          resolve(r.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      for (let i = 0; i < 17; i++) req.write(Buffer.alloc(64 * 1024, 0x0a));
      req.end();
    });
    expect(res).toBe(413);
    expect(await stored()).toEqual({ News: false });
  });
});
