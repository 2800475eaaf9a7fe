/**
 * A call's HandlerContext (CallContext): what an adapter knows of a call
 * before it runs (CallInit), its deadline, its signal, its headers, made
 * only when something reads them; the reasons a call is aborted with.
 */
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  createContextKey,
  type HandlerContext,
} from "@connectrpc/connect";
import type { MethodRoute } from "./route";

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
  readonly writableEnded: boolean;
  readonly writableFinished: boolean;
  /** HTTP/1.1: closed already (its 'close' emitted: a listener added now would never run). */
  readonly closed?: boolean;
  /** HTTP/2: its stream, closed already likewise. */
  readonly stream?: { readonly closed: boolean };
  once(event: "close", listener: () => void): unknown;
}

/**
 * The reason a call's signal is aborted with once the call is over (which
 * ends the client's deadline timer): one constant, because an abort without
 * a reason builds a DOMException, stack trace and all, on every call.
 */
export const FINISHED = new ConnectError("the call has finished", Code.Canceled);

/** The reason a call is aborted with when its client went away before the answer was written. */
const CLIENT_GONE = new ConnectError("the client went away", Code.Canceled);

/**
 * The implementation's work of a call while it goes on, which may be after
 * the call is answered (its deadline passed, its client left: the answer
 * does not wait for the database); undefined once it has settled (or before
 * it started). Admission gives the call's room back only when it has, so that
 * calls a client abandons (a rapid reset) cannot pile up behind the limit
 * (docs/security.md). It may reject: whoever waits for it waits for either.
 */
export const callWorkKey = createContextKey<Promise<unknown> | undefined>(undefined, {
  description: "call work",
});

/** The reason `shutdownSignal` aborts with: a call can tell shutdown from the client leaving. */
export const SHUTDOWN = new ConnectError("the server is shutting down", Code.Unavailable);

/** The reason a call's own deadline aborts it with (connect-es's words). */
const DEADLINE = new ConnectError("the operation timed out", Code.DeadlineExceeded);
/**
 * A call's HandlerContext, built as connect-es's createHandlerContext builds
 * it (same fields, same signal and deadline semantics), but for a unary call's
 * cost: the client's leaving is one listener on Node's response, the
 * deadlines are one timer, and the AbortController and the three `Headers`
 * are made only when something reads them (a legacy call's pipeline reads
 * none of them; the RPC adapters read the response headers they write).
 */
export class CallContext implements HandlerContext {
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
    if (response) {
      const closed = () => {
        // Not writableFinished alone: an HTTP/2 stream the client reset before any answer
        // closes with writableFinished true and writableEnded false (Node's compatibility
        // layer), and its call would run on unseen (docs/security.md, "Rapid reset").
        if (!(response.writableEnded && response.writableFinished)) this.abort(CLIENT_GONE);
      };
      // Closed before the call began (its client left while it waited): at once.
      if (response.closed === true || response.stream?.closed === true) closed();
      else response.once("close", closed);
    }
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
      // Whoever holds room for the call (admission) waits for its work, not for its answer:
      // the work while it goes on, nothing once it settled (most calls: their answer is its).
      this.values.set(callWorkKey, work);
      work.then(
        (value) => {
          this.values.set(callWorkKey, undefined);
          settle();
          resolve(value);
        },
        (error: unknown) => {
          this.values.set(callWorkKey, undefined);
          settle();
          reject(error);
        },
      );
    });
  }
}
