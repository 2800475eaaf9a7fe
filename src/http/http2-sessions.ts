/**
 * The listener's HTTP/2 server and its sessions: the bound on streams per
 * connection, the idle timeout of a session without streams, and the
 * maximum connection age (gRPC's MAX_CONNECTION_AGE: a GOAWAY, then the
 * grace period; docs/operations.md, "Overload"). Connections reach it
 * through emit("connection"); it never listens itself.
 */
import http2 from "node:http2";
import type { Socket } from "node:net";
import type { ConnectionLimits } from "../config";
import type { LogClosed } from "./connections";
import type { RequestHandler } from "./requests";

/** SETTINGS_MAX_CONCURRENT_STREAMS of every HTTP/2 connection. */
export const MAX_CONCURRENT_STREAMS = 256;

/**
 * Rapid reset (CVE-2023-44487), past what Node and nghttp2 refuse by
 * themselves (docs/security.md, "HTTP/2 abuse"): a connection whose client
 * resets more than this many streams before their answer within
 * RESET_WINDOW_MS gets GOAWAY ENHANCE_YOUR_CALM, and its address no new
 * connection for RESET_PENALTY_MS, so that reconnecting does not start the
 * flood again at once. A client that cancels calls as its deadlines pass
 * stays far below it.
 */
export const MAX_RESETS = 100;
const RESET_WINDOW_MS = 10_000;
const RESET_PENALTY_MS = 10_000;

/** Counts resets in a window of RESET_WINDOW_MS; true once more than MAX_RESETS. */
function resetCounter(): () => boolean {
  let windowStart = 0;
  let count = 0;
  return () => {
    const now = performance.now();
    if (now - windowStart > RESET_WINDOW_MS) {
      windowStart = now;
      count = 0;
    }
    return ++count > MAX_RESETS;
  };
}

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
  /** Keeps the peer's address from connecting again for a while (a reset flood). */
  penalize: (socket: Socket, ms: number) => void,
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
    const resets = resetCounter();
    session.on("stream", (stream) => {
      open++;
      clearTimeout(timer);
      stream.once("close", () => {
        open--;
        // Reset by the client before its answer was sent: a rapid reset, if it comes in a flood.
        if (!stream.headersSent && stream.rstCode !== http2.constants.NGHTTP2_NO_ERROR) {
          if (resets() && !session.destroyed) {
            closed("h2-reset-flood");
            session.goaway(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
            if (session.socket) penalize(session.socket as Socket, RESET_PENALTY_MS);
            session.destroy();
            return;
          }
        }
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
