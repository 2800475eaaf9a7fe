/**
 * The one way into the pipeline. Every protocol adapter (gRPC, gRPC-Web,
 * Connect, the legacy bridge) turns a request into a decoded input and calls
 * `callUnary` (or `callStream`, stream.ts), which
 * - builds the handler context: the request headers as connect-es shows them,
 *   the client's deadline, an abort when the client goes away, the front's
 *   context values, and for streams connect's own `shutdownSignal` (a unary
 *   call in flight finishes during a graceful shutdown; a long-lived stream
 *   is told to end, and ends as its implementation decides);
 * - runs the interceptors and the implementation;
 * - turns anything that is not a ConnectError into `internal`, keeping the
 *   cause for the log.
 * Only public connect-es API is used: the HandlerContext, request and
 * response types, the Interceptor type, ConnectError. The context is ours
 * (CallContext): what createHandlerContext builds, without its per-call cost.
 */
import { create, type Message } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { runInCall } from "../call-scope";
import { type CallInput, DecodeFailure } from "../transcoder/exchange";
import { CallContext, type CallInit, FINISHED } from "./context";
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

/** What a unary call ended with: the context (its response headers and trailers), and an answer or an error. */
export type UnaryOutcome =
  | { readonly context: HandlerContext; readonly output: Message; readonly error?: undefined }
  | { readonly context: HandlerContext; readonly output?: undefined; readonly error: ConnectError };

/**
 * Runs a unary call: `input` is the decoded request, why it could not be
 * decoded (DecodeFailure), or how to read it (PendingInput): then the
 * interceptors before `readInput` (authentication among them) see an empty
 * request, and nothing of the body is read unless they pass the call on.
 */
export async function callUnary(
  interceptors: readonly Interceptor[],
  init: CallInit,
  input: CallInput,
): Promise<UnaryOutcome> {
  const context = new CallContext(init, undefined);
  const { route } = init;
  try {
    if (route.spec.kind !== "unary") throw new ConnectError("not a unary method", Code.Internal);
    const request = requestOf(context, input);
    const res = await runInCall(context, () =>
      unaryChain(interceptors)(request as unknown as UnaryRequest),
    );
    takeAnswerHeaders(res, context, "header");
    takeAnswerHeaders(res, context, "trailer");
    // The client's deadline timer, if it gave one, must not outlive the call.
    // Without one nothing is left to end: the signals are this call's alone.
    if (init.timeoutMs !== undefined) context.abort(FINISHED);
    return { context, output: res.message as Message };
  } catch (error) {
    const e = asConnectError(error);
    // Tells whatever still listens (a query in flight) that the call failed.
    context.abort(e);
    return { context, error: e };
  }
}

/** The request the interceptors get for `input`. */
function requestOf(context: CallContext, input: CallInput): CallRequest {
  const empty = () => create(context.route.method.input);
  if (input instanceof DecodeFailure) return new CallRequest(context, false, empty(), input);
  if (typeof input === "function")
    return new CallRequest(context, false, empty(), undefined, input);
  return new CallRequest(context, false, input);
}

/**
 * The interceptor that reads a pending request (PendingInput), placed after
 * authentication (src/rpc/pipeline.ts): the interceptors after it, and the
 * implementation, see the decoded request. Any other request passes as it is.
 */
export const readInput: Interceptor = (next) => async (req) => {
  const pending = req instanceof CallRequest ? req.pending : undefined;
  if (!pending) return await next(req);
  const { context } = req as CallRequest;
  let input: Message | DecodeFailure;
  try {
    input = await pending();
  } catch (error) {
    if (error instanceof ConnectError) inputErrors.add(error);
    throw error;
  }
  return await next(requestOf(context, input) as unknown as UnaryRequest);
};

/** Errors of reading a request (its protocol's framing, size, coding): answered as they are. */
const inputErrors = new WeakSet<ConnectError>();

/**
 * True for an error reading the request threw (`readInput`): the protocol's
 * own words (connect-es answers a compressed envelope it cannot read with
 * `internal` and says why), never an unexpected fault to hide.
 */
export function isInputError(error: unknown): boolean {
  return error instanceof ConnectError && inputErrors.has(error);
}

/**
 * The innermost step of every unary call: the implementation, or the reason
 * the request could not be decoded. What it needs of the call travels on the
 * request (an interceptor passes on the request it got, or a copy of it), so
 * one chain serves every call.
 */
const unaryLast = async (req: UnaryRequest): Promise<UnaryResponse> => {
  const call = req as unknown as CallRequest;
  // A chain without readInput still runs the call on its request.
  if (call.pending) return (await readInput(unaryLast as never)(req)) as UnaryResponse;
  const { context, undecodable } = call;
  if (undecodable) throw undecodable.reason;
  const { route } = context;
  const output = await (route.spec as Extract<MethodImplSpec, { kind: "unary" }>).impl(
    req.message,
    new ImplContext(context, req),
  );
  return new CallResponse(
    context,
    false,
    normalize(route.method.output, output),
  ) as unknown as UnaryResponse;
};

/** The interceptors around `unaryLast`, built once per list (not once per call). */
const unaryChains = new WeakMap<readonly Interceptor[], AnyFn>();

function unaryChain(interceptors: readonly Interceptor[]): AnyFn {
  let built = unaryChains.get(interceptors);
  if (!built) {
    built = chain(interceptors, unaryLast as AnyFn);
    unaryChains.set(interceptors, built);
  }
  return built;
}
