/**
 * What the interceptors and the implementation see of a call: its request
 * and answer (CallRequest, CallResponse, their headers the context's), the
 * implementation's context, and the interceptor chain as connect-es applies
 * it. Only public connect-es API is used: the HandlerContext, request and
 * response types, the Interceptor type, ConnectError.
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
  type StreamRequest,
  type StreamResponse,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import type { DecodeFailure, PendingInput } from "../transcoder/exchange";
import type { CallContext } from "./context";

/** The call's context, if `req` is a request of ours (an interceptor may use its cheaper ways). */
export function callContextOf(req: UnaryRequest | StreamRequest): CallContext | undefined {
  return req instanceof CallRequest ? req.context : undefined;
}

/** What the implementation sees: the context, with the request as the interceptors passed it on. */
export class ImplContext implements HandlerContext {
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
export class CallRequest {
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
    readonly undecodable?: DecodeFailure,
    /** How to read the request, not read yet (`message` is empty until then): unary.ts `readInput`. */
    readonly pending?: PendingInput,
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
export class CallResponse {
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
export function takeAnswerHeaders(
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

export type AnyFn = (req: UnaryRequest | StreamRequest) => Promise<UnaryResponse | StreamResponse>;

/** The interceptors around `last`, the first of the list outermost (as connect-es applies them). */
export function chain(interceptors: readonly Interceptor[], last: AnyFn): AnyFn {
  let next = last;
  for (let i = interceptors.length - 1; i >= 0; i--) {
    next = (interceptors[i] as Interceptor)(next) as AnyFn;
  }
  return next;
}

/** An implementation may answer an init object: it becomes the message. */
export function normalize(schema: DescMessage, value: unknown): Message {
  return isMessage(value, schema) ? value : create(schema, value as never);
}

/** Puts what an interceptor answered into the context's headers (the same object most of the time). */
function copyInto(from: Headers, to: Headers): void {
  if (from === to) return;
  for (const name of [...to.keys()]) to.delete(name);
  from.forEach((value, name) => {
    to.set(name, value);
  });
}
