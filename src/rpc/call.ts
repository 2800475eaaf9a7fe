/**
 * The one way into the pipeline. Every protocol adapter (gRPC, gRPC-Web,
 * Connect, the legacy bridge) turns a request into a decoded input and calls
 * `callUnary` (or `callStream`), which
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
import {
  create,
  type DescMessage,
  type DescMethod,
  type DescService,
  isMessage,
  type Message,
} from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
  type StreamRequest,
  type StreamResponse,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { runInCall } from "../call-scope";
import type { MethodRoute } from "./pipeline";

/** What `new Headers(…)` takes. */
type HeadersInit = ConstructorParameters<typeof Headers>[0];

/** What an adapter knows of a call before it runs. */
export interface CallInit {
  readonly route: MethodRoute;
  /** "grpc", "grpc-web", "connect" or "legacy": HandlerContext.protocolName. */
  readonly protocolName: string;
  readonly requestMethod: string;
  readonly url: string;
  /** The client's deadline, from the protocol's timeout header. */
  readonly timeoutMs: number | undefined;
  /** The request headers (a `Headers` init, or what makes one: built when first read). */
  readonly requestHeader: HeadersInit | (() => HeadersInit);
  /** The answer's stream: the call is aborted when it closes before the answer was finished (the client went away). */
  readonly response?: Departure;
  /** Or a signal aborted when the client goes away (callers without a Node response: tests in memory). */
  readonly requestSignal?: AbortSignal;
  /** Set by the front: request id, Authorization lines, the outcome holder. */
  readonly values: ContextValues;
  /** The protocol's own response headers (its content type). */
  readonly responseHeader?: HeadersInit;
}

/** What a call watches to learn that its client went away: Node's response of either HTTP version. */
export interface Departure {
  readonly writableFinished: boolean;
  once(event: "close", listener: () => void): unknown;
}

/**
 * The reason a call's signal is aborted with once the call is over (which
 * ends the client's deadline timer): one constant, because an abort without
 * a reason builds a DOMException, stack trace and all, on every call.
 */
const FINISHED = new ConnectError("the call has finished", Code.Canceled);

/** The reason a call is aborted with when its client went away before the answer was written. */
const CLIENT_GONE = new ConnectError("the client went away", Code.Canceled);

/** The reason `shutdownSignal` aborts with: a call can tell shutdown from the client leaving. */
export const SHUTDOWN = new ConnectError("the server is shutting down", Code.Unavailable);

/**
 * A call's HandlerContext, built as connect-es's createHandlerContext builds
 * it (same fields, same signal and deadline semantics), but for a unary call's
 * cost: the client's leaving is one listener on Node's response, the
 * deadlines are one timer, and the AbortController and the three `Headers`
 * are made only when something reads them (a legacy call's pipeline reads
 * none of them; the RPC adapters read the response headers they write).
 */
class CallContext implements HandlerContext {
  readonly service: DescService;
  readonly method: DescMethod;
  readonly route: MethodRoute;
  readonly protocolName: string;
  readonly requestMethod: string;
  readonly url: string;
  readonly values: ContextValues;
  private controller: AbortController | undefined;
  /** Why the call was aborted, before anything read its signal; undefined while it runs. */
  reason: unknown;
  private aborted = false;
  /** The client's deadline (epoch ms), if it gave one. */
  private readonly deadline: number | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** A deadline race in progress (`race`): told at once when the call is aborted. */
  private racing: ((reason: unknown) => void) | undefined;
  private requestHeaderValue: Headers | undefined;
  private responseHeaderValue: Headers | undefined;
  private responseTrailerValue: Headers | undefined;
  /** Signals followed (shutdown for streams, `requestSignal`) and their listeners, removed once the call is aborted. */
  private followed: [AbortSignal, () => void][] | undefined;

  constructor(
    private readonly init: CallInit,
    shutdownSignal: AbortSignal | undefined,
  ) {
    this.route = init.route;
    this.service = init.route.method.parent;
    this.method = init.route.method;
    this.protocolName = init.protocolName;
    this.requestMethod = init.requestMethod;
    this.url = init.url;
    this.values = init.values;
    const { timeoutMs, response } = init;
    if (timeoutMs !== undefined) {
      this.deadline = Date.now() + timeoutMs;
      if (timeoutMs <= 0) this.abort(DEADLINE);
      else this.timer = setTimeout(() => this.abort(DEADLINE), timeoutMs);
    }
    response?.once("close", () => {
      if (!response.writableFinished) this.abort(CLIENT_GONE);
    });
    if (init.requestSignal) this.follow(init.requestSignal);
    if (shutdownSignal) this.follow(shutdownSignal);
  }

  /** The call is aborted when `signal` is (the client leaving, the server shutting down). */
  private follow(signal: AbortSignal): void {
    if (this.aborted) return;
    if (signal.aborted) {
      this.abort(signal.reason);
      return;
    }
    const onAbort = () => this.abort(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    this.followed ??= [];
    this.followed.push([signal, onAbort]);
  }

  /** Aborted when the client goes away, its deadline passes, the call fails or (streams) the server shuts down. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** The call is over (src/call-scope.ts): storage starts nothing more for it. */
  get over(): boolean {
    return this.aborted;
  }

  readonly timeoutMs = (): number | undefined =>
    this.deadline === undefined ? undefined : this.deadline - Date.now();

  get requestHeader(): Headers {
    const init = this.init.requestHeader;
    this.requestHeaderValue ??= new Headers(typeof init === "function" ? init() : init);
    return this.requestHeaderValue;
  }

  get responseHeader(): Headers {
    this.responseHeaderValue ??= new Headers(this.init.responseHeader);
    return this.responseHeaderValue;
  }

  get responseTrailer(): Headers {
    this.responseTrailerValue ??= new Headers();
    return this.responseTrailerValue;
  }

  abort(reason: unknown): void {
    clearTimeout(this.timer);
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.racing?.(reason);
    this.controller?.abort(reason);
    for (const [signal, listener] of this.followed ?? []) {
      signal.removeEventListener("abort", listener);
    }
  }

  /**
   * What `start` returns, or a rejection as soon as the call is aborted
   * (with what `aborted` makes of its reason) or `ms` have passed (with what
   * `late` returns): the deadline interceptor's race, on one timer and
   * without a listener. A call aborted already does not start.
   */
  race<T>(
    start: () => Promise<T>,
    ms: number,
    late: () => unknown,
    aborted: (reason: unknown) => unknown,
  ): Promise<T> {
    if (this.aborted) return Promise.reject(aborted(this.reason));
    return new Promise<T>((resolve, reject) => {
      // The client's own deadline, if sooner, is already armed and aborts the call.
      const own =
        this.deadline === undefined || this.deadline - Date.now() > ms
          ? setTimeout(() => {
              this.racing = undefined;
              reject(late());
            }, ms)
          : undefined;
      const settle = () => {
        clearTimeout(own);
        this.racing = undefined;
      };
      this.racing = (reason) => {
        settle();
        reject(aborted(reason));
      };
      let work: Promise<T>;
      try {
        work = start();
      } catch (error) {
        settle();
        reject(error);
        return;
      }
      work.then(
        (value) => {
          settle();
          resolve(value);
        },
        (error: unknown) => {
          settle();
          reject(error);
        },
      );
    });
  }
}

/** The call's context, if `req` is a request of ours (an interceptor may use its cheaper ways). */
export function callContextOf(req: UnaryRequest | StreamRequest): CallContext | undefined {
  return req instanceof CallRequest ? req.context : undefined;
}

/** The reason a call's own deadline aborts it with (connect-es's words). */
const DEADLINE = new ConnectError("the operation timed out", Code.DeadlineExceeded);

/** What the implementation sees: the context, with the request as the interceptors passed it on. */
class ImplContext implements HandlerContext {
  constructor(
    private readonly context: CallContext,
    private readonly req: UnaryRequest | StreamRequest,
  ) {}
  get method() {
    return this.context.method;
  }
  get service() {
    return this.req.service;
  }
  get signal() {
    return this.req.signal;
  }
  get timeoutMs() {
    return this.context.timeoutMs;
  }
  get requestMethod() {
    return this.context.requestMethod;
  }
  get requestHeader() {
    return this.req.header;
  }
  get responseHeader() {
    return this.context.responseHeader;
  }
  get responseTrailer() {
    return this.context.responseTrailer;
  }
  get protocolName() {
    return this.context.protocolName;
  }
  get values() {
    return this.req.contextValues;
  }
  get url() {
    return this.context.url;
  }
}

/** The request the interceptors get: its headers are the context's, made when first read. */
class CallRequest {
  readonly method: DescMethod;
  readonly service: DescService;
  readonly requestMethod: string;
  readonly url: string;
  readonly contextValues: ContextValues;
  constructor(
    readonly context: CallContext,
    readonly stream: boolean,
    readonly message: Message | AsyncIterable<Message>,
    /** Why the request could not be decoded: the call fails with it where the implementation would run. */
    readonly undecodable?: Undecodable,
  ) {
    this.method = context.method;
    this.service = context.service;
    this.requestMethod = context.requestMethod;
    this.url = context.url;
    this.contextValues = context.values;
  }
  get signal(): AbortSignal {
    return this.context.signal;
  }
  get header(): Headers {
    return this.context.requestHeader;
  }
}

/** The implementation's answer: its headers and trailers are the context's, made when first read. */
class CallResponse {
  readonly method: DescMethod;
  readonly service: DescService;
  constructor(
    readonly context: CallContext,
    readonly stream: boolean,
    readonly message: Message | AsyncIterable<Message>,
  ) {
    this.method = context.method;
    this.service = context.service;
  }
  get header(): Headers {
    return this.context.responseHeader;
  }
  get trailer(): Headers {
    return this.context.responseTrailer;
  }
}

/**
 * Puts what an interceptor answered into the context's headers and trailers,
 * unless the answer is the implementation's own (then they are the context's).
 */
function takeAnswerHeaders(
  res: UnaryResponse | StreamResponse,
  context: CallContext,
  part: "header" | "trailer",
): void {
  if (res instanceof CallResponse && res.context === context) return;
  copyInto(res[part], part === "header" ? context.responseHeader : context.responseTrailer);
}

/** As connect-es: a ConnectError as it is, anything else an internal error with its cause. */
export function asConnectError(error: unknown): ConnectError {
  return error instanceof ConnectError
    ? error
    : new ConnectError("internal error", Code.Internal, undefined, undefined, error);
}

/**
 * A request that could not be decoded: the pipeline still runs (the
 * interceptors first: authentication, as the order of checks says), and the
 * call fails with `reason` where the implementation would have run.
 */
export class Undecodable {
  constructor(readonly reason: unknown) {}
}

/** What a unary call ended with: the context (its response headers and trailers), and an answer or an error. */
export type UnaryOutcome =
  | { readonly context: HandlerContext; readonly output: Message; readonly error?: undefined }
  | { readonly context: HandlerContext; readonly output?: undefined; readonly error: ConnectError };

/**
 * Runs a unary call: `input` is the decoded request, or why it could not be
 * decoded (Undecodable).
 */
export async function callUnary(
  interceptors: readonly Interceptor[],
  init: CallInit,
  input: Message | Undecodable,
): Promise<UnaryOutcome> {
  const context = new CallContext(init, undefined);
  const { route } = init;
  try {
    if (route.spec.kind !== "unary") throw new ConnectError("not a unary method", Code.Internal);
    const request =
      input instanceof Undecodable
        ? new CallRequest(context, false, create(route.method.input), input)
        : new CallRequest(context, false, input);
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

type AnyFn = (req: UnaryRequest | StreamRequest) => Promise<UnaryResponse | StreamResponse>;

/**
 * The innermost step of every unary call: the implementation, or the reason
 * the request could not be decoded. What it needs of the call travels on the
 * request (an interceptor passes on the request it got, or a copy of it), so
 * one chain serves every call.
 */
const unaryLast = async (req: UnaryRequest): Promise<UnaryResponse> => {
  const { context, undecodable } = req as unknown as CallRequest;
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

/** The interceptors around `last`, the first of the list outermost (as connect-es applies them). */
function chain(interceptors: readonly Interceptor[], last: AnyFn): AnyFn {
  let next = last;
  for (let i = interceptors.length - 1; i >= 0; i--) {
    next = (interceptors[i] as Interceptor)(next) as AnyFn;
  }
  return next;
}

/** An implementation may answer an init object: it becomes the message. */
function normalize(schema: DescMessage, value: unknown): Message {
  return isMessage(value, schema) ? value : create(schema, value as never);
}

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

/** Puts what an interceptor answered into the context's headers (the same object most of the time). */
function copyInto(from: Headers, to: Headers): void {
  if (from === to) return;
  for (const name of [...to.keys()]) to.delete(name);
  from.forEach((value, name) => {
    to.set(name, value);
  });
}
