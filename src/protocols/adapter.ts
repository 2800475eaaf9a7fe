/**
 * What the RPC protocol adapters (gRPC, gRPC-Web, Connect) have in common:
 * their one small face, the message codecs, and the one way a call is
 * served whatever its protocol — settings from the headers, the body through
 * the one reader, the call through `callUnary`/`callStream`, the answer or
 * the error written by the adapter. The transcoder (src/transcoder; the
 * legacy paths are its profile in src/legacy/profile.ts) takes the same way
 * in.
 */
import {
  type DescMessage,
  fromBinary,
  fromJsonString,
  type Message,
  type Registry,
  toBinary,
  toJsonString,
} from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues, type HandlerContext } from "@connectrpc/connect";
import type { CallInit } from "../call/context";
import { asConnectError } from "../call/messages";
import type { MethodRoute } from "../call/route";
import { callStream } from "../call/stream";
import { callUnary } from "../call/unary";
import type { CallOutcome } from "../rpc/outcome";
import type { Pipeline } from "../rpc/pipeline";
import { DecodeFailure } from "../transcoder/exchange";
import {
  ENVELOPE_HEADER_BYTES,
  type Envelope,
  EnvelopeError,
  readBody,
  readEnvelopes,
} from "../wire/body";
import {
  BodyDecodingError,
  COMPRESS_MIN_BYTES,
  type ContentCoding,
  compress,
  decompress,
} from "../wire/compression";
import { legacyError } from "../wire/errors";
import {
  headerOf,
  type NodeRequest,
  type NodeResponse,
  requestHeaders,
  writeChunk,
} from "../wire/http";
import { sendError, sendMethodNotAllowed } from "../wire/plain";

export type ProtocolName = "grpc" | "grpc-web" | "connect";

/** How messages are encoded: binary protobuf or canonical proto JSON. */
export interface Codec {
  readonly binary: boolean;
  parse(schema: DescMessage, bytes: Uint8Array): Message;
  serialize(schema: DescMessage, message: Message): Uint8Array;
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
  readonly codec: Codec;
  readonly timeoutMs: number | undefined;
  /** How the request's messages are compressed. */
  readonly requestCoding: ContentCoding | "identity";
  /** How the answer's messages are, when the client accepts a coding. */
  readonly answerCoding: ContentCoding | undefined;
  /** A protocol error found in the headers: answered before any interceptor, body unread. */
  readonly refused?: ConnectError;
}

/**
 * One RPC protocol. `accepts` is the classifier's question; `settings` reads
 * the headers; the writers put answers and errors on the wire. The body is
 * read, and the call run, by `serveRpc`, the same for every protocol.
 */
export interface RpcAdapter {
  readonly name: ProtocolName;
  /** OpenTelemetry's `rpc.system` of its calls: gRPC-Web is gRPC. */
  readonly rpcSystem: "grpc" | "connectrpc";
  /** This request is this protocol's, for this route (its content type; Connect: also GET). */
  accepts(req: NodeRequest, route: MethodRoute): boolean;
  /** The HTTP methods a route takes on this protocol. */
  methods(route: MethodRoute): readonly string[];
  /** The client's deadline from its timeout header, in ms (none, or a malformed one: undefined). */
  clientTimeoutMs(req: NodeRequest): number | undefined;
  settings(req: NodeRequest, route: MethodRoute, codecs: Codecs): CallSettings;
  /** The content type of the answer (a response header before the call runs). */
  contentType(settings: CallSettings): string;
  /** Connect GET: the message, from the query; undefined: it is the body. */
  unaryInput?(req: NodeRequest, settings: CallSettings): Uint8Array | ConnectError | undefined;
  /** A unary call's whole body: the message (Connect unary), or one envelope (gRPC, gRPC-Web). */
  readonly enveloped: (route: MethodRoute) => boolean;
  /** Its status travels in HTTP trailers (gRPC), which HTTP/1.0 cannot carry. */
  readonly needsTrailers: boolean;
  writeAnswer(
    res: NodeResponse,
    settings: CallSettings,
    context: HandlerContext,
    payload: Uint8Array,
  ): Promise<void>;
  writeError(
    res: NodeResponse,
    settings: CallSettings | undefined,
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

export interface Codecs {
  readonly proto: Codec;
  readonly json: Codec;
}

/** The codecs of every protocol; `registry` resolves google.protobuf.Any in JSON. */
export function createCodecs(registry?: Registry): Codecs {
  return {
    proto: {
      binary: true,
      parse(schema, bytes) {
        try {
          return fromBinary(schema, bytes);
        } catch {
          throw new ConnectError(
            `the request is not a valid protobuf ${schema.typeName}`,
            Code.InvalidArgument,
          );
        }
      },
      serialize: (schema, message) => toBinary(schema, message),
    },
    json: {
      binary: false,
      parse(schema, bytes) {
        let text: string;
        try {
          text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
        } catch {
          throw new ConnectError("the request is not valid UTF-8", Code.InvalidArgument);
        }
        try {
          return fromJsonString(schema, text, { ignoreUnknownFields: true, registry });
        } catch (error) {
          throw new ConnectError(
            `the request is not a valid JSON ${schema.typeName}: ${error instanceof Error ? error.message : "bad value"}`,
            Code.InvalidArgument,
          );
        }
      },
      serialize: (schema, message) =>
        Buffer.from(toJsonString(schema, message, { registry }), "utf8"),
    },
  };
}

export const COMPRESSED_FLAG = 0b1;

/** A message as it goes on the wire: serialized, and compressed when it is worth it. */
export async function encodeMessage(
  settings: CallSettings,
  schema: DescMessage,
  message: Message,
): Promise<{ bytes: Uint8Array; compressed: boolean }> {
  const bytes = settings.codec.serialize(schema, message);
  if (settings.answerCoding && bytes.length >= COMPRESS_MIN_BYTES) {
    return { bytes: await compress(bytes, settings.answerCoding), compressed: true };
  }
  return { bytes, compressed: false };
}

/** An envelope's message, decompressed as its flag and the call's coding say. */
async function openEnvelope(
  settings: CallSettings,
  envelope: Envelope,
  maxBytes: number,
): Promise<Uint8Array> {
  if ((envelope.flags & COMPRESSED_FLAG) === 0) return envelope.data;
  if (settings.requestCoding === "identity") {
    throw new ConnectError(
      "received compressed envelope, but do not know how to decompress",
      Code.Internal,
    );
  }
  return decompressOrRefuse(envelope.data, settings.requestCoding, maxBytes);
}

async function decompressOrRefuse(
  bytes: Uint8Array,
  coding: ContentCoding,
  maxBytes: number,
): Promise<Uint8Array> {
  try {
    return await decompress(bytes, coding, maxBytes);
  } catch (error) {
    if (error instanceof BodyDecodingError && error.kind === "too-large") {
      throw new ConnectError(
        `message is larger than configured readMaxBytes ${maxBytes} after decompression`,
        Code.ResourceExhausted,
      );
    }
    throw new ConnectError("decompression failed", Code.InvalidArgument);
  }
}

const CLOSED = Symbol("closed");

/**
 * A unary call's input: the decoded message, the error the pipeline answers
 * with (after authentication) when it does not decode, a protocol error
 * answered before any interceptor (too large, not one envelope), or CLOSED.
 */
async function unaryInput(
  maxBytes: number,
  adapter: RpcAdapter,
  req: NodeRequest,
  settings: CallSettings,
  route: MethodRoute,
): Promise<{ input: Message | DecodeFailure } | { refused: ConnectError } | typeof CLOSED> {
  let bytes: Uint8Array;
  const query = adapter.unaryInput?.(req, settings);
  if (query !== undefined) {
    req.resume();
    if (query instanceof ConnectError) return { refused: query };
    bytes = query;
    if (settings.requestCoding !== "identity") {
      try {
        bytes = await decompressOrRefuse(bytes, settings.requestCoding, maxBytes);
      } catch (error) {
        return { refused: asConnectError(error) };
      }
    }
  } else {
    const enveloped = adapter.enveloped(route);
    const body = await readBody(req, maxBytes + (enveloped ? ENVELOPE_HEADER_BYTES : 0));
    if (body.kind === "closed") return CLOSED;
    if (body.kind === "too-large") {
      return {
        refused: new ConnectError(
          `message is larger than configured readMaxBytes ${maxBytes}`,
          Code.ResourceExhausted,
        ),
      };
    }
    try {
      bytes = enveloped ? await oneEnvelope(settings, body.bytes, maxBytes) : body.bytes;
      if (!enveloped && settings.requestCoding !== "identity") {
        bytes = await decompressOrRefuse(bytes, settings.requestCoding, maxBytes);
      }
    } catch (error) {
      return { refused: asConnectError(error) };
    }
  }
  try {
    return { input: settings.codec.parse(route.method.input, bytes) };
  } catch (error) {
    return { input: new DecodeFailure(error) };
  }
}

/** The one message of a unary call's enveloped body. */
async function oneEnvelope(
  settings: CallSettings,
  body: Buffer,
  maxBytes: number,
): Promise<Uint8Array> {
  if (body.length < ENVELOPE_HEADER_BYTES) {
    throw new ConnectError(
      "protocol error: missing input message for unary method",
      Code.Unimplemented,
    );
  }
  const length = body.readUInt32BE(1);
  if (length > maxBytes) {
    throw new ConnectError(
      `message size ${length} is larger than configured readMaxBytes ${maxBytes}`,
      Code.ResourceExhausted,
    );
  }
  if (body.length < ENVELOPE_HEADER_BYTES + length) {
    throw new ConnectError(
      `protocol error: promised ${length} bytes in enveloped message, got ${body.length - ENVELOPE_HEADER_BYTES} bytes`,
      Code.InvalidArgument,
    );
  }
  if (body.length > ENVELOPE_HEADER_BYTES + length) {
    throw new ConnectError(
      "protocol error: received extra input message for unary method",
      Code.Unimplemented,
    );
  }
  return openEnvelope(
    settings,
    { flags: body[0] as number, data: body.subarray(ENVELOPE_HEADER_BYTES) },
    maxBytes,
  );
}

/** A stream's messages, decoded as they arrive; an end-of-stream flag ends them. */
async function* streamInputs(
  maxBytes: number,
  req: NodeRequest,
  settings: CallSettings,
  route: MethodRoute,
): AsyncGenerator<Message> {
  try {
    for await (const envelope of readEnvelopes(req, maxBytes)) {
      if ((envelope.flags & ~COMPRESSED_FLAG) !== 0) {
        throw new ConnectError(
          `protocol error: invalid envelope flags ${envelope.flags}`,
          Code.InvalidArgument,
        );
      }
      yield settings.codec.parse(
        route.method.input,
        await openEnvelope(settings, envelope, maxBytes),
      );
    }
  } catch (error) {
    if (error instanceof EnvelopeError) {
      throw new ConnectError(
        error.message,
        error.kind === "too-large"
          ? Code.ResourceExhausted
          : error.kind === "closed"
            ? Code.Canceled
            : Code.InvalidArgument,
      );
    }
    throw error;
  }
}

/** HTTP/2, or HTTP/1.1 (trailers after a chunked body); not HTTP/1.0. */
export function canCarryTrailers(req: NodeRequest): boolean {
  return req.httpVersionMajor >= 2 || req.httpVersionMinor >= 1;
}

/**
 * gRPC on HTTP/1.0: its status could not reach the client (no trailers), so
 * nothing runs; 505, before the body is read.
 */
export function refuseHttp10(req: NodeRequest, res: NodeResponse): void {
  sendError(
    req,
    res,
    legacyError(505, "gRPC carries its status in trailers, which HTTP/1.0 cannot: use HTTP/2"),
  );
}

export interface ServeOptions {
  readonly pipeline: Pipeline;
  readonly codecs: Codecs;
  /** connect's own shutdown signal, for streams (src/rpc/call.ts). */
  readonly shutdownSignal: AbortSignal;
  /** The largest request message, in bytes (default MAX_REQUEST_BYTES). */
  readonly maxRequestBytes: number;
}

/** Serves one call of `route` with `adapter`, the classifier's choice. */
export async function serveRpc(
  options: ServeOptions,
  adapter: RpcAdapter,
  route: MethodRoute,
  front: FrontCall,
  req: NodeRequest,
  res: NodeResponse,
): Promise<void> {
  if (adapter.needsTrailers && !canCarryTrailers(req)) {
    refuseHttp10(req, res);
    return;
  }
  const methods = adapter.methods(route);
  if (!methods.includes(req.method ?? "")) {
    sendMethodNotAllowed(req, res, methods, route.path);
    return;
  }
  const settings = adapter.settings(req, route, options.codecs);
  const refuse = (error: ConnectError) => {
    req.resume();
    front.outcome.code = error.code;
    adapter.writeError(res, settings, new Headers(error.metadata), new Headers(), error);
  };
  if (settings.refused) {
    refuse(settings.refused);
    return;
  }
  const init: CallInit = {
    route,
    protocolName: adapter.name,
    requestMethod: req.method ?? "POST",
    url: req.url ?? route.path,
    timeoutMs:
      settings.timeoutMs === undefined ? undefined : settings.timeoutMs - (front.waitedMs ?? 0),
    requestHeader: () => requestHeaders(req),
    response: res,
    values: front.values,
    responseHeader: { "content-type": adapter.contentType(settings) },
  };
  if (route.spec.kind === "unary") {
    const input = await unaryInput(options.maxRequestBytes, adapter, req, settings, route);
    if (input === CLOSED) return;
    if ("refused" in input) {
      refuse(input.refused);
      return;
    }
    const outcome = await callUnary(options.pipeline.interceptors, init, input.input);
    if (res.destroyed) return;
    if (outcome.error) {
      adapter.writeError(
        res,
        settings,
        outcome.context.responseHeader,
        outcome.context.responseTrailer,
        outcome.error,
      );
      return;
    }
    const { bytes, compressed } = await encodeMessage(
      settings,
      route.method.output,
      outcome.output,
    );
    await adapter.writeAnswer(
      res,
      compressed ? settings : { ...settings, answerCoding: undefined },
      outcome.context,
      bytes,
    );
    return;
  }
  const stream = callStream(
    options.pipeline.interceptors,
    options.shutdownSignal,
    init,
    streamInputs(options.maxRequestBytes, req, settings, route),
  );
  let error: ConnectError | null = null;
  let started = false;
  try {
    for await (const message of stream.outputs) {
      if (!started) {
        adapter.writeStreamHead(res, settings, stream.context);
        started = true;
      }
      const { bytes, compressed } = await encodeMessage(settings, route.method.output, message);
      if (res.destroyed) break;
      const frame = Buffer.allocUnsafe(ENVELOPE_HEADER_BYTES + bytes.length);
      frame[0] = compressed ? COMPRESSED_FLAG : 0;
      frame.writeUInt32BE(bytes.length, 1);
      frame.set(bytes, ENVELOPE_HEADER_BYTES);
      if (!writeChunk(res, frame)) await drained(res);
    }
  } catch (e) {
    error = asConnectError(e);
  }
  front.outcome.code = error === null ? null : error.code;
  if (res.destroyed) return;
  req.resume();
  if (!started) {
    if (error) {
      adapter.writeError(
        res,
        settings,
        stream.context.responseHeader,
        stream.context.responseTrailer,
        error,
      );
      return;
    }
    adapter.writeStreamHead(res, settings, stream.context);
  }
  adapter.writeStreamEnd(res, settings, stream.context, error);
}

function drained(res: NodeResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}

/** A header a protocol reads as one value, or null. */
export const header = headerOf;
