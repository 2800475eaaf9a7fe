/**
 * The listener: one TCP port for HTTP/1.1 and HTTP/2 — cleartext (told apart
 * by the h2 preface), or TLS when configured (told apart by ALPN, else by the
 * preface) — the limits on slow and idle peers, connection tracking, and
 * draining on shutdown. It knows nothing of paths: every request goes to the
 * handler it is given (the front, which guards it).
 */
import http from "node:http";
import http2 from "node:http2";
import net, { type AddressInfo, type Socket } from "node:net";
import tls from "node:tls";
import type { Timeouts } from "../config";
import { describeError, type Logger } from "../log";
import { legacyError } from "../wire/errors";
import type { NodeRequest, NodeResponse } from "../wire/http";
import { rawErrorResponse, sendError } from "../wire/plain";
import { reloadOnChange, serverOptions, type TlsFiles, type TlsMaterial } from "./tls";

const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
/** SETTINGS_MAX_CONCURRENT_STREAMS of every HTTP/2 connection. */
export const MAX_CONCURRENT_STREAMS = 256;

export type RequestHandler = (req: NodeRequest, res: NodeResponse) => void;

export type ListenerTimeouts = Pick<
  Timeouts,
  "firstByteMs" | "headersMs" | "requestMs" | "keepAliveMs" | "h2IdleMs" | "shutdownMs"
>;

/** TLS on the port: the files, what they held at start-up, how often to look for a new pair. */
export interface ListenerTls {
  readonly files: TlsFiles;
  readonly material: TlsMaterial;
  readonly reloadIntervalMs: number;
}

export interface Listener {
  listen(port: number, host: string): Promise<AddressInfo>;
  /** Stops accepting, lets in-flight requests finish (up to shutdownMs), then closes every connection. */
  close(): Promise<void>;
}

/** Status and message for the parser errors Node reports before a request exists. */
function clientErrorAnswer(code: string | undefined) {
  switch (code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return legacyError(408, "the request did not arrive in time");
    case "HPE_HEADER_OVERFLOW":
      return legacyError(431, "the request headers are too large");
    default:
      return legacyError(400, "the request is not valid HTTP");
  }
}

export function createListener(
  handler: RequestHandler,
  timeouts: ListenerTimeouts,
  log: Logger,
  tlsSettings?: ListenerTls,
): Listener {
  let stopping = false;
  let inFlight = 0;
  let idle: (() => void) | undefined;
  const sockets = new Set<Socket>();
  const h2Sockets = new WeakSet<Socket>();
  /** HTTP/1.1 sockets with a response in progress. */
  const busy = new Map<Socket, NodeResponse>();
  const sessions = new Set<http2.Http2Session>();

  const closed = (reason: string) => log.info("connection closed", { reason });

  /**
   * `h2`: the request came from the HTTP/2 server. Never inferred from the
   * version of the request line: Node's HTTP/1 parser also accepts a line
   * claiming HTTP/0.9, 2.0 or 3.0, and such a request has no h2 stream.
   */
  const onRequest = (h2: boolean) => (req: NodeRequest, res: NodeResponse) => {
    try {
      track(h2, req, res);
    } catch (error) {
      // The listener's own work failed for this request: it alone is cut off.
      log.error("request tracking failed", describeError(error));
      res.destroy();
    }
  };
  const track = (h2: boolean, req: NodeRequest, res: NodeResponse) => {
    if (!h2 && req.httpVersionMajor !== 1) {
      // Only HTTP/1.x travels on the HTTP/1 parser; HTTP/2 starts with its preface.
      closed("unsupported-http-version");
      res.setHeader("connection", "close");
      sendError(req, res, legacyError(505, "use HTTP/1.1, or HTTP/2 with its connection preface"));
      return;
    }
    inFlight++;
    const h1Socket = h2 ? undefined : (req.socket as Socket);
    if (h1Socket) {
      busy.set(h1Socket, res);
      if (stopping) res.setHeader("connection", "close");
    }
    // HTTP/1.1 requests are timed by Node's own checker (see below); h2 streams here.
    const receiveTimer = h1Socket
      ? undefined
      : setTimeout(() => {
          if (req.complete) return;
          closed("request-timeout");
          if (!res.headersSent) {
            sendError(req, res, clientErrorAnswer("ERR_HTTP_REQUEST_TIMEOUT"));
          }
          (req as http2.Http2ServerRequest).stream.close(http2.constants.NGHTTP2_CANCEL);
        }, timeouts.requestMs);
    if (receiveTimer) req.once("end", () => clearTimeout(receiveTimer));
    if (!h1Socket) {
      // h2: an answer sent before the request body has all arrived (a size refused
      // by the router) ends the stream once its trailers are out, as gRPC servers
      // do (RST_STREAM NO_ERROR); otherwise it would stay open, in flight, until
      // the request timeout. Node's compatibility layer always asks for trailers.
      const { stream } = req as http2.Http2ServerRequest;
      stream.once("wantTrailers", () => setImmediate(resetWhenSent, stream, req, 0));
    }
    res.once("close", () => {
      inFlight--;
      if (receiveTimer) clearTimeout(receiveTimer);
      if (h1Socket) {
        busy.delete(h1Socket);
        if (stopping) h1Socket.end();
      }
      if (inFlight === 0) idle?.();
    });
    handler(req, res);
  };

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
    onRequest(false),
  );
  // Node enforces headersTimeout/requestTimeout only from a checker it starts
  // on 'listening'. Sockets reach this server through emit("connection") and
  // it never listens itself, so the checker is started the same way.
  h1.emit("listening");
  h1.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
    const answer = clientErrorAnswer(error.code);
    const response = busy.get(socket);
    if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") closed("request-timeout");
    if (socket.writable && error.code !== "ECONNRESET" && !response?.headersSent) {
      socket.end(rawErrorResponse(answer));
    }
    socket.destroy();
  });

  // A bound on streams open at once per connection, advertised in SETTINGS:
  // a client cannot hold more calls in flight on one connection than this.
  const h2 = http2.createServer(
    { settings: { maxConcurrentStreams: MAX_CONCURRENT_STREAMS } },
    onRequest(true),
  );
  h2.on("session", (session) => {
    sessions.add(session);
    let open = 0;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      timer = setTimeout(() => {
        closed("h2-idle");
        session.close();
        setTimeout(() => session.destroy(), 1_000).unref();
      }, timeouts.h2IdleMs);
    };
    session.on("stream", (stream) => {
      open++;
      clearTimeout(timer);
      stream.once("close", () => {
        open--;
        if (open === 0 && !session.closed) arm();
      });
    });
    session.once("close", () => {
      clearTimeout(timer);
      sessions.delete(session);
    });
    session.on("error", () => session.destroy());
    if (stopping) session.close();
    else arm();
  });

  /** A connection (cleartext, or TLS once the handshake is done) to the server of its protocol. */
  const accept = (socket: Socket, alpn: string | false | null | undefined) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    if (alpn === "h2" || alpn === "http/1.1") {
      // TLS said which protocol the client speaks.
      if (alpn === "h2") h2Sockets.add(socket);
      (alpn === "h2" ? h2 : h1).emit("connection", socket);
      return;
    }
    socket.setTimeout(timeouts.firstByteMs, () => {
      closed("first-byte-timeout");
      socket.destroy();
    });
    // HTTP/2 or HTTP/1.1, by the first bytes: while they are a beginning of the
    // h2 preface (an HTTP/1.1 request line may arrive one byte at a time),
    // more are awaited, within the first-byte timeout.
    let seen: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, H2_PREFACE.length);
      const prefix = seen.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
      if (prefix && n < H2_PREFACE.length) return;
      socket.off("data", onData);
      socket.setTimeout(0);
      socket.pause();
      socket.unshift(seen);
      if (prefix) h2Sockets.add(socket);
      // The h2 session reads the bytes put back itself; the h1 parser needs the socket flowing.
      (prefix ? h2 : h1).emit("connection", socket);
      if (!prefix) socket.resume();
    };
    socket.on("data", onData);
  };

  const tcp = tlsSettings
    ? tls.createServer(serverOptions(tlsSettings.material, timeouts.firstByteMs), (socket) =>
        accept(socket, socket.alpnProtocol),
      )
    : net.createServer((socket) => accept(socket, undefined));
  if (tcp instanceof tls.Server) {
    // A failed handshake (no client certificate, a plain-text client) ends that connection only.
    tcp.on("tlsClientError", (_error, socket) => {
      closed("tls-handshake-failed");
      socket.destroy();
    });
  }
  const stopReload =
    tlsSettings && tcp instanceof tls.Server
      ? reloadOnChange(
          tcp,
          tlsSettings.files,
          tlsSettings.material,
          log,
          tlsSettings.reloadIntervalMs,
        )
      : () => undefined;

  return {
    listen(port, host) {
      return new Promise((resolve, reject) => {
        tcp.once("error", reject);
        tcp.listen(port, host, () => {
          tcp.off("error", reject);
          resolve(tcp.address() as AddressInfo);
        });
      });
    },
    async close() {
      stopping = true;
      stopReload();
      const tcpClosed = new Promise<void>((resolve) => tcp.close(() => resolve()));
      for (const session of sessions) session.close();
      for (const socket of sockets) {
        if (!h2Sockets.has(socket) && !busy.has(socket)) socket.destroy();
      }
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          idle = resolve;
          setTimeout(resolve, timeouts.shutdownMs).unref();
        });
      }
      for (const session of sessions) session.destroy();
      for (const socket of sockets) socket.destroy();
      h1.close();
      await tcpClosed;
    },
  };
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
