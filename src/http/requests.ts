/**
 * The listener's requests, on either server, before the handler gets them:
 * a request line of another HTTP version than 1.x on the HTTP/1 parser is
 * answered 505, one on a connection over MAX_CONNECTIONS 503 (probes
 * excepted); the others are counted in flight until their answer closes, so
 * that shutdown waits for them, and their HTTP/1.1 connection ends after
 * the answer once the listener is stopping.
 */
import type { Socket } from "node:net";
import { describeError, type Logger } from "../log";
import { legacyError } from "../wire/errors";
import type { NodeRequest, NodeResponse } from "../wire/http";
import { sendError } from "../wire/plain";
import type { Connections, LogClosed } from "./connections";
import { watchStream } from "./http2-streams";

export type RequestHandler = (req: NodeRequest, res: NodeResponse) => void;

export interface Requests {
  /**
   * The handler for one of the servers. `h2`: the request came from the
   * HTTP/2 server. Never inferred from the version of the request line:
   * Node's HTTP/1 parser also accepts a line claiming HTTP/0.9, 2.0 or 3.0,
   * and such a request has no h2 stream.
   */
  onRequest(h2: boolean): RequestHandler;
  /** Requests whose answer has not closed yet. */
  readonly inFlight: number;
  /** The response in progress on an HTTP/1.1 connection, if any. */
  responseOn(socket: Socket): NodeResponse | undefined;
  /** True once the connection has carried a request (it is no longer new). */
  hadRequest(socket: Socket): boolean;
  /** While requests are in flight: resolves once the last answer closes, or after `waitMs`. */
  settled(waitMs: number): Promise<void>;
}

export function createRequests(
  handler: RequestHandler,
  requestMs: number,
  /** True once the listener is closing. */
  stopping: () => boolean,
  connections: Connections,
  closed: LogClosed,
  log: Logger,
): Requests {
  let inFlight = 0;
  let idle: (() => void) | undefined;
  /** HTTP/1.1 sockets with a response in progress. */
  const busy = new Map<Socket, NodeResponse>();
  /** Connections that have carried a request. */
  const used = new WeakSet<Socket>();

  const track = (h2: boolean, req: NodeRequest, res: NodeResponse) => {
    if (!h2 && req.httpVersionMajor !== 1) {
      // Only HTTP/1.x travels on the HTTP/1 parser; HTTP/2 starts with its preface.
      closed("unsupported-http-version");
      res.setHeader("connection", "close");
      sendError(req, res, legacyError(505, "use HTTP/1.1, or HTTP/2 with its connection preface"));
      return;
    }
    if (!h2 && connections.refuseHttp1(req, res)) return;
    inFlight++;
    const h1Socket = h2 ? undefined : (req.socket as Socket);
    used.add(req.socket as Socket);
    if (h1Socket) {
      busy.set(h1Socket, res);
      if (stopping()) res.setHeader("connection", "close");
    }
    // HTTP/1.1 requests are timed by Node's own checker (src/http/http1.ts); h2 streams here.
    const receiveTimer = h1Socket ? undefined : watchStream(req, res, requestMs, closed);
    res.once("close", () => {
      inFlight--;
      if (receiveTimer) clearTimeout(receiveTimer);
      if (h1Socket) {
        busy.delete(h1Socket);
        if (stopping()) h1Socket.end();
      }
      if (inFlight === 0) idle?.();
    });
    handler(req, res);
  };

  return {
    onRequest: (h2) => (req, res) => {
      try {
        track(h2, req, res);
      } catch (error) {
        // The listener's own work failed for this request: it alone is cut off.
        log.error("request tracking failed", describeError(error));
        res.destroy();
      }
    },
    get inFlight() {
      return inFlight;
    },
    responseOn: (socket) => busy.get(socket),
    hadRequest: (socket) => used.has(socket),
    settled: (waitMs) =>
      new Promise<void>((resolve) => {
        idle = resolve;
        setTimeout(resolve, waitMs).unref();
      }),
  };
}
