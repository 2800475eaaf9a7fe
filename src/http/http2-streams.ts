/**
 * The listener's watch over each HTTP/2 request stream: its request timeout
 * (Node's checker times HTTP/1.1 requests only), and the end of a stream
 * answered before its request body all arrived (RST_STREAM NO_ERROR once the
 * answer is out, as gRPC servers do; docs/observability.md).
 */
import http2 from "node:http2";
import type { NodeRequest, NodeResponse } from "../wire/http";
import { sendError } from "../wire/plain";
import type { LogClosed } from "./connections";
import { clientErrorAnswer } from "./http1";

/**
 * Watches the stream of an HTTP/2 request; returns its request timer, which
 * the caller clears once the answer closes.
 */
export function watchStream(
  req: NodeRequest,
  res: NodeResponse,
  requestMs: number,
  closed: LogClosed,
): NodeJS.Timeout {
  const receiveTimer = setTimeout(() => {
    if (req.complete) return;
    closed("request-timeout");
    if (!res.headersSent) {
      sendError(req, res, clientErrorAnswer("ERR_HTTP_REQUEST_TIMEOUT"));
    }
    (req as http2.Http2ServerRequest).stream.close(http2.constants.NGHTTP2_CANCEL);
  }, requestMs);
  req.once("end", () => clearTimeout(receiveTimer));
  // An answer sent before the request body has all arrived (a size refused by
  // the router) ends the stream once its trailers are out, as gRPC servers do
  // (RST_STREAM NO_ERROR); otherwise it would stay open, in flight, until the
  // request timeout. Node's compatibility layer always asks for trailers.
  const { stream } = req as http2.Http2ServerRequest;
  stream.once("wantTrailers", () => setImmediate(resetWhenSent, stream, req, 0));
  return receiveTimer;
}

/** How long an answered stream whose END_STREAM is not yet out waits before it is reset anyway. */
const RESET_WAIT_MS = 1_000;
const RESET_POLL_MS = 5;

/**
 * Resets (RST_STREAM NO_ERROR) a stream answered before its request body all
 * arrived, once the frame that ends the answer has left nghttp2. Without
 * trailers (Connect, gRPC-Web) that frame is an empty DATA frame, which
 * nghttp2 queues behind control frames: a reset submitted sooner can reach
 * the peer first, and the peer then loses the answer (seen over TLS, where
 * the socket pushes back).
 */
function resetWhenSent(stream: http2.ServerHttp2Stream, req: NodeRequest, waitedMs: number): void {
  if (req.complete || stream.closed || stream.destroyed) return;
  if (!stream.state.localClose && waitedMs < RESET_WAIT_MS) {
    setTimeout(resetWhenSent, RESET_POLL_MS, stream, req, waitedMs + RESET_POLL_MS).unref();
    return;
  }
  stream.close(http2.constants.NGHTTP2_NO_ERROR);
  // The unread rest of the body would hold the stream open: drop it.
  stream.destroy();
}
