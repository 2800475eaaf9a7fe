/**
 * A streaming call whose client goes away between two answers
 * (src/rpc/call.ts): the call ends with `canceled`, and the implementation's
 * own failure (it waits on the same signal, and fails with the same reason)
 * is no unhandled rejection: one would stop the process. The Connect
 * conformance suite stopped a server this way.
 */
import { Code, ConnectError, createContextValues, createMethodImplSpec } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb";
import { callStream } from "../../src/call/stream";
import { Health } from "../../src/rpc/health-service";

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
process.on("unhandledRejection", onUnhandled);
afterEach(() => {
  unhandled.length = 0;
});

describe("a streaming call whose client leaves between answers", () => {
  it("ends with canceled, and the implementation's failure is handled", async () => {
    const gone = new AbortController();
    const spec = createMethodImplSpec(Health.method.watch, async function* (_req, ctx) {
      yield { status: HealthCheckResponse_ServingStatus.SERVING };
      // Waits on the call's signal, and fails with its reason, as implementations do.
      await new Promise((_, reject) => {
        if (ctx.signal.aborted) reject(ctx.signal.reason);
        ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason));
      });
    });
    const outcome = callStream(
      [],
      new AbortController().signal,
      {
        route: { path: "/grpc.health.v1.Health/Watch", method: spec.method, spec, allowGet: false },
        protocolName: "test",
        requestMethod: "POST",
        url: "/grpc.health.v1.Health/Watch",
        timeoutMs: undefined,
        requestHeader: {},
        requestSignal: gone.signal,
        values: createContextValues(),
      },
      (async function* () {
        yield { $typeName: "grpc.health.v1.HealthCheckRequest", service: "" } as never;
      })(),
    );
    const answers = outcome.outputs[Symbol.asyncIterator]();
    const first = await answers.next();
    expect(first.done).toBe(false);
    gone.abort(new ConnectError("the client went away", Code.Canceled));
    await expect(answers.next()).rejects.toMatchObject({ code: Code.Canceled });
    // Rejections are reported after the microtasks run out: give them a turn.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(unhandled).toEqual([]);
  });
});
