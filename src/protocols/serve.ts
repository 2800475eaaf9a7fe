/**
 * Serving one RPC call, the same whatever its protocol (docs/architecture.md,
 * "A gRPC request, traced"): the settings the negotiated adapter reads from
 * the headers, the body through the one reader (wire/body.ts), the call
 * through `callUnary`/`callStream`, the answer or the error written by the
 * adapter. Nothing here refuses a request: negotiate.ts did, before.
 */

import { Code, ConnectError } from "@connectrpc/connect";
import type { CallInit } from "../call/context";
import { asConnectError } from "../call/messages";
import type { MethodRoute } from "../call/route";
import { callStream } from "../call/stream";
import { callUnary } from "../call/unary";
import type { Pipeline } from "../rpc/pipeline";
import { DecodeFailure, type PendingInput } from "../transcoder/exchange";
import { ENVELOPE_HEADER_BYTES, encodeEnvelope, readBody } from "../wire/body";
import { type NodeRequest, type NodeResponse, requestHeaders, writeChunk } from "../wire/http";
import { encodeMessage } from "./codecs";
import { COMPRESSED_FLAG, decompressMessage, oneEnvelope, streamInputs } from "./envelopes";
import type { CallSettings, Codecs, FrontCall, RpcAdapter } from "./face";
import type { Negotiated } from "./negotiate";

export interface ServeOptions {
  readonly pipeline: Pipeline;
  readonly codecs: Codecs;
  /** connect's own shutdown signal, for streams (src/call/stream.ts). */
  readonly shutdownSignal: AbortSignal;
  /** The largest request message, in bytes (default MAX_REQUEST_BYTES). */
  readonly maxRequestBytes: number;
}

/**
 * A unary call's input, read when the pipeline asks for it (after
 * authentication): the decoded message, or the error the pipeline answers
 * with when it does not decode. A body that cannot be had at all (too large,
 * not one envelope, not decompressible, the client gone) throws its
 * ConnectError instead.
 */
function unaryInput(
  maxBytes: number,
  adapter: RpcAdapter,
  req: NodeRequest,
  settings: CallSettings,
  route: MethodRoute,
): PendingInput {
  return async () => {
    let bytes: Uint8Array;
    if (settings.message !== undefined) {
      bytes = settings.message;
      if (settings.requestCoding !== "identity") {
        bytes = await decompressMessage(bytes, settings.requestCoding, maxBytes);
      }
    } else {
      const enveloped = adapter.enveloped(route);
      const body = await readBody(req, maxBytes + (enveloped ? ENVELOPE_HEADER_BYTES : 0));
      if (body.kind === "closed") throw new ConnectError("the client went away", Code.Canceled);
      if (body.kind === "too-large") {
        throw new ConnectError(
          `message is larger than configured readMaxBytes ${maxBytes}`,
          Code.ResourceExhausted,
        );
      }
      bytes = enveloped ? await oneEnvelope(settings, body.bytes, maxBytes) : body.bytes;
      if (!enveloped && settings.requestCoding !== "identity") {
        bytes = await decompressMessage(bytes, settings.requestCoding, maxBytes);
      }
    }
    try {
      return settings.codec.parse(route.method.input, bytes);
    } catch (error) {
      return new DecodeFailure(error);
    }
  };
}

/** Serves one call of `route` with the adapter and content type negotiate chose. */
export async function serveRpc(
  options: ServeOptions,
  negotiated: Negotiated,
  route: MethodRoute,
  front: FrontCall,
  req: NodeRequest,
  res: NodeResponse,
): Promise<void> {
  const { adapter, type } = negotiated;
  const refuse = (error: ConnectError) => {
    req.resume();
    front.outcome.code = error.code;
    adapter.writeError(res, type, new Headers(error.metadata), new Headers(), error);
  };
  const checked = adapter.settings(req, type, options.codecs);
  if (!checked.ok) {
    refuse(checked.error);
    return;
  }
  const settings = checked.value;
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
    if (settings.message !== undefined) req.resume();
    const input = unaryInput(options.maxRequestBytes, adapter, req, settings, route);
    const outcome = await callUnary(options.pipeline.interceptors, init, input);
    if (res.destroyed) return;
    if (outcome.error) {
      adapter.writeError(
        res,
        type,
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
      const frame = encodeEnvelope(compressed ? COMPRESSED_FLAG : 0, bytes);
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
        type,
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
