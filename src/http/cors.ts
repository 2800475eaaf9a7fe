/**
 * CORS for the RPC paths (Connect, gRPC-Web) and the legacy paths, from
 * CORS_ALLOWED_ORIGINS. An origin not allowed gets no CORS header at all, so
 * its call behaves exactly as without CORS (the browser blocks the answer).
 * No credentials mode: the API authenticates with the Authorization header,
 * which a page sets itself; cookies play no part, so there is nothing to
 * share with `Access-Control-Allow-Credentials`.
 */
import { cors as connectCors } from "@connectrpc/connect";
import type { NodeRequest, NodeResponse } from "../wire/http";
import { addVary } from "../wire/plain";

/** How long a browser may reuse a preflight answer. */
const MAX_AGE_S = 7_200;

const ALLOW_METHODS = [...new Set([...connectCors.allowedMethods, "GET", "POST"])].join(", ");
const ALLOW_HEADERS = [
  ...new Set([...connectCors.allowedHeaders, "Authorization", "X-Request-Id", "Content-Encoding"]),
].join(", ");
const EXPOSE_HEADERS = [
  ...new Set([
    ...connectCors.exposedHeaders,
    "X-Service-ErrorCode",
    "X-Request-Id",
    "Content-Encoding",
    "ETag",
  ]),
].join(", ");

export interface CorsPolicy {
  /**
   * Adds the CORS headers an allowed origin gets; answers a preflight itself
   * (true: nothing left to do).
   */
  handle(req: NodeRequest, res: NodeResponse): boolean;
}

/** `allowed`: exact origins, or ["*"]. Empty: CORS off. */
export function createCorsPolicy(allowed: readonly string[]): CorsPolicy {
  const any = allowed.includes("*");
  const origins = new Set(allowed);
  return {
    handle(req, res) {
      if (allowed.length === 0) return false;
      addVary(res, "Origin");
      const origin = req.headers.origin;
      if (origin === undefined || !(any || origins.has(origin))) return false;
      res.setHeader("access-control-allow-origin", any ? "*" : origin);
      const isPreflight =
        req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
      if (!isPreflight) {
        res.setHeader("access-control-expose-headers", EXPOSE_HEADERS);
        return false;
      }
      req.resume();
      res.statusCode = 204;
      res.setHeader("access-control-allow-methods", ALLOW_METHODS);
      res.setHeader("access-control-allow-headers", ALLOW_HEADERS);
      res.setHeader("access-control-max-age", String(MAX_AGE_S));
      res.end();
      return true;
    },
  };
}
