/**
 * Connect unary calls with a binary body (POST, `application/proto`), the
 * short way, as grpc-unary.ts does for gRPC: the body is read whole,
 * decompressed if `Content-Encoding` says so, decoded once and run through
 * `Pipeline.invoke`; the answer is the one connect-es writes (the message, or
 * the JSON error body with its HTTP status, compressed from 1 KiB up when
 * `Accept-Encoding` allows, with `Content-Length`).
 *
 * Anything else — JSON, GET, an unknown encoding, a bad Connect-Timeout-Ms, a
 * body over the size limit or that does not decompress or decode — goes to
 * the router with the bytes read so far, so it answers as it always has.
 */
import { fromBinary, type Message, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues, createHandlerContext } from "@connectrpc/connect";
import { mergeNonProtocolHeaders, type UniversalHandler } from "@connectrpc/connect/protocol";
import {
  codeToHttpStatus,
  contentTypeUnaryJson,
  contentTypeUnaryProto,
  errorToJsonBytes,
  parseTimeout,
  trailerMux,
} from "@connectrpc/connect/protocol-connect";
import { COMPRESS_MIN_BYTES } from "../http/compression";
import type { NodeRequest, NodeResponse } from "../http/responder";
import { MAX_REQUEST_BYTES, type Pipeline } from "./router";
import {
  callSignal,
  header,
  pipelineHeaders,
  replay,
  type ToRouter,
  type UnaryCall,
  unaryCallOf,
} from "./short-path";

export interface ConnectUnary {
  accepts(req: NodeRequest, handler: UniversalHandler): UnaryCall | undefined;
  serve(
    req: NodeRequest,
    res: NodeResponse,
    call: UnaryCall,
    values: ContextValues,
    toRouter: ToRouter,
  ): Promise<void>;
}

export function createConnectUnary(pipeline: Pipeline): ConnectUnary {
  return {
    accepts(req, handler) {
      if (req.method !== "POST") return undefined;
      if (req.headers["content-type"]?.toLowerCase() !== contentTypeUnaryProto) return undefined;
      const length = Number(req.headers["content-length"] ?? 0);
      if (!(length <= MAX_REQUEST_BYTES)) return undefined;
      return unaryCallOf(pipeline, req, handler, {
        encoding: "content-encoding",
        acceptEncoding: "accept-encoding",
        timeout: parseTimeout(header(req, "connect-timeout-ms"), Number.MAX_SAFE_INTEGER),
      });
    },

    async serve(req, res, call, values, toRouter) {
      const read = await readInput(req, call);
      if ("closed" in read) return;
      if ("replay" in read) {
        await toRouter(read.replay);
        return;
      }
      const context = createHandlerContext({
        service: call.spec.method.parent,
        method: call.spec.method,
        protocolName: "connect",
        requestMethod: "POST",
        url: req.url ?? "",
        timeoutMs: call.timeoutMs,
        requestHeader: pipelineHeaders(req),
        requestSignal: callSignal(res),
        contextValues: values,
        responseHeader: { "content-type": contentTypeUnaryProto },
      });
      let status = 200;
      let body: Uint8Array;
      try {
        const output = await pipeline.invoke(call.spec, context, read.input);
        body = toBinary(call.spec.method.output, output);
      } catch (thrown) {
        context.abort(thrown);
        const error =
          thrown instanceof ConnectError
            ? thrown
            : new ConnectError("internal error", Code.Internal, undefined, undefined, thrown);
        status = codeToHttpStatus(error.code);
        context.responseHeader.set("content-type", contentTypeUnaryJson);
        if (!error.isWireError) mergeNonProtocolHeaders(context.responseHeader, error.metadata);
        body = errorToJsonBytes(error, {});
      }
      const compression = call.responseCompression;
      if (compression && body.byteLength >= COMPRESS_MIN_BYTES) {
        body = await compression.compress(body);
        context.responseHeader.set("content-encoding", compression.name);
      }
      if (res.destroyed) return;
      const headers = trailerMux(context.responseHeader, context.responseTrailer);
      headers.set("content-length", String(body.byteLength));
      res.statusCode = status;
      for (const [name, value] of headers) res.setHeader(name, value);
      res.end(body);
    },
  };
}

/** The request message, or the body to replay to the router (see grpc-unary.ts). */
async function readInput(
  req: NodeRequest,
  call: UnaryCall,
): Promise<{ input: Message } | { replay: AsyncIterable<Uint8Array> } | { closed: true }> {
  const body = await readWhole(req);
  if (body.closed) return { closed: true };
  if (body.ended) {
    try {
      const whole = body.read.length === 1 ? (body.read[0] as Buffer) : Buffer.concat(body.read);
      const bytes = call.requestCompression
        ? await call.requestCompression.decompress(whole, MAX_REQUEST_BYTES)
        : whole;
      return { input: fromBinary(call.spec.method.input, bytes) };
    } catch {
      // The router says why, as it always has.
    }
  }
  return { replay: replay(body.read, body.ended ? undefined : req) };
}

/** Reads the body while it is within MAX_REQUEST_BYTES; stops at the first byte over. */
function readWhole(
  req: NodeRequest,
): Promise<{ read: Buffer[]; ended: boolean; closed?: boolean }> {
  return new Promise((resolve) => {
    const read: Buffer[] = [];
    let total = 0;
    const finish = (result: { read: Buffer[]; ended: boolean; closed?: boolean }) => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("close", onClose);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      read.push(chunk);
      total += chunk.length;
      if (total > MAX_REQUEST_BYTES) {
        req.pause();
        finish({ read, ended: false });
      }
    };
    const onEnd = () => finish({ read, ended: true });
    const onClose = () => finish({ read, ended: false, closed: true });
    req.on("data", onData);
    req.once("end", onEnd);
    req.once("close", onClose);
  });
}
