/**
 * One port for everything: HTTP/1.1 and cleartext HTTP/2 (told apart by the
 * h2 preface), Connect, gRPC and gRPC-Web on the Connect paths, the legacy
 * paths through the bridge, and /healthz. Building it does not listen; that
 * is main.ts's job.
 */

import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import http from "node:http";
import type { Http2ServerRequest, Http2ServerResponse, Http2Session } from "node:http2";
import http2 from "node:http2";
import net, { type AddressInfo, type Socket } from "node:net";
import { createContextValues } from "@connectrpc/connect";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import {
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import { protoComments } from "../../gen/proto-comments";
import type { App } from "../app";
import { createLegacyBridge, type LegacyBridge, sendError, wantsJson } from "../legacy/bridge";
import { buildOpenApi } from "../legacy/openapi";
import { shutdownKey } from "../rpc/context";
import { INTERNAL_MESSAGE, legacyError } from "../rpc/error-table";
import { createRouter } from "../rpc/router";
import { SERVICE_VERSION } from "../version";
import { createDocsRoutes } from "./docs";

type NodeRequest = IncomingMessage | Http2ServerRequest;
type NodeResponse = ServerResponse | Http2ServerResponse;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

export interface ServiceOptions {
  /** How long in-flight calls may take to finish once shutdown starts. */
  readonly shutdownTimeoutMs: number;
}

export interface Service {
  readonly bridge: LegacyBridge;
  listen(port: number, host: string): Promise<AddressInfo>;
  /** Stops accepting, lets in-flight calls finish, then closes every connection. */
  close(): Promise<void>;
}

export function createService(app: App, options: ServiceOptions): Service {
  const router = createRouter(app);
  const rpcPaths = new Map<string, UniversalHandler>(
    router.handlers.map((h) => [h.requestPath, h]),
  );
  const bridge = createLegacyBridge(router, app);
  const docs = createDocsRoutes(
    buildOpenApi(bridge.routes, { version: SERVICE_VERSION, comments: protoComments }),
  );
  let stopping = false;
  const shutdown = new AbortController();
  let inFlight = 0;
  let idle: (() => void) | undefined;

  const onRequest = (req: NodeRequest, res: NodeResponse) => {
    const started = process.hrtime.bigint();
    const path = (req.url ?? "/").split("?", 1)[0] ?? "/";
    const rpc = rpcPaths.get(path);
    const protocol = rpc
      ? rpcProtocol(req.headers["content-type"])
      : path === "/healthz" || path === "/openapi.json" || path.startsWith("/docs")
        ? "http"
        : "legacy";
    // A caller's X-Request-Id (if sane) or a fresh one: echoed back and logged, to tie the two together.
    const given = req.headers["x-request-id"];
    const requestId = typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader("x-request-id", requestId);
    inFlight++;
    const h1Socket = req.httpVersionMajor === 1 ? (req.socket as Socket) : undefined;
    if (h1Socket) {
      busy.set(h1Socket, (busy.get(h1Socket) ?? 0) + 1);
      if (stopping) res.setHeader("connection", "close");
    }
    res.once("close", () => {
      inFlight--;
      if (h1Socket) {
        const left = (busy.get(h1Socket) ?? 1) - 1;
        if (left > 0) busy.set(h1Socket, left);
        else busy.delete(h1Socket);
        if (stopping && left === 0) h1Socket.end();
      }
      app.log.info("request", {
        requestId,
        method: req.method,
        path,
        protocol,
        httpVersion: req.httpVersion,
        status: res.statusCode,
        durationMs: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
      });
      if (inFlight === 0) idle?.();
    });
    dispatch(req, res, path, rpc).catch((error: unknown) => {
      app.log.error("request failed", {
        path,
        error: error instanceof Error ? error.name : String(error),
      });
      if (!res.headersSent) {
        sendError(res, legacyError(500, INTERNAL_MESSAGE), false);
      } else {
        res.destroy();
      }
    });
  };

  const dispatch = async (
    req: NodeRequest,
    res: NodeResponse,
    path: string,
    rpc: UniversalHandler | undefined,
  ) => {
    if (rpc) {
      const values = createContextValues().set(shutdownKey, shutdown.signal);
      const uRes = await rpc(universalRequestFromNodeRequest(req, res, undefined, values));
      await universalResponseToNodeResponse(uRes, res);
      return;
    }
    if (path === "/healthz") {
      await healthz(req, res);
      return;
    }
    if (docs.handle(req, res, path)) {
      return;
    }
    if (!(await bridge.handle(req, res))) {
      req.resume();
      sendError(res, legacyError(404, `no such path: ${path.slice(0, 200)}`), wantsJson(req));
    }
  };

  const healthz = async (req: NodeRequest, res: NodeResponse) => {
    req.resume();
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("allow", "GET, HEAD");
      sendError(res, legacyError(405, "use GET for /healthz"), false);
      return;
    }
    const ok = !stopping && (await app.healthy());
    const body = JSON.stringify({
      status: ok ? "ok" : stopping ? "stopping" : "database unavailable",
    });
    res.statusCode = ok ? 200 : 503;
    res.setHeader("content-type", "application/json; charset=utf-8");
    res.end(body);
  };

  const h1 = http.createServer(
    { requestTimeout: 60_000, headersTimeout: 20_000, keepAliveTimeout: 5_000 },
    onRequest,
  );
  const h2 = http2.createServer({}, onRequest);
  const sessions = new Set<Http2Session>();
  h2.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
    if (stopping) session.close();
  });
  const sockets = new Set<Socket>();
  const h2Sockets = new WeakSet<Socket>();
  // HTTP/1.1 sockets with a request in progress, and how many.
  const busy = new Map<Socket, number>();
  const tcp = net.createServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.once("data", (first: Buffer) => {
      socket.pause();
      socket.unshift(first);
      const n = Math.min(first.length, H2_PREFACE.length);
      const isH2 = first.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
      if (isH2) h2Sockets.add(socket);
      // The h2 session reads the bytes put back itself; the h1 parser needs the socket flowing.
      (isH2 ? h2 : h1).emit("connection", socket);
      if (!isH2) socket.resume();
    });
    socket.on("error", () => socket.destroy());
  });

  return {
    bridge,
    listen(port, host) {
      return new Promise((resolve, reject) => {
        tcp.once("error", reject);
        tcp.listen(port, host, () => {
          tcp.off("error", reject);
          resolve(tcp.address() as AddressInfo);
        });
      });
    },
    async close() {
      stopping = true;
      shutdown.abort();
      const closed = new Promise<void>((resolve) => tcp.close(() => resolve()));
      for (const session of sessions) session.close();
      for (const socket of sockets) {
        if (!h2Sockets.has(socket) && !busy.has(socket)) socket.destroy();
      }
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          idle = resolve;
          setTimeout(resolve, options.shutdownTimeoutMs).unref();
        });
      }
      for (const session of sessions) session.destroy();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

function rpcProtocol(contentType: string | undefined): string {
  const type = (contentType ?? "").toLowerCase();
  if (type.startsWith("application/grpc-web")) return "grpc-web";
  if (type.startsWith("application/grpc")) return "grpc";
  return "connect";
}
