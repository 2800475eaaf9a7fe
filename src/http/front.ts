/**
 * What the front does for every request, whatever serves it: a request id
 * (the caller's, if sane, or a fresh one) echoed back, the observation
 * (metrics, the SERVER span), the access log line when the answer closes,
 * and what an RPC call gets from the front (its context values). The guard
 * is here too: whatever throws while a request is handled becomes a 500 for
 * that request alone, logged with its cause and request id.
 */
import { randomUUID } from "node:crypto";
import http2 from "node:http2";
import { isBearer } from "../domain/bearer";
import { describeError, type Logger } from "../log";
import type { Observer, RequestObservation, RpcSystem } from "../observability/observer";
import type { FrontCall } from "../protocols/face";
import {
  type AuthorizationLines,
  authorizationLinesKey,
  CallValues,
  clientAddressKey,
  requestIdKey,
} from "../rpc/context";
import { type CallOutcome, callOutcomeKey } from "../rpc/outcome";
import { INTERNAL_MESSAGE, legacyError } from "../wire/errors";
import type { NodeRequest, NodeResponse } from "../wire/http";
import { sendError } from "../wire/plain";
import type { ClientAddressOf } from "./client-address";

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Longest part of an unknown path that is echoed or logged. */
export const MAX_SHOWN_PATH = 200;

/** One request as the front sees it. */
export interface FrontRequest {
  readonly requestId: string;
  /** The client's address (client-address.ts), for the access log and the failure budget. */
  readonly client: string;
  /** The request target up to "?", and what follows it. */
  readonly path: string;
  readonly query: string;
  readonly observed: RequestObservation;
  /** The declared route, for the log and the metrics (never a raw path). */
  route: string | undefined;
  /** The protocol, for the log. */
  protocol: string;
  /** The call's context values, once `call` made them (admission reads who the caller proved to be). */
  values: CallValues | undefined;
  /** Runs when the answer closes, before the log line (admission's slot is given back). */
  finally: (() => void) | undefined;
  /** How long the request waited for admission, in ms (a client's deadline counts it). */
  waitedMs: number;
  /**
   * What admission decided, for the debug line: "not gated" (not an API
   * call, or admission off), "admitted", "queued" (admitted after a wait),
   * or the refusal's reason.
   */
  admission: string;
  /**
   * Admission refused it: no access log line of its own (a refusal must cost
   * microseconds; admission logs a summary of its refusals instead).
   */
  refused: boolean;
  /** Says a refused request was an RPC call, for the call metrics, without making its context. */
  refusedCall(system: RpcSystem, method: string, protocol: string): CallOutcome;
  /** Says the request is an RPC call; what the call gets from the front. */
  call(system: RpcSystem, method: string, protocol: string): FrontCall;
}

/** Begins a request: its id, its observation, its access log line when the answer closes. */
export function beginRequest(
  req: NodeRequest,
  res: NodeResponse,
  observer: Observer,
  log: Logger,
  clientOf: ClientAddressOf,
): FrontRequest {
  const started = process.hrtime.bigint();
  const client = clientOf(req);
  const target = req.url ?? "/";
  const q = target.indexOf("?");
  const path = q < 0 ? target : target.slice(0, q);
  const given = req.headers["x-request-id"];
  const requestId = typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
  res.setHeader("x-request-id", requestId);
  // Every answer is read as the type it says (docs/security.md): an error text echoing
  // input is never sniffed into HTML.
  res.setHeader("x-content-type-options", "nosniff");
  const observed = observer.begin(req, res, path);
  const front: FrontRequest = {
    requestId,
    client,
    path,
    query: q < 0 ? "" : target.slice(q + 1),
    observed,
    route: undefined,
    protocol: "http",
    values: undefined,
    finally: undefined,
    waitedMs: 0,
    admission: "not gated",
    refused: false,
    refusedCall(system, method, protocol) {
      front.protocol = protocol;
      front.refused = true;
      observed.rpc(system, method);
      return observed.outcome;
    },
    call(system, method, protocol) {
      front.protocol = protocol;
      observed.rpc(system, method);
      const values = new CallValues()
        .set(requestIdKey, requestId)
        .set(clientAddressKey, client)
        .set(authorizationLinesKey, countAuthorizationLines(req.rawHeaders))
        .set(callOutcomeKey, observed.outcome);
      front.values = values;
      return { outcome: observed.outcome, values, waitedMs: front.waitedMs };
    },
  };
  res.once("close", () => {
    try {
      front.finally?.();
      logRequest();
    } catch (error) {
      // The answer is out; what failed is its observation. The process serves on.
      log.error("request observation failed", { requestId, ...describeError(error) });
    }
  });
  const logRequest = () => {
    // A response that never finished was cut short by the client (nginx's 499).
    // writableEnded too: an HTTP/2 stream reset before any answer reads as finished.
    const status = res.writableEnded && res.writableFinished ? res.statusCode : 499;
    const durationNs = process.hrtime.bigint() - started;
    observed.route = front.route;
    observed.end(status, Number(durationNs) / 1e9);
    if (log.debugging) {
      log.debug("call", {
        requestId,
        route: front.route,
        protocol: front.protocol,
        status,
        admission: front.admission,
        waitedMs: Math.round(front.waitedMs * 1000) / 1000,
        durationMs: Number(durationNs / 1000n) / 1000,
      });
    }
    if (front.refused) return;
    // No spread of the span's ids: a constant shape (an absent id is left out of the line).
    const ids = observed.logFields;
    log.info("request", {
      requestId,
      traceId: ids.traceId,
      spanId: ids.spanId,
      client,
      method: req.method,
      path: path.slice(0, MAX_SHOWN_PATH),
      route: front.route,
      protocol: front.protocol,
      httpVersion: req.httpVersion,
      status,
      durationMs: Number(durationNs / 1000n) / 1000,
    });
  };
  return front;
}

/**
 * The send deadline (SEND_TIMEOUT_MS, docs/security.md): an answer handed
 * to Node that the client does not take within `ms` (an HTTP/2 stream whose
 * window the client leaves at 0, an HTTP/1.1 reader that stopped reading)
 * is cut: the stream reset (CANCEL), the HTTP/1.1 connection closed. Its
 * buffers and its stream are freed, and the access log says 499. An answer
 * still being written (a stream of messages) is not watched: it is its own
 * call's business.
 */
export function watchSend(res: NodeResponse, ms: number): void {
  if (res.writableFinished || !res.writableEnded || res.destroyed) return;
  const timer = setTimeout(() => {
    if (res.writableFinished) return;
    const { stream } = res as { stream?: { close(code: number): void } };
    if (stream) stream.close(http2.constants.NGHTTP2_CANCEL);
    else res.destroy();
  }, ms);
  timer.unref();
  res.once("close", () => clearTimeout(timer));
}

/**
 * `Authorization` field lines as sent (HTTP/1.1 lines, h2 header fields: gRPC
 * metadata values), from `rawHeaders`: Node's `req.headers` keeps the first
 * and drops the others. The count, the scheme and the first value leave this function.
 */
function countAuthorizationLines(rawHeaders: readonly string[]): AuthorizationLines {
  let count = 0;
  let anyBearer = false;
  let first: string | undefined;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    if (name.length === 13 && name.toLowerCase() === "authorization") {
      const value = rawHeaders[i + 1] ?? "";
      count++;
      first ??= trimHttpBlanks(value);
      if (isBearer(value)) anyBearer = true;
    }
  }
  return { count, anyBearer, first };
}

/**
 * What `Headers` strips around a value: HTTP whitespace (RFC 9110 OWS, and
 * CR/LF). A scan from each end, linear in the value's length whatever it
 * holds (docs/security.md: no regular expression before authentication).
 */
export function trimHttpBlanks(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isHttpBlank(value.charCodeAt(start))) start++;
  while (end > start && isHttpBlank(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

const isHttpBlank = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/**
 * The guard: runs `handle` for one request. A throw (or a rejection) is that
 * request's 500 (or, once its answer has begun, its connection cut), logged
 * with its cause and request id; the process serves on. A client that went
 * away mid-answer is no failure: the access log says 499.
 */
export function guarded(
  log: Logger,
  handle: (req: NodeRequest, res: NodeResponse) => Promise<void> | void,
): (req: NodeRequest, res: NodeResponse) => void {
  return (req, res) => {
    const fail = (error: unknown) => {
      // Not req.destroyed: a request whose body was read to its end is destroyed too
      // (autoDestroy), and its client still waits for an answer.
      if (res.destroyed || res.writableEnded) return;
      try {
        const requestId = res.getHeader("x-request-id");
        log.error("request failed", {
          requestId: typeof requestId === "string" ? requestId : undefined,
          path: (req.url ?? "").split("?")[0]?.slice(0, MAX_SHOWN_PATH),
          ...describeError(error),
        });
        sendError(req, res, legacyError(500, INTERNAL_MESSAGE));
      } catch {
        // Not even an error answer could be written: cut this request's connection.
        res.destroy();
      }
    };
    try {
      const done = handle(req, res);
      if (done) done.catch(fail);
    } catch (error) {
      fail(error);
    }
  };
}
