/**
 * The listener: one TCP port for HTTP/1.1 and HTTP/2 — cleartext (told apart
 * by the h2 preface), or TLS when configured (told apart by ALPN, else by the
 * preface) — the limits on slow and idle peers, connection tracking, and
 * draining on shutdown. It knows nothing of paths: every request goes to the
 * handler it is given (the front, which guards it). This file puts its parts
 * together and drains them on shutdown: acceptors.ts (the port's sockets),
 * connections.ts (tracking, MAX_CONNECTIONS), sniff.ts (which protocol),
 * http1.ts and http2-sessions.ts (the two servers), requests.ts and
 * http2-streams.ts (each request).
 */
import type { AddressInfo } from "node:net";
import { type ConnectionLimits, DEFAULT_CONNECTION_LIMITS, type Timeouts } from "../config";
import type { Logger } from "../log";
import { createAcceptors, type ListenerTls } from "./acceptors";
import { type ConnectionStats, createConnections, logClosed } from "./connections";
import { createHttp1Server } from "./http1";
import { createHttp2Sessions } from "./http2-sessions";
import { createRequests, type RequestHandler } from "./requests";
import { createDispatch } from "./sniff";

export type { ListenerTls } from "./acceptors";
export type { ConnectionStats } from "./connections";
export { MAX_CONCURRENT_STREAMS } from "./http2-sessions";
export type { RequestHandler } from "./requests";

export type ListenerTimeouts = Pick<
  Timeouts,
  "firstByteMs" | "headersMs" | "requestMs" | "keepAliveMs" | "h2IdleMs" | "shutdownMs"
>;

/** On shutdown, how long a connection just accepted has to send its first request. */
const FIRST_REQUEST_GRACE_MS = 1_000;

export interface Listener {
  readonly stats: ConnectionStats;
  listen(port: number, host: string): Promise<AddressInfo>;
  /** Stops accepting, lets in-flight requests finish (up to shutdownMs), then closes every connection. */
  close(): Promise<void>;
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
  let stopping = false;
  const isStopping = () => stopping;
  const closed = logClosed(log);
  const connections = createConnections(limits, alwaysServed, closed);
  const requests = createRequests(
    handler,
    timeouts.requestMs,
    isStopping,
    connections,
    closed,
    log,
  );
  const h1 = createHttp1Server(requests.onRequest(false), timeouts, requests.responseOn, closed);
  const h2 = createHttp2Sessions(
    requests.onRequest(true),
    timeouts.h2IdleMs,
    limits,
    isStopping,
    connections.countAged,
    closed,
    connections.penalize,
  );
  const dispatch = createDispatch(h1, h2.server, connections, timeouts.firstByteMs, closed);
  const acceptors = createAcceptors(
    (socket, alpn) => {
      if (!connections.admit(socket)) return;
      dispatch(socket, alpn);
    },
    tlsSettings,
    timeouts.firstByteMs,
    closed,
    log,
  );

  return {
    stats: connections.stats,
    listen: (port, host) => acceptors.listen(port, host),
    async close() {
      stopping = true;
      for (const session of h2.open) session.close();
      // What the kernel already took is accepted and answered, not reset (acceptors.ts).
      const { stopped, closed: tcpClosed } = acceptors.close();
      await stopped;
      // A connection accepted that has not carried its first request yet is given it.
      const since = performance.now();
      while (performance.now() - since < FIRST_REQUEST_GRACE_MS) {
        const waiting = [...connections.open].some(
          (socket) =>
            !connections.isH2(socket) && !requests.hadRequest(socket) && !socket.destroyed,
        );
        if (!waiting) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      for (const socket of connections.open) {
        if (!connections.isH2(socket) && !requests.responseOn(socket)) socket.destroy();
      }
      if (requests.inFlight > 0) await requests.settled(timeouts.shutdownMs);
      for (const session of h2.open) session.destroy();
      for (const socket of connections.open) socket.destroy();
      h1.close();
      await tcpClosed;
    },
  };
}
