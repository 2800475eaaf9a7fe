/**
 * The listener's HTTP/1.1 server (docs/operations.md, "Slow and idle
 * peers"): Node's parser with its header, request and keep-alive timers,
 * and the answer to what that parser refuses before a request exists (408,
 * 431, 400, written raw on the socket). Connections reach it through
 * emit("connection"); it never listens itself.
 */
import http from "node:http";
import type { Socket } from "node:net";
import type { Timeouts } from "../config";
import { legacyError } from "../wire/errors";
import type { NodeResponse } from "../wire/http";
import { rawErrorResponse } from "../wire/plain";
import type { LogClosed } from "./connections";

/** Status and message for the parser errors Node reports before a request exists. */
export function clientErrorAnswer(code: string | undefined) {
  switch (code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return legacyError(408, "the request did not arrive in time");
    case "HPE_HEADER_OVERFLOW":
      return legacyError(431, "the request headers are too large");
    default:
      return legacyError(400, "the request is not valid HTTP");
  }
}

export function createHttp1Server(
  onRequest: http.RequestListener,
  timeouts: Pick<Timeouts, "headersMs" | "requestMs" | "keepAliveMs">,
  /** The response in progress on a connection, if any: once its headers are out, a parser error is not answered. */
  responseOn: (socket: Socket) => NodeResponse | undefined,
  closed: LogClosed,
): http.Server {
  const h1 = http.createServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      connectionsCheckingInterval: Math.max(
        50,
        Math.min(1_000, Math.floor(timeouts.headersMs / 4)),
      ),
    },
    onRequest,
  );
  // Node enforces headersTimeout/requestTimeout only from a checker it starts
  // on 'listening'. Sockets reach this server through emit("connection") and
  // it never listens itself, so the checker is started the same way.
  h1.emit("listening");
  h1.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
    const answer = clientErrorAnswer(error.code);
    const response = responseOn(socket);
    if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") closed("request-timeout");
    if (socket.writable && error.code !== "ECONNRESET" && !response?.headersSent) {
      socket.end(rawErrorResponse(answer));
    }
    socket.destroy();
  });
  return h1;
}
