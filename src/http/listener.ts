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
import { type ConnectionLimits, DEFAULT_CONNECTION_LIMITS, type Timeouts } from "../config";
import { describeError, type Logger } from "../log";
import { legacyError } from "../wire/errors";
import type { NodeRequest, NodeResponse } from "../wire/http";
import { rawErrorResponse, sendError } from "../wire/plain";
import { reloadOnChange, serverOptions, type TlsFiles, type TlsMaterial } from "./tls";

const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
/**
 * Connections the kernel may hold for us before we accept them (capped by
 * net.core.somaxconn, 4096 on current Linux). Node's default, 511, overflows
 * when a spike opens connections faster than one core accepts them: the
 * kernel then drops SYNs, and each dropped one costs its client a second or
 * more of retransmission (docs/operations.md, "Overload").
 */
const LISTEN_BACKLOG = 4096;

/**
 * Listening sockets on the port (SO_REUSEPORT: the kernel spreads new
 * connections over them). libuv accepts one connection per socket per turn
 * of the event loop (libuv#3696): with one socket, a loop busy with calls
 * accepts a few dozen connections a second while a spike queues thousands
 * in the kernel, and clients wait seconds before they are even read
 * (measured, docs/performance.md "Overload"). Sixteen accept sixteen a turn.
 */
const ACCEPTORS = 128;

/** Listens; resolves with the address, or rejects with the listen error (EADDRINUSE…). */
function listenOn(server: net.Server, options: net.ListenOptions): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options, () => {
      server.off("error", reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

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

/** What the listener counts of its connections, read by the metrics at scrape time. */
export interface ConnectionStats {
  /** Connections open now. */
  readonly open: number;
  /** Connections refused since start: over MAX_CONNECTIONS. */
  readonly refused: number;
  /** HTTP/2 connections sent GOAWAY for their age since start. */
  readonly aged: number;
}

export interface Listener {
  readonly stats: ConnectionStats;
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
  limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
  /** Requests (by target) answered even on a connection over MAX_CONNECTIONS: health and metrics. */
  alwaysServed: (target: string) => boolean = () => false,
): Listener {
  const stats = { open: 0, refused: 0, aged: 0 };
  /** Connections accepted over MAX_CONNECTIONS: their first request (or session) is refused, then they close. */
  const overLimit = new WeakSet<Socket>();
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
    if (!h2 && overLimit.has(req.socket as Socket)) {
      // One connection too many: it closes after this answer. A probe (health,
      // metrics) is still answered; anything else gets a clean 503.
      res.setHeader("connection", "close");
      if (!alwaysServed(req.url ?? "")) {
        sendError(req, res, legacyError(503, "too many connections; retry after 1 s"), {
          "retry-after": "1",
        });
        return;
      }
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
    const aging = limits.h2MaxAgeMs > 0 ? ageTimer(session) : undefined;
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
      clearTimeout(aging);
      sessions.delete(session);
    });
    session.on("error", () => session.destroy());
    if (stopping) session.close();
    else arm();
  });

  /**
   * An HTTP/2 connection's age limit (gRPC's MAX_CONNECTION_AGE): GOAWAY at
   * its age, ±10 % so that connections made together do not all go at once;
   * calls in flight then have the grace period to finish. Long-lived clients
   * reconnect, and an L4 balancer spreads them over the instances again.
   */
  const ageTimer = (session: http2.Http2Session) => {
    const ageMs = limits.h2MaxAgeMs * (0.9 + Math.random() * 0.2);
    const timer = setTimeout(() => {
      if (session.closed || session.destroyed) return;
      stats.aged++;
      closed("h2-max-age");
      // Two GOAWAYs, as gRPC servers send them: the first (last stream 2^31-1) tells
      // the client to open no more streams here; after a PING round trip no stream of
      // its can still be on the way, and close() sends the real last stream id. One
      // GOAWAY alone refuses a stream the client sent while it was in flight.
      const finish = () => {
        if (!session.closed && !session.destroyed) session.close();
        setTimeout(() => session.destroy(), limits.h2MaxAgeGraceMs).unref();
      };
      session.goaway(http2.constants.NGHTTP2_NO_ERROR, 2 ** 31 - 1);
      if (!session.ping(finish)) finish();
    }, ageMs);
    timer.unref();
    return timer;
  };

  /** A connection (cleartext, or TLS once the handshake is done) to the server of its protocol. */
  const accept = (socket: Socket, alpn: string | false | null | undefined) => {
    if (sockets.size >= limits.max) {
      overLimit.add(socket);
      stats.refused++;
      closed("too-many-connections");
    }
    sockets.add(socket);
    stats.open = sockets.size;
    socket.once("close", () => {
      sockets.delete(socket);
      stats.open = sockets.size;
    });
    socket.on("error", () => socket.destroy());
    if (alpn === "h2" || alpn === "http/1.1") {
      // TLS said which protocol the client speaks.
      if (alpn === "h2" && overLimit.has(socket)) {
        refuseH2(socket);
        return;
      }
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
      if (prefix && overLimit.has(socket)) {
        refuseH2(socket);
        return;
      }
      socket.pause();
      socket.unshift(seen);
      if (prefix) h2Sockets.add(socket);
      // The h2 session reads the bytes put back itself; the h1 parser needs the socket flowing.
      (prefix ? h2 : h1).emit("connection", socket);
      if (!prefix) socket.resume();
    };
    socket.on("data", onData);
  };

  /** One listening socket; ACCEPTORS of them share the port (SO_REUSEPORT), each accepting on its own. */
  const createAcceptor = () => {
    const server = tlsSettings
      ? tls.createServer(serverOptions(tlsSettings.material, timeouts.firstByteMs), (socket) =>
          accept(socket, socket.alpnProtocol),
        )
      : net.createServer((socket) => accept(socket, undefined));
    if (server instanceof tls.Server) {
      // A failed handshake (no client certificate, a plain-text client) ends that connection only.
      server.on("tlsClientError", (_error, socket) => {
        closed("tls-handshake-failed");
        socket.destroy();
      });
    }
    return server;
  };
  const acceptors = [createAcceptor()];
  const stopReload = tlsSettings
    ? reloadOnChange(
        {
          setSecureContext: (options) => {
            for (const server of acceptors) (server as tls.Server).setSecureContext(options);
          },
        },
        tlsSettings.files,
        tlsSettings.material,
        log,
        tlsSettings.reloadIntervalMs,
      )
    : () => undefined;

  return {
    stats,
    async listen(port, host) {
      // Alone on the port, or not at all: a probe without SO_REUSEPORT fails on a port in
      // use, also one that another process holds with SO_REUSEPORT.
      const probe = net.createServer();
      const free = await listenOn(probe, { port, host });
      await new Promise((resolve) => probe.close(resolve));
      const shared = { port: free.port, host, backlog: LISTEN_BACKLOG, reusePort: true };
      const first = acceptors[0] as net.Server;
      const address = await listenOn(first, shared);
      while (acceptors.length < ACCEPTORS) {
        const next = createAcceptor();
        acceptors.push(next);
        await listenOn(next, shared);
      }
      return address;
    },
    async close() {
      stopping = true;
      stopReload();
      const tcpClosed = Promise.all(
        acceptors.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
      );
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

/**
 * The whole answer to an HTTP/2 connection over MAX_CONNECTIONS, written
 * before any session exists (nghttp2 costs more than the refusal): the
 * server's SETTINGS, then GOAWAY with last stream 0 and REFUSED_STREAM — no
 * stream was processed, so a client may retry every call elsewhere — then
 * the connection ends.
 */
const H2_REFUSAL = (() => {
  const settings = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);
  const debug = Buffer.from("too many connections", "latin1");
  const goaway = Buffer.alloc(9 + 8 + debug.length);
  goaway.writeUIntBE(8 + debug.length, 0, 3);
  goaway[3] = 7; // GOAWAY
  goaway.writeUInt32BE(0, 5); // stream 0
  goaway.writeUInt32BE(0, 9); // last stream id: none processed
  goaway.writeUInt32BE(http2.constants.NGHTTP2_REFUSED_STREAM, 13);
  debug.copy(goaway, 17);
  return Buffer.concat([settings, goaway]);
})();

function refuseH2(socket: Socket): void {
  socket.end(H2_REFUSAL);
  setTimeout(() => socket.destroy(), 1_000).unref();
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
