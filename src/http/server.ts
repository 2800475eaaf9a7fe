/**
 * The front: every request on the port, routed by its exact request target
 * (no URL parsing that could read `//host/Restore` as a host) to an RPC
 * handler, /healthz, the docs, or a legacy path; anything else is a 404.
 * It also writes the access log line. Building it does not listen; that is
 * main.ts's job.
 */

import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { Code, createContextValues } from "@connectrpc/connect";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import {
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import { protoComments } from "../../gen/proto-comments";
import type { Timeouts } from "../config";
import type { Deps } from "../deps";
import { isBearer } from "../domain/bearer";
import { createLegacyBridge } from "../legacy/bridge";
import { buildOpenApi } from "../legacy/openapi";
import { describeError } from "../log";
import { createObserver, type Observer } from "../observability/observer";
import { callOutcomeKey, UNKNOWN_RPC_METHOD } from "../observability/outcome";
import { createConnectUnary } from "../rpc/connect-unary";
import {
  type AuthorizationLines,
  authorizationLinesKey,
  requestIdKey,
  shutdownKey,
} from "../rpc/context";
import { INTERNAL_MESSAGE, legacyError } from "../rpc/error-table";
import { createGrpcUnary } from "../rpc/grpc-unary";
import { createPipeline } from "../rpc/router";
import { encodeGrpcMessage } from "../rpc/undecodable";
import { SERVICE_VERSION } from "../version";
import { createCorsPolicy } from "./cors";
import { createDocsRoutes } from "./docs";
import { createHealthEndpoints, HEALTH_PATHS } from "./health";
import { createListener } from "./listener";
import { type NodeRequest, type NodeResponse, sendError } from "./responder";

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Longest part of an unknown path that is echoed or logged. */
const MAX_SHOWN_PATH = 200;

export interface HttpServer {
  listen(port: number, host: string): Promise<AddressInfo>;
  /**
   * Says "not ready" (/readyz 503) while still serving everything, for
   * `drainMs`, so that load balancers stop sending before connections are refused.
   */
  drain(drainMs: number): Promise<void>;
  /** Stops accepting, sends GOAWAY and Connection: close, lets in-flight calls finish, then closes every connection. */
  close(): Promise<void>;
}

export interface HttpServerOptions {
  /** CORS_ALLOWED_ORIGINS: exact origins, or ["*"]; empty: no CORS. */
  readonly corsAllowedOrigins: readonly string[];
  /** Metrics and traces of every request (src/observability); none when absent. */
  readonly observer?: Observer;
  /**
   * gRPC unary calls on HTTP/2 and binary Connect unary calls take the short
   * paths (src/rpc/grpc-unary.ts, connect-unary.ts); false sends every call
   * through connect-es's handlers (tests compare the two).
   */
  readonly shortPaths?: boolean;
}

export function createHttpServer(
  deps: Deps,
  timeouts: Timeouts,
  options: HttpServerOptions = { corsAllowedOrigins: [] },
): HttpServer {
  const cors = createCorsPolicy(options.corsAllowedOrigins);
  const pipeline = createPipeline(deps, { callDeadlineMs: timeouts.callDeadlineMs });
  // connectNodeAdapter does this same lookup; we do it here because the legacy
  // bridge, health and docs share the port and must see the raw target too, and
  // because every handler is wrapped (undecodable.ts) and gets per-request values.
  const rpcPaths = new Map<string, UniversalHandler>(
    pipeline.handlers.map((h) => [h.requestPath, h]),
  );
  const bridge = createLegacyBridge(pipeline);
  const grpcUnary = createGrpcUnary(pipeline);
  const connectUnary = createConnectUnary(pipeline);
  const shortPath = options.shortPaths ?? true;
  const docs = createDocsRoutes(
    buildOpenApi(bridge.routes, { version: SERVICE_VERSION, comments: protoComments }),
  );
  const health = createHealthEndpoints(deps.healthy);
  const shutdown = new AbortController();
  const observer = options.observer ?? createObserver(undefined, undefined);

  const onRequest = (req: NodeRequest, res: NodeResponse) => {
    const started = process.hrtime.bigint();
    const target = req.url ?? "/";
    const q = target.indexOf("?");
    const path = q < 0 ? target : target.slice(0, q);
    const query = q < 0 ? "" : target.slice(q + 1);
    // A caller's X-Request-Id (if sane) or a fresh one: echoed back and logged, to tie the two together.
    const given = req.headers["x-request-id"];
    const requestId = typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader("x-request-id", requestId);
    const observed = observer.begin(req, res, path);
    let route: string | undefined;
    let protocol = "http";
    res.once("close", () => {
      // A response that never finished was cut short by the client (nginx's 499).
      const status = res.writableFinished ? res.statusCode : 499;
      const durationNs = process.hrtime.bigint() - started;
      observed.route = route;
      observed.end(status, Number(durationNs) / 1e9);
      deps.log.info("request", {
        requestId,
        ...observed.logFields,
        method: req.method,
        path: path.slice(0, MAX_SHOWN_PATH),
        route,
        protocol,
        httpVersion: req.httpVersion,
        status,
        durationMs: Number(durationNs / 1000n) / 1000,
      });
    });

    const dispatch = async () => {
      const rpc = rpcPaths.get(path);
      if (rpc) {
        route = path;
        protocol = rpcProtocol(req.headers["content-type"]);
        if (cors.handle(req, res)) return;
        observed.rpc(protocol === "connect" ? "connectrpc" : "grpc", path.slice(1));
        if (!rpc.allowedMethods.includes(req.method ?? "")) {
          sendError(req, res, legacyError(405, `use ${rpc.allowedMethods.join(" or ")}`), {
            allow: rpc.allowedMethods.join(", "),
          });
          return;
        }
        const values = createContextValues()
          .set(shutdownKey, shutdown.signal)
          .set(requestIdKey, requestId)
          .set(authorizationLinesKey, countAuthorizationLines(req.rawHeaders))
          .set(callOutcomeKey, observed.outcome);
        const toRouter = async (body?: AsyncIterable<Uint8Array>) => {
          const uReq = universalRequestFromNodeRequest(req, res, undefined, values);
          const uRes = await rpc(body ? { ...uReq, body } : uReq);
          await universalResponseToNodeResponse(observed.watch(uRes, protocol === "grpc-web"), res);
        };
        const grpcCall = protocol === "grpc" && shortPath ? grpcUnary.accepts(req, rpc) : undefined;
        const connectCall =
          protocol === "connect" && shortPath ? connectUnary.accepts(req, rpc) : undefined;
        await (grpcCall
          ? grpcUnary.serve(req, res, grpcCall, values, toRouter)
          : connectCall
            ? connectUnary.serve(req, res, connectCall, values, toRouter)
            : toRouter());
        return;
      }
      if (HEALTH_PATHS.has(path)) {
        route = path;
        await health.handle(req, res, path);
        return;
      }
      const metrics = observer.metricsRoute(path);
      if (metrics) {
        route = path;
        await metrics.handle(req, res);
        return;
      }
      const docsRoute = docs.route(path);
      if (docsRoute) {
        route = docsRoute;
        await docs.handle(req, res, path);
        return;
      }
      const candidates = bridge.match(path);
      if (candidates) {
        route = candidates[0]?.path;
        protocol = "legacy";
        if (cors.handle(req, res)) return;
        // The pipeline's outermost interceptor names the method the verb chose.
        observed.rpc("docflow_legacy", UNKNOWN_RPC_METHOD);
        const values = createContextValues()
          .set(shutdownKey, shutdown.signal)
          .set(requestIdKey, requestId)
          .set(authorizationLinesKey, countAuthorizationLines(req.rawHeaders))
          .set(callOutcomeKey, observed.outcome);
        await bridge.handle(req, res, candidates, query, values);
        return;
      }
      if (isGrpc(req.headers["content-type"])) {
        protocol = rpcProtocol(req.headers["content-type"]);
        observed.rpc("grpc", UNKNOWN_RPC_METHOD);
        observed.outcome.code = Code.Unimplemented;
        unimplemented(req, res, path);
        return;
      }
      sendError(req, res, legacyError(404, `no such path: ${path.slice(0, MAX_SHOWN_PATH)}`));
    };

    observed.run(dispatch).catch((error: unknown) => {
      if (res.destroyed || req.destroyed) {
        // The client went away mid-answer: the access log line says 499; nothing failed here.
        return;
      }
      deps.log.error("request failed", {
        requestId,
        ...observed.logFields,
        path: path.slice(0, MAX_SHOWN_PATH),
        ...describeError(error),
      });
      sendError(req, res, legacyError(500, INTERNAL_MESSAGE));
    });
  };

  const listener = createListener(onRequest, timeouts, deps.log);
  return {
    listen: (port, host) => listener.listen(port, host),
    async drain(drainMs) {
      health.startDraining();
      if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
    },
    async close() {
      health.startDraining();
      shutdown.abort();
      await listener.close();
    },
  };
}

/**
 * `Authorization` field lines as sent (HTTP/1.1 lines, h2 header fields: gRPC
 * metadata values), from `rawHeaders`: Node's `req.headers` keeps the first
 * and drops the others. Only the count and the scheme leave this function.
 */
function countAuthorizationLines(rawHeaders: readonly string[]): AuthorizationLines {
  let count = 0;
  let anyBearer = false;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.toLowerCase() === "authorization") {
      count++;
      if (isBearer(rawHeaders[i + 1] ?? "")) anyBearer = true;
    }
  }
  return { count, anyBearer };
}

function isGrpc(contentType: string | undefined): boolean {
  return (contentType ?? "").toLowerCase().startsWith("application/grpc");
}

function rpcProtocol(contentType: string | undefined): string {
  const type = (contentType ?? "").toLowerCase();
  if (type.startsWith("application/grpc-web")) return "grpc-web";
  if (type.startsWith("application/grpc")) return "grpc";
  return "connect";
}

/**
 * What a gRPC server answers for a method it does not serve (SPEC §3): 200,
 * trailers-only, grpc-status 12. Tools such as grpcurl rely on it.
 */
function unimplemented(req: NodeRequest, res: NodeResponse, path: string): void {
  req.resume();
  res.statusCode = 200;
  res.setHeader("content-type", req.headers["content-type"] ?? "application/grpc");
  res.setHeader("grpc-status", "12");
  res.setHeader(
    "grpc-message",
    encodeGrpcMessage(`unknown method ${path.slice(0, MAX_SHOWN_PATH)}`),
  );
  res.end();
}
