/**
 * What the transcoder needs of one HTTP request and its answer, without
 * knowing the server: the host's front door adapts its own request to this
 * (reading the body with its size limit and Content-Encoding, writing with
 * its compression), so the transcoder sees no socket, no framework and no
 * Node type.
 */
import type { DescMethod, Message } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";

export interface Exchange {
  readonly httpMethod: string;
  /** The request's path, as sent (no query): a created resource's Location is under it. */
  readonly path?: string;
  /** Request headers, names in lower case. */
  header(name: string): string | undefined;
  /** Every request header, for the call's context. */
  readonly requestHeaders: [string, string][];
  /** The body, whole, Content-Encoding removed; throws a ConnectError (too large, bad coding, client gone). */
  readBody(): Promise<Uint8Array>;
  /** Tells the host the body will not be read. */
  skipBody(): void;
  /** Writes a whole answer. */
  respond(status: number, headers: Record<string, string>, body: Uint8Array): Promise<void>;
  /** Starts a streamed answer: its chunks, then its end. */
  startStream(status: number, headers: Record<string, string>): StreamWriter;
  /** True once the client is gone or the answer is written. */
  readonly closed: boolean;
}

export interface StreamWriter {
  write(chunk: Uint8Array): Promise<void>;
  end(): void;
  /** Cuts the answer off: the client sees it incomplete. */
  abort(): void;
}

/**
 * A request that could not be decoded: the call still runs its interceptors,
 * then fails with `reason` (a ConnectError, or whatever the host's profile
 * threw, for the host's interceptors to map).
 */
export class DecodeFailure {
  constructor(readonly reason: unknown) {}
}

/**
 * A request not read yet: the pipeline reads it when it gets there, after
 * authentication, so that a caller without credentials never has a byte of
 * its body parsed (docs/security.md). It answers the decoded message or why
 * it could not be decoded; it throws a ConnectError when the body cannot be
 * had at all (too large, badly framed, the client gone).
 */
export type PendingInput = () => Promise<Message | DecodeFailure>;

/** What a call is given: its request, why it did not decode, or how to read it. */
export type CallInput = Message | DecodeFailure | PendingInput;

/** What a call in process ended with. */
export type UnaryResult = (
  | { readonly output: Message; readonly error?: undefined }
  | { readonly output?: undefined; readonly error: ConnectError }
) & {
  /** The call's context: the response headers its implementation set (an entity tag). */
  readonly context?: { readonly responseHeader: Headers };
};

/**
 * How the transcoder runs a call: through the host's own pipeline (its
 * implementations and interceptors), never around it.
 */
export interface Invoker<C = unknown> {
  unary(method: DescMethod, input: CallInput, call: C): Promise<UnaryResult>;
  /** A server-streaming call; its answers throw a ConnectError when it fails. */
  serverStream(method: DescMethod, input: CallInput, call: C): AsyncIterable<Message>;
}
