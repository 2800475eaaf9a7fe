/** Runs a streaming call (callStream): the interceptors, the implementation, its answers as they come. */
import type { DescMessage, Message } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type HandlerContext,
  type Interceptor,
  type StreamRequest,
  type StreamResponse,
} from "@connectrpc/connect";
import { CallContext, type CallInit, FINISHED, SHUTDOWN } from "./context";
import {
  type AnyFn,
  asConnectError,
  CallRequest,
  CallResponse,
  chain,
  ImplContext,
  normalize,
  takeAnswerHeaders,
} from "./messages";

/** A streaming call: its context, and its answers (which throw a ConnectError when the call fails). */
export interface StreamOutcome {
  readonly context: HandlerContext;
  readonly outputs: AsyncIterable<Message>;
}

/** Runs a streaming call (any of the three stream kinds) over `inputs`, as they arrive. */
export function callStream(
  interceptors: readonly Interceptor[],
  shutdownSignal: AbortSignal,
  init: CallInit,
  inputs: AsyncIterable<Message>,
): StreamOutcome {
  const context = new CallContext(init, shutdownSignal);
  const { route } = init;
  const spec = route.spec;
  const answer = (message: AsyncIterable<Message>) =>
    new CallResponse(context, true, message) as unknown as StreamResponse;
  const last = async (req: StreamRequest): Promise<StreamResponse> => {
    switch (spec.kind) {
      case "server_streaming": {
        const single = await onlyMessage(req.message, "server-streaming");
        return answer(
          normalizeAll(route.method.output, spec.impl(single, new ImplContext(context, req))),
        );
      }
      case "client_streaming": {
        const output = normalize(
          route.method.output,
          await spec.impl(req.message, new ImplContext(context, req)),
        );
        return answer(once(output));
      }
      case "bidi_streaming":
        return answer(
          normalizeAll(route.method.output, spec.impl(req.message, new ImplContext(context, req))),
        );
      default:
        throw new ConnectError("not a streaming method", Code.Internal);
    }
  };
  async function* outputs(): AsyncGenerator<Message> {
    try {
      const request = new CallRequest(context, true, inputs);
      const res = await chain(interceptors, last as AnyFn)(request as unknown as StreamRequest);
      takeAnswerHeaders(res, context, "header");
      // Each answer is awaited against the call's signal: a deadline or the
      // client leaving ends the stream even while the implementation waits.
      // Shutdown does not: the implementation is told (its signal) and ends
      // the stream itself, with a last answer if it has one.
      const it = (res.message as AsyncIterable<Message>)[Symbol.asyncIterator]();
      try {
        for (;;) {
          const next = await untilAborted(it.next(), context.signal);
          if (next.done) break;
          yield next.value;
        }
      } finally {
        void it.return?.();
      }
      takeAnswerHeaders(res, context, "trailer");
    } catch (error) {
      const e = asConnectError(error);
      context.abort(e);
      throw e;
    } finally {
      context.abort(FINISHED);
    }
  }
  return { context, outputs: outputs() };
}

/**
 * `promise`, or the signal's reason as soon as it aborts. A promise given up
 * on still gets a handler: the implementation it waits on fails too, often
 * with the same reason, and an unhandled rejection would stop the process.
 */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted && signal.reason !== SHUTDOWN) {
    promise.catch(ignore);
    return Promise.reject(asConnectError(signal.reason));
  }
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      if (signal.reason !== SHUTDOWN) reject(asConnectError(signal.reason));
    };
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

const ignore = () => undefined;

async function* normalizeAll(schema: DescMessage, values: AsyncIterable<unknown>) {
  for await (const value of values) yield normalize(schema, value);
}

async function* once(message: Message) {
  yield message;
}

/** The one message of a request that must carry exactly one. */
async function onlyMessage(messages: AsyncIterable<Message>, kind: string): Promise<Message> {
  const it = messages[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done === true) {
    throw new ConnectError(
      `protocol error: missing input message for ${kind} method`,
      Code.Unimplemented,
    );
  }
  const second = await it.next();
  if (second.done !== true) {
    throw new ConnectError(
      `protocol error: received extra input message for ${kind} method`,
      Code.Unimplemented,
    );
  }
  return first.value;
}
