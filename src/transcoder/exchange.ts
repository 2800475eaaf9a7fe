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

/** What a call in process ended with. */
export type UnaryResult =
  | { readonly output: Message; readonly error?: undefined }
  | { readonly output?: undefined; readonly error: ConnectError };

/**
 * How the transcoder runs a call: through the host's own pipeline (its
 * implementations and interceptors), never around it.
 */
export interface Invoker<C = unknown> {
  unary(method: DescMethod, input: Message | DecodeFailure, call: C): Promise<UnaryResult>;
  /** A server-streaming call; its answers throw a ConnectError when it fails. */
  serverStream(method: DescMethod, input: Message | DecodeFailure, call: C): AsyncIterable<Message>;
}
