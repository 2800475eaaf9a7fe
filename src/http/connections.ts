/**
 * The listener's connections (docs/operations.md, "Overload"): which are
 * open, what the metrics count of them, and the cap, MAX_CONNECTIONS. A
 * connection over the cap is still accepted, then refused cleanly in its
 * protocol's words: HTTP/1.1 answers 503 and closes (probes are still
 * answered), HTTP/2 gets SETTINGS and GOAWAY before any session exists.
 */
import http2 from "node:http2";
import type { Socket } from "node:net";
import type { ConnectionLimits } from "../config";
import type { Logger } from "../log";
import { legacyError } from "../wire/errors";
import type { NodeRequest, NodeResponse } from "../wire/http";
import { sendError } from "../wire/plain";

/** Addresses kept in the penalty box at most (the oldest penalty is dropped first). */
const MAX_PENALTIES = 10_000;

/** What the listener counts of its connections, read by the metrics at scrape time. */
export interface ConnectionStats {
  /** Connections open now. */
  readonly open: number;
  /** Connections refused since start: over MAX_CONNECTIONS. */
  readonly refused: number;
  /** HTTP/2 connections sent GOAWAY for their age since start. */
  readonly aged: number;
}

/** Logs that the listener ended a connection (or a stream, or a session), and why. */
export type LogClosed = (reason: string) => void;

export function logClosed(log: Logger): LogClosed {
  return (reason) => log.info("connection closed", { reason });
}

export interface Connections {
  /** The counts, one object updated in place: the metrics keep it and read it at each scrape. */
  readonly stats: ConnectionStats;
  /** The connections open now, to close on shutdown. */
  readonly open: ReadonlySet<Socket>;
  /**
   * Takes a new connection into the count; one over the cap is marked to be
   * refused. False: the connection comes from an address serving a penalty
   * (`penalize`) and was closed at once.
   */
  admit(socket: Socket): boolean;
  /** The peer address of `socket` gets no new connection for `ms` (an HTTP/2 reset flood). */
  penalize(socket: Socket, ms: number): void;
  /** True for a connection over MAX_CONNECTIONS: its first request (or session) is refused, then it closes. */
  isOverLimit(socket: Socket): boolean;
  /** Marks a connection as HTTP/2 (its session, not its requests, keeps it open on shutdown). */
  markH2(socket: Socket): void;
  isH2(socket: Socket): boolean;
  /** Counts an HTTP/2 connection sent GOAWAY for its age. */
  countAged(): void;
  /**
   * An HTTP/1 request on a connection over the cap, which closes after this
   * answer: true once a clean 503 is sent; false for a probe (health,
   * metrics), which is still served, and for a connection under the cap.
   */
  refuseHttp1(req: NodeRequest, res: NodeResponse): boolean;
}

export function createConnections(
  limits: ConnectionLimits,
  /** Requests (by target) answered even on a connection over MAX_CONNECTIONS: health and metrics. */
  alwaysServed: (target: string) => boolean,
  closed: LogClosed,
): Connections {
  const stats = { open: 0, refused: 0, aged: 0 };
  const overLimit = new WeakSet<Socket>();
  const sockets = new Set<Socket>();
  const h2Sockets = new WeakSet<Socket>();
  /** Addresses serving a penalty, until when (performance.now()); bounded, the oldest first out. */
  const penalties = new Map<string, number>();
  return {
    stats,
    open: sockets,
    admit(socket) {
      const address = socket.remoteAddress;
      const until = address === undefined ? undefined : penalties.get(address);
      if (until !== undefined) {
        if (until > performance.now()) {
          closed("penalized-address");
          socket.destroy();
          return false;
        }
        penalties.delete(address as string);
      }
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
      return true;
    },
    penalize(socket, ms) {
      const address = socket.remoteAddress;
      if (address === undefined) return;
      penalties.delete(address);
      if (penalties.size >= MAX_PENALTIES)
        penalties.delete(penalties.keys().next().value as string);
      penalties.set(address, performance.now() + ms);
    },
    isOverLimit: (socket) => overLimit.has(socket),
    markH2(socket) {
      h2Sockets.add(socket);
    },
    isH2: (socket) => h2Sockets.has(socket),
    countAged() {
      stats.aged++;
    },
    refuseHttp1(req, res) {
      if (!overLimit.has(req.socket as Socket)) return false;
      res.setHeader("connection", "close");
      if (alwaysServed(req.url ?? "")) return false;
      sendError(req, res, legacyError(503, "too many connections; retry after 1 s"), {
        "retry-after": "1",
      });
      return true;
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

/** Refuses an HTTP/2 connection over MAX_CONNECTIONS (H2_REFUSAL), then ends it. */
export function refuseH2(socket: Socket): void {
  socket.end(H2_REFUSAL);
  setTimeout(() => socket.destroy(), 1_000).unref();
}
