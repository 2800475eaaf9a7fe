/**
 * A request whose connection closed before anything read it (Node destroys
 * an HTTP/1.1 request whose connection closes before its answer): its
 * 'close' is past, and no 'end' will come. Whatever starts reading it, or
 * watching its response, afterwards must see it gone at once. A body read
 * that waited for events already past never ended, and its call held its
 * admission slot until admission's own check gave it back 11 s later.
 */
import { EventEmitter } from "node:events";
import { Readable } from "node:stream";
import { createContextValues, createMethodImplSpec } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb";
import { CallContext, type Departure } from "../../src/call/context";
import { Health } from "../../src/rpc/health-service";
import { readBody, readEnvelopes } from "../../src/wire/body";
import type { NodeRequest } from "../../src/wire/http";

/** A request whose body had arrived, destroyed before anyone read it; its 'close' already emitted. */
async function goneRequest(): Promise<NodeRequest> {
  const req = Object.assign(
    new Readable({
      read() {
        this.push(Buffer.from([0, 0, 0, 0, 0]));
      },
    }),
    { headers: { "content-length": "5" } },
  );
  const closed = new Promise((resolve) => req.once("close", resolve));
  req.destroy();
  await closed;
  return req as unknown as NodeRequest;
}

/** `promise`'s outcome, or "never settled" after 1 s. */
const within = <T>(promise: Promise<T>) =>
  Promise.race([
    promise.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    ),
    new Promise((resolve) => setTimeout(() => resolve("never settled"), 1_000)),
  ]);

describe("a request gone before it is read", () => {
  it("a whole-body read says closed at once", async () => {
    expect(await within(readBody(await goneRequest(), 1024))).toEqual({
      value: { kind: "closed" },
    });
  });

  it("an envelope read fails as closed at once", async () => {
    const read = (async () => {
      for await (const _ of readEnvelopes(await goneRequest(), 1024)) {
        // nothing arrives
      }
    })();
    expect(await within(read)).toMatchObject({ error: { kind: "closed" } });
  });

  it("a call whose response closed before it began is aborted at once: its client left", () => {
    const spec = createMethodImplSpec(Health.method.check, async () => ({
      status: HealthCheckResponse_ServingStatus.SERVING,
    }));
    const departed = (closed: Partial<Departure>) =>
      Object.assign(new EventEmitter(), { writableEnded: false, writableFinished: false }, closed);
    const contextOf = (response: Departure) =>
      new CallContext(
        {
          route: {
            path: "/grpc.health.v1.Health/Check",
            method: spec.method,
            spec,
            allowGet: false,
          },
          protocolName: "test",
          requestMethod: "POST",
          url: "/grpc.health.v1.Health/Check",
          timeoutMs: undefined,
          requestHeader: {},
          response,
          values: createContextValues(),
        },
        undefined,
      );
    // HTTP/1.1's response, and HTTP/2's compatibility response (its stream says).
    expect(contextOf(departed({ closed: true })).signal.aborted).toBe(true);
    expect(contextOf(departed({ stream: { closed: true } })).signal.aborted).toBe(true);
    const open = departed({ closed: false, stream: { closed: false } });
    const context = contextOf(open);
    expect(context.signal.aborted).toBe(false);
    open.emit("close");
    expect(context.signal.aborted).toBe(true);
  });
});
