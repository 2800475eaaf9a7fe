/**
 * gRPC unary calls over HTTP/2, the short way. The router treats every gRPC
 * call as a stream: the body goes through a chain of async generators
 * (split, decompress, parse), the answer through another (serialize,
 * compress, join), with WHATWG Headers and abort signals on both sides.
 * Here, a request that is exactly one message of a unary method is read
 * whole, decompressed if it says so, decoded once and run through `Pipeline.invoke`: the same
 * interceptors and implementation as on every protocol. The answer is the one
 * the router writes (same headers, compression, trailers, status details).
 *
 * Anything else — another content type, an unknown grpc-encoding, an
 * oversized message, a body that is not exactly one message, one that does
 * not decompress or decode, a bad grpc-timeout — goes to the router with the bytes read so far, so every
 * edge case answers exactly as the router answers it.
 */
import { Http2ServerRequest, type Http2ServerResponse } from "node:http2";
import { fromBinary, type Message, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues, createHandlerContext } from "@connectrpc/connect";
import type { Compression, UniversalHandler } from "@connectrpc/connect/protocol";
import {
  contentTypeProto,
  parseTimeout,
  setTrailerStatus,
} from "@connectrpc/connect/protocol-grpc";
import { COMPRESS_MIN_BYTES } from "../http/compression";
import type { NodeRequest, NodeResponse } from "../http/responder";
import { MAX_REQUEST_BYTES, type Pipeline } from "./router";
import {
  callSignal,
  header,
  pipelineHeaders,
  replay,
  type ToRouter,
  toNodeHeaders,
  type UnaryCall,
  unaryCallOf,
} from "./short-path";

const CONTENT_TYPES: ReadonlySet<string> = new Set(["application/grpc", "application/grpc+proto"]);
const ENVELOPE_HEADER = 5;
// Node's header names are lower case.
const GRPC_ENCODING = "grpc-encoding";
const GRPC_ACCEPT_ENCODING = "grpc-accept-encoding";
const GRPC_TIMEOUT = "grpc-timeout";
const COMPRESSED = 0b1;

export interface GrpcUnary {
  /** The call, when `req` (for `handler`'s method) can take the short path. */
  accepts(req: NodeRequest, handler: UniversalHandler): UnaryCall | undefined;
  serve(
    req: NodeRequest,
    res: NodeResponse,
    call: UnaryCall,
    values: ContextValues,
    toRouter: ToRouter,
  ): Promise<void>;
}

export function createGrpcUnary(pipeline: Pipeline): GrpcUnary {
  return {
    accepts(req, handler) {
      // HTTP/2 by the request object, never by the version its request line claims.
      if (!(req instanceof Http2ServerRequest) || req.method !== "POST") return undefined;
      if (!CONTENT_TYPES.has(req.headers["content-type"]?.toLowerCase() ?? "")) return undefined;
      return unaryCallOf(pipeline, req, handler, {
        encoding: GRPC_ENCODING,
        acceptEncoding: GRPC_ACCEPT_ENCODING,
        timeout: parseTimeout(header(req, GRPC_TIMEOUT), Number.MAX_SAFE_INTEGER),
      });
    },

    async serve(req, res, call, values, toRouter) {
      const read = await readInput(req, call);
      // The stream closed before the body ended: the client went away, or the
      // listener answered 408 and closed it. There is no one to answer.
      if ("closed" in read) return;
      if ("replay" in read) {
        await toRouter(read.replay);
        return;
      }
      const { input } = read;

      const requestHeader = pipelineHeaders(req);
      const compression = call.responseCompression;
      const context = createHandlerContext({
        service: call.spec.method.parent,
        method: call.spec.method,
        protocolName: "grpc",
        requestMethod: "POST",
        url: req.url ?? "",
        timeoutMs: call.timeoutMs,
        requestHeader,
        requestSignal: callSignal(res),
        contextValues: values,
        responseHeader: { "content-type": contentTypeProto },
        responseTrailer: { "grpc-status": "0" },
      });
      if (compression) context.responseHeader.set(GRPC_ENCODING, compression.name);

      let frame: Uint8Array | undefined;
      let failure: ConnectError | undefined;
      try {
        const output = await pipeline.invoke(call.spec, context, input);
        let payload = toBinary(call.spec.method.output, output);
        let flags = 0;
        if (compression && payload.length >= COMPRESS_MIN_BYTES) {
          payload = await compression.compress(payload);
          flags = COMPRESSED;
        }
        frame = envelope(flags, payload);
      } catch (error) {
        context.abort(error);
        // As connect-es: a ConnectError as it is, anything else an internal error.
        failure =
          error instanceof ConnectError
            ? error
            : new ConnectError("internal error", Code.Internal, undefined, undefined, error);
      }
      // After the call: what the interceptors and the implementation added is in it.
      const trailer = new Headers(context.responseTrailer);
      if (failure) setTrailerStatus(trailer, failure);
      if (res.destroyed) return;
      res.statusCode = 200;
      for (const [name, value] of context.responseHeader) res.setHeader(name, value);
      res.addTrailers(toNodeHeaders(trailer));
      if (frame) {
        res.end(frame);
      } else {
        // Headers first: ending an h2 answer with no data and unsent headers would drop the trailers.
        (res as Http2ServerResponse).writeHead(200);
        res.end();
      }
    },
  };
}

/**
 * The request message, or the body to replay to the router. Only the
 * message outlives this function: the chunks read (slices of HTTP/2 read
 * buffers of up to 64 KiB each) are not held while the call runs.
 */
async function readInput(
  req: NodeRequest,
  call: UnaryCall,
): Promise<{ input: Message } | { replay: AsyncIterable<Uint8Array> } | { closed: true }> {
  const body = await readOneMessage(req, call.requestCompression !== undefined);
  if (body.closed) return { closed: true };
  if (body.message) {
    try {
      const bytes = body.compressed
        ? await (call.requestCompression as Compression).decompress(body.message, MAX_REQUEST_BYTES)
        : body.message;
      return { input: fromBinary(call.spec.method.input, bytes) };
    } catch {
      // The router says why, as it always has.
    }
  }
  return { replay: replay(body.read, body.ended ? undefined : req) };
}

function envelope(flags: number, payload: Uint8Array): Uint8Array {
  const frame = Buffer.allocUnsafe(ENVELOPE_HEADER + payload.length);
  frame[0] = flags;
  frame.writeUInt32BE(payload.length, 1);
  frame.set(payload, ENVELOPE_HEADER);
  return frame;
}

interface ReadBody {
  /** The message, when the body was exactly one message within the size limit. */
  readonly message?: Uint8Array;
  /** Its compressed flag is set. */
  readonly compressed?: boolean;
  /** Every chunk read. */
  readonly read: readonly Buffer[];
  /** The body has all been read. */
  readonly ended: boolean;
  /** The stream closed before the body ended. */
  readonly closed?: boolean;
}

/**
 * Reads the body while it can still be one message of at most
 * MAX_REQUEST_BYTES (compressed only when the request says how); stops
 * reading at the first byte that says otherwise (another flag, a larger
 * size, a second message), leaving the rest for the router.
 */
function readOneMessage(req: NodeRequest, mayBeCompressed: boolean): Promise<ReadBody> {
  return new Promise((resolve) => {
    const read: Buffer[] = [];
    let total = 0;
    let expected = -1;
    let flags = 0;
    const finish = (result: ReadBody) => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("close", onClose);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      read.push(chunk);
      total += chunk.length;
      if (expected < 0 && total >= ENVELOPE_HEADER) {
        const head = read.length === 1 ? chunk : Buffer.concat(read);
        flags = head[0] ?? 0;
        const allowed = mayBeCompressed ? flags === 0 || flags === COMPRESSED : flags === 0;
        if (!allowed || head.readUInt32BE(1) > MAX_REQUEST_BYTES) {
          req.pause();
          finish({ read, ended: false });
          return;
        }
        expected = ENVELOPE_HEADER + head.readUInt32BE(1);
      }
      if (expected >= 0 && total > expected) {
        req.pause();
        finish({ read, ended: false });
      }
    };
    const onEnd = () => {
      if (expected >= 0 && total === expected) {
        const whole = read.length === 1 ? (read[0] as Buffer) : Buffer.concat(read, total);
        const message = whole.subarray(ENVELOPE_HEADER);
        finish({ message, compressed: flags === COMPRESSED, read, ended: true });
        return;
      }
      // Also a stream the client reset mid-body: Node ends the request before
      // it says it was aborted, so the router answers it (to no one), as before.
      finish({ read, ended: true });
    };
    const onClose = () => finish({ read, ended: false, closed: true });
    req.on("data", onData);
    req.once("end", onEnd);
    req.once("close", onClose);
  });
}
