/**
 * A small outbound HTTP(S) GET for peers that are not trusted to behave (the
 * issuer's JWKS): node:http/https rather than global fetch, whose undici can
 * crash the process when an unread body meets the peer's close
 * (nodejs/undici#5360). Here:
 * - one deadline covers connecting, the headers and the whole body (a peer
 *   dripping a byte at a time still times out);
 * - redirects are refused, and so is any status outside 2xx, unread;
 * - the body is capped: a declared Content-Length over the cap is refused
 *   before reading, an undeclared one is cut off at the cap;
 * - whatever the outcome, the request is destroyed (a fresh connection per
 *   call, never pooled), so no response or socket is left half read, and
 *   every 'error' event has a listener;
 * - failures are `OutboundError`s whose message is a short cause.
 */
import http from "node:http";
import https from "node:https";

export interface FetchLimitedOptions {
  /** The whole call, from connecting to the body's last byte. */
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
}

export interface LimitedResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

export type OutboundFailure =
  | "status" // answered outside 2xx
  | "redirect" // answered 3xx
  | "too-large" // declared or sent more than maxBytes
  | "timeout"
  | "aborted" // the caller's signal
  | "truncated" // closed before the body was complete
  | "protocol" // not HTTP, or headers too large
  | "network"; // refused, reset before an answer, DNS…

export class OutboundError extends Error {
  override readonly name = "OutboundError";
  /** The status of a "status" or "redirect" failure. */
  readonly status: number | undefined;
  constructor(
    readonly kind: OutboundFailure,
    message: string,
    options: ErrorOptions & { status?: number } = {},
  ) {
    super(message, { cause: options.cause });
    this.status = options.status;
  }
}

/** The largest header section accepted (Node's default, pinned so a flag cannot widen it). */
const MAX_HEADER_BYTES = 16 * 1024;

export function fetchLimited(
  url: string | URL,
  options: FetchLimitedOptions,
): Promise<LimitedResponse> {
  const { timeoutMs, maxBytes, signal } = options;
  const target = new URL(url);
  if (target.protocol !== "http:" && target.protocol !== "https:") {
    return Promise.reject(new OutboundError("protocol", `unsupported protocol ${target.protocol}`));
  }
  if (signal?.aborted) {
    return Promise.reject(new OutboundError("aborted", "aborted", { cause: signal.reason }));
  }
  const request = target.protocol === "https:" ? https.request : http.request;

  return new Promise((resolve, reject) => {
    let settled = false;
    const req = request(target, {
      method: "GET",
      headers: { ...options.headers, connection: "close" },
      agent: false,
      maxHeaderSize: MAX_HEADER_BYTES,
    });
    /** The one exit: stops the clock, destroys request, response and socket, settles once. */
    const settle = (outcome: LimitedResponse | OutboundError) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      signal?.removeEventListener("abort", onAbort);
      req.destroy();
      if (outcome instanceof OutboundError) reject(outcome);
      else resolve(outcome);
    };
    const fail = (
      kind: OutboundFailure,
      message: string,
      extra?: { status?: number; cause?: unknown },
    ) => settle(new OutboundError(kind, message, extra));
    const deadline = setTimeout(
      () => fail("timeout", `timed out after ${timeoutMs} ms`),
      timeoutMs,
    );
    const onAbort = () => fail("aborted", "aborted", { cause: signal?.reason });
    signal?.addEventListener("abort", onAbort, { once: true });

    // Stays attached after settling: a late parse error or reset is ignored, never unhandled.
    req.on("error", (error: NodeJS.ErrnoException) => {
      const [kind, message] = requestFailure(error);
      fail(kind, message, { cause: error });
    });
    req.on("response", (res) => {
      res.on("error", () => fail("truncated", "connection closed mid-body"));
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        return fail("redirect", `redirect refused (${status})`, { status });
      }
      if (status < 200 || status > 299) {
        return fail("status", `answered HTTP ${status}`, { status });
      }
      const declared = Number(res.headers["content-length"]); // NaN when not declared
      if (declared > maxBytes) return fail("too-large", `body over ${maxBytes} bytes`);
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) fail("too-large", `body over ${maxBytes} bytes`);
        else chunks.push(chunk);
      });
      res.on("end", () => {
        if (!res.complete) fail("truncated", "connection closed mid-body");
        else settle({ status, headers: res.headers, body: Buffer.concat(chunks) });
      });
      res.on("close", () => fail("truncated", "connection closed mid-body"));
    });
    req.end();
  });
}

/** A request error (no answer yet, or one that is not HTTP) as a kind and a short cause. */
function requestFailure(error: NodeJS.ErrnoException): [OutboundFailure, string] {
  const code = error.code ?? error.message;
  if (code.startsWith("HPE_")) return ["protocol", `not a valid HTTP answer (${code})`];
  if (code === "ECONNRESET") return ["network", "connection closed before an answer"];
  return ["network", `connection failed (${code})`];
}
