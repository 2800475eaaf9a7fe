/**
 * The face of the RPC protocol adapters (gRPC, gRPC-Web, Connect; docs/api.md
 * §3): what the front gives a call, the content type negotiate read, a call's
 * settings, and the adapter itself. negotiate.ts picks the adapter (or the
 * refusal), serve.ts serves the call the same way for every protocol, and an
 * adapter only reads its settings and writes its answers.
 *
 * Errors, one style in this folder:
 * - A protocol error found before the call runs (negotiate's 405/415/505 and
 *   unknown methods, a setting the headers get wrong, a unary body that is
 *   too large or not one envelope) is returned as a tagged result — `ok:
 *   false` with the error (`Checked`, `Negotiation`) — never thrown, and
 *   never a bare `ConnectError | value`: the step's caller has to look
 *   (the compiler sees to it), one writer answers it (serveRpc, or the
 *   front's writeRefusal), and a refusal costs no stack trace.
 * - An error while the call runs (a stream's message that does not decode or
 *   decompress, the handler's own) is a thrown ConnectError, as in
 *   connect-es: callUnary/callStream turn it into the answer. The helpers that
 *   serve both (codecs, envelopes) throw; the unary input's reader, which runs
 *   before the call, turns their throw into its tagged result.
 */
import type { DescMessage, Message } from "@bufbuild/protobuf";
import type { ConnectError, ContextValues, HandlerContext } from "@connectrpc/connect";
import type { MethodRoute } from "../call/route";
import type { CallOutcome } from "../rpc/outcome";
import type { ContentCoding } from "../wire/compression";
import type { NodeRequest, NodeResponse } from "../wire/http";

export type ProtocolName = "grpc" | "grpc-web" | "connect";

/** A step before the call: what it found, or the protocol error the client is answered with. */
export type Checked<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: ConnectError };

/** How messages are encoded: binary protobuf or canonical proto JSON. */
export interface Codec {
  readonly binary: boolean;
  parse(schema: DescMessage, bytes: Uint8Array): Message;
  serialize(schema: DescMessage, message: Message): Uint8Array;
}

export interface Codecs {
  readonly proto: Codec;
  readonly json: Codec;
}

/**
 * A request's Content-Type, read once by negotiate (negotiate.ts). Connect
 * GET has none: it is served as Connect unary, its codec from the query.
 */
export interface ContentType {
  /**
   * What a protocol here serves: gRPC's and gRPC-Web's (`application/grpc[-web][+proto|+json]`),
   * Connect unary's (`application/proto|json`) or Connect streams' (`application/connect+…`);
   * undefined: none of them.
   */
  readonly media: "grpc" | "grpc-web" | "connect" | "connect-stream" | undefined;
  /** Its codec is JSON, else binary protobuf. */
  readonly json: boolean;
  /** The gRPC family by prefix alone (`application/grpc…`), served or not: an unknown path's UNIMPLEMENTED. */
  readonly family: "grpc" | "grpc-web" | undefined;
}

/** What the front gives every call. */
export interface FrontCall {
  readonly values: ContextValues;
  /** Where the code of an answer written before any interceptor ran is put. */
  readonly outcome: CallOutcome;
  /** How long the call waited for admission, in ms: its client's deadline has that much less left. */
  readonly waitedMs?: number;
}

/** A call's settings, read from its headers (Connect GET: its query) before its body. */
export interface CallSettings {
  /** The request's content type, as negotiate read it. */
  readonly type: ContentType;
  readonly codec: Codec;
  readonly timeoutMs: number | undefined;
  /** How the request's messages are compressed. */
  readonly requestCoding: ContentCoding | "identity";
  /** How the answer's messages are, when the client accepts a coding. */
  readonly answerCoding: ContentCoding | undefined;
  /** Connect GET: the request message, from the query (there is no body). */
  readonly message?: Uint8Array;
}

/**
 * One RPC protocol: how a route is called on it, its settings, and the
 * writers of its answers and errors. Which adapter serves a request, or
 * which refusal it gets, is negotiate's (negotiate.ts); the body is read,
 * and the call run, by serveRpc (serve.ts), the same for every protocol.
 */
export interface RpcAdapter {
  readonly name: ProtocolName;
  /** OpenTelemetry's `rpc.system` of its calls: gRPC-Web is gRPC. */
  readonly rpcSystem: "grpc" | "connectrpc";
  /** The HTTP methods a route takes on this protocol. */
  methods(route: MethodRoute): readonly string[];
  /** Its status travels in HTTP trailers (gRPC), which HTTP/1.0 cannot carry. */
  readonly needsTrailers: boolean;
  /** A unary call's whole body: the message (Connect unary), or one envelope (gRPC, gRPC-Web). */
  enveloped(route: MethodRoute): boolean;
  /** The client's deadline from its timeout header, in ms (none, or a malformed one: undefined). */
  clientTimeoutMs(req: NodeRequest): number | undefined;
  /** The call's settings, or the protocol error its headers (or query) hold. */
  settings(req: NodeRequest, type: ContentType, codecs: Codecs): Checked<CallSettings>;
  /** The content type of the answer (a response header before the call runs). */
  contentType(settings: CallSettings): string;
  writeAnswer(
    res: NodeResponse,
    settings: CallSettings,
    context: HandlerContext,
    payload: Uint8Array,
  ): Promise<void>;
  /** An error as the answer; `type` undefined: written before negotiation (its default codec, unary). */
  writeError(
    res: NodeResponse,
    type: ContentType | undefined,
    headers: Headers,
    trailers: Headers,
    error: ConnectError,
  ): void;
  /** Streams: the answer's head, each message's envelope, then the end (status, trailers). */
  writeStreamHead(res: NodeResponse, settings: CallSettings, context: HandlerContext): void;
  writeStreamEnd(
    res: NodeResponse,
    settings: CallSettings,
    context: HandlerContext,
    error: ConnectError | null,
  ): void;
}
