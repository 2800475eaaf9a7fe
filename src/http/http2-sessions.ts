/**
 * The listener's HTTP/2 server and its sessions: the bound on streams per
 * connection, the idle timeout of a session without streams, and the
 * maximum connection age (gRPC's MAX_CONNECTION_AGE: a GOAWAY, then the
 * grace period; docs/operations.md, "Overload"). Connections reach it
 * through emit("connection"); it never listens itself.
 */
import http2 from "node:http2";
import type { ConnectionLimits } from "../config";
import type { LogClosed } from "./connections";
import type { RequestHandler } from "./requests";

/** SETTINGS_MAX_CONCURRENT_STREAMS of every HTTP/2 connection. */
export const MAX_CONCURRENT_STREAMS = 256;

export interface Http2Sessions {
  readonly server: http2.Http2Server;
  /** The sessions open now, to close on shutdown. */
  readonly open: ReadonlySet<http2.Http2Session>;
}

export function createHttp2Sessions(
  onRequest: RequestHandler,
  h2IdleMs: number,
  limits: ConnectionLimits,
  /** True once the listener is closing: a new session is closed at once. */
  stopping: () => boolean,
  /** Counts a connection sent GOAWAY for its age. */
  countAged: () => void,
  closed: LogClosed,
): Http2Sessions {
  const sessions = new Set<http2.Http2Session>();

  // A bound on streams open at once per connection, advertised in SETTINGS:
  // a client cannot hold more calls in flight on one connection than this.
  const h2 = http2.createServer(
    { settings: { maxConcurrentStreams: MAX_CONCURRENT_STREAMS } },
    onRequest,
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
      }, h2IdleMs);
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
    if (stopping()) session.close();
    else arm();
  });

  /**
   * An HTTP/2 connection's age limit (gRPC's MAX_CONNECTION_AGE): GOAWAY at
   * its age, ±10 % so that connections made together do not all go at once;
   * calls in flight then have the grace period to finish. Long-lived clients
   * reconnect, and an L4 balancer spreads them over the instances again.
   *
   * One GOAWAY, naming the last stream this side took (`session.close()`).
   * gRPC servers send two (the first with the largest stream id, a PING,
   * then the real one), but Node's `goaway()` is no shutdown notice: once
   * any GOAWAY is out, nghttp2 ignores every new stream without a word, so a
   * call the client sent while the first was on its way hung until its
   * deadline (seen under load in the two-instance test). With one GOAWAY the
   * client learns which streams were not taken — refused, never run — and
   * retries them on a new connection (grpc-js does so transparently).
   */
  const ageTimer = (session: http2.Http2Session) => {
    const ageMs = limits.h2MaxAgeMs * (0.9 + Math.random() * 0.2);
    const timer = setTimeout(() => {
      if (session.closed || session.destroyed) return;
      countAged();
      closed("h2-max-age");
      session.close();
      setTimeout(() => session.destroy(), limits.h2MaxAgeGraceMs).unref();
    }, ageMs);
    timer.unref();
    return timer;
  };

  return { server: h2, open: sessions };
}
