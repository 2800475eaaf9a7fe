/**
 * The front: a route table. Every request on the port is matched by its
 * exact request target (no URL parsing that could read `//host/Restore` as a
 * host) to one route: an RPC method (negotiation picks its protocol
 * adapter, or its refusal), /healthz and its kin, /metrics, the docs, a
 * legacy path; or to the fallback, which negotiation answers: gRPC's
 * UNIMPLEMENTED to the gRPC family and 404 to everything else. What every
 * request gets (request id, access log, observation, the guard) is
 * src/http/front.ts. Building it does not listen; that is main.ts's job.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "@bufbuild/protobuf";
import type { ConnectError, ConnectRouter } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { type AdmissionConfig, DEFAULT_ADMISSION } from "../admission/admission";
import { SHUTDOWN } from "../call/context";
import type { ConnectionLimits, Timeouts } from "../config";
import type { Deps } from "../deps";
import { LEGACY_PROFILE_NAME } from "../legacy/profile";
import {
  createObserver,
  type DoorRefusal,
  type Observer,
  UNKNOWN_RPC_METHOD,
} from "../observability/observer";
import { createCodecs } from "../protocols/codecs";
import { type Negotiation, negotiate, writeRefusal } from "../protocols/negotiate";
import { type ServeOptions, serveRpc } from "../protocols/serve";
import { createPipeline, type Pipeline, PUBLIC_SERVICES } from "../rpc/pipeline";
import type { Transcoder } from "../transcoder/transcoder";
import { MAX_REQUEST_BYTES } from "../wire/body";
import type { NodeRequest, NodeResponse } from "../wire/http";
import { type PreparedError, sendPrepared } from "../wire/plain";
import { createAdmissionGate, type GatedRoute } from "./admission";
import { createClientAddressOf } from "./client-address";
import { type CorsPolicy, createCorsPolicy } from "./cors";
import { createDocsRoutes, type DemoCredential } from "./docs";
import { beginRequest, type FrontRequest, guarded, MAX_SHOWN_PATH, watchSend } from "./front";
import { createHealthEndpoints, HEALTH_PATHS } from "./health";
import { createListener, type ListenerTls } from "./listener";
import { serviceOpenApi } from "./openapi";
import { createServiceTranscoder, exchangeOf, pipelineInvoker } from "./transcoding";

export interface HttpServer {
  listen(port: number, host: string): Promise<AddressInfo>;
  /**
   * With `opsPort` on: listens for /metrics and the probes on a port of
   * their own (HTTP/1.1, cleartext), apart from the API's.
   */
  listenOps(port: number, host: string): Promise<AddressInfo>;
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
  /** What is served (default: the service's routes()); the conformance program serves its own. */
  readonly routes?: (router: ConnectRouter) => ConnectRouter;
  /** Services callable without credentials (default: health and reflection). */
  readonly publicServices?: ReadonlySet<string>;
  /** Resolves google.protobuf.Any in JSON messages (the conformance service's). */
  readonly jsonRegistry?: Registry;
  /** The largest RPC request message (default 1 MiB, MAX_REQUEST_BYTES). */
  readonly maxRequestBytes?: number;
  /** PUBLIC_URL: the server URL of /openapi.json; absent: the URL it was fetched with. */
  readonly publicUrl?: string;
  /** Shown on /docs when the demo fixture is loaded. */
  readonly demoCredentials?: readonly DemoCredential[];
  /** TLS on the port; absent: cleartext. */
  readonly tls?: ListenerTls;
  /** Admission control (docs/operations.md, "Overload"); absent: DEFAULT_ADMISSION. */
  readonly admission?: AdmissionConfig;
  /** Limits on connections; absent: DEFAULT_CONNECTION_LIMITS. */
  readonly connections?: ConnectionLimits;
  /** TRUSTED_PROXIES: addresses and CIDR ranges whose X-Forwarded-For is believed; absent: none. */
  readonly trustedProxies?: readonly string[];
  /**
   * OPS_PORT set: /metrics is served on the operations port only (listenOps),
   * not on the API's; the probes on both. Absent: everything on one port.
   */
  readonly opsPort?: boolean;
}

/**
 * One entry of the route table: whether it serves a request, and if so what
 * it found, as a `Match` that serves (and, under admission, refuses) that
 * request with what it found: no state passes through the front.
 */
interface Route {
  match(front: FrontRequest, req: NodeRequest): Match | undefined;
}

/**
 * A request a route took. One with `refuse` runs under admission
 * (src/http/admission.ts) unless `exempt`; one without (health, /metrics) is
 * never refused.
 */
interface Match extends Partial<Pick<GatedRoute, "refuse" | "clientTimeoutMs">> {
  /** The declared route, for logs and metrics (never a raw path). */
  readonly route: string;
  serve(req: NodeRequest, res: NodeResponse, front: FrontRequest): Promise<void> | void;
  /** It passes without admission: a public service (health, reflection), or a request the route refuses itself at once (a wrong verb or content type). */
  readonly exempt?: boolean;
}

export function createHttpServer(
  deps: Deps,
  timeouts: Timeouts,
  options: HttpServerOptions = { corsAllowedOrigins: [] },
): HttpServer {
  const shutdown = new AbortController();
  const pipeline = createPipeline(deps, {
    callDeadlineMs: timeouts.callDeadlineMs,
    routes: options.routes,
    publicServices: options.publicServices,
  });
  const serving: ServeOptions = {
    pipeline,
    codecs: createCodecs(options.jsonRegistry),
    shutdownSignal: shutdown.signal,
    maxRequestBytes: options.maxRequestBytes ?? MAX_REQUEST_BYTES,
  };
  // Every rule of every method served: the legacy paths and the standard bindings, one table.
  const transcoder = createServiceTranscoder(
    [...pipeline.routes.values()].map((r) => r.method),
    options.jsonRegistry,
  );
  const cors = createCorsPolicy(options.corsAllowedOrigins);
  const observer = options.observer ?? createObserver(undefined, undefined);
  const health = createHealthEndpoints(deps.healthy);
  observer.watchReadiness(health.ready);
  // /openapi.json from the transcoder's bindings, each as its profile serves it.
  const docs = createDocsRoutes((serverUrl) => serviceOpenApi(transcoder.bindings, serverUrl), {
    publicUrl: options.publicUrl,
    demo: options.demoCredentials,
  });

  const gate = createAdmissionGate(
    options.admission ?? DEFAULT_ADMISSION,
    deps.log,
    observer.admission,
    timeouts.callDeadlineMs,
  );
  if (gate.admission) observer.watchAdmission(gate.admission);
  const healthRoute: Route = {
    match: (front) =>
      HEALTH_PATHS.has(front.path)
        ? { route: front.path, serve: (req, res) => health.handle(req, res, front.path) }
        : undefined,
  };
  const metricsRoute: Route = {
    match(front) {
      const metrics = observer.metricsRoute(front.path);
      return metrics
        ? { route: front.path, serve: (req, res) => metrics.handle(req, res) }
        : undefined;
    },
  };
  const opsApart = options.opsPort === true;
  const table: readonly Route[] = [
    rpcRoute(pipeline, serving, cors, options.publicServices ?? PUBLIC_SERVICES, gate.plainRefusal),
    healthRoute,
    ...(opsApart ? [] : [metricsRoute]),
    {
      match(front) {
        const route = docs.route(front.path);
        if (route === undefined) return undefined;
        return {
          route,
          serve: (req, res) => docs.handle(req, res, front.path),
          refuse: (req, res, _front, error) => sendPrepared(req, res, gate.plainRefusal(error)),
        };
      },
    },
    transcodedRoute(transcoder, pipeline, serving, cors, gate.plainRefusal),
  ];

  const clientOf = createClientAddressOf(options.trustedProxies ?? []);
  const serveByTable = (
    routes: readonly Route[],
    front: FrontRequest,
    req: NodeRequest,
    res: NodeResponse,
  ) => {
    for (const route of routes) {
      const match = route.match(front, req);
      if (match === undefined) continue;
      front.route = match.route;
      const { refuse } = match;
      if (!refuse || match.exempt) gate.dismiss(req);
      if (refuse && !match.exempt) {
        const gated: GatedRoute = {
          serve: match.serve,
          refuse,
          clientTimeoutMs: match.clientTimeoutMs,
        };
        return front.observed.run(() => gate.pass(front, req, res, gated));
      }
      return front.observed.run(() => match.serve(req, res, front));
    }
    gate.dismiss(req);
    return front.observed.run(() => notServed(req, res, front));
  };
  /** A refusal at the door, in the metrics, and at debug level in a line of its own. */
  const refusedAtTheDoor = (req: NodeRequest, refusal: DoorRefusal, started: number) => {
    const ms = performance.now() - started;
    observer.refused(req, refusal, ms / 1000);
    if (deps.log.debugging) {
      deps.log.debug("call refused at the door", {
        route: refusal.route,
        status: refusal.status,
        code: codeToString(refusal.code),
        durationMs: Math.round(ms * 1000) / 1000,
      });
    }
  };
  /**
   * The door (docs/operations.md, "Admission control"): while calls wait, a
   * call of the API asks admission before the front does anything for it, so
   * that a refusal costs about what Node's own handling of a request costs.
   * True: it was refused and answered.
   */
  const door = (req: NodeRequest, res: NodeResponse): boolean => {
    const admission = gate.admission;
    if (!admission || admission.free) return false;
    const started = performance.now();
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    const method = pipeline.routes.get(path);
    if (method) {
      if ((options.publicServices ?? PUBLIC_SERVICES).has(method.method.parent.typeName)) {
        return false;
      }
      const negotiation = negotiate(req, method);
      if (!negotiation.ok) return false;
      const { adapter, type } = negotiation;
      return gate.atTheDoor(req, method.path, adapter.clientTimeoutMs(req), (error) => {
        if (cors.handle(req, res)) return;
        req.resume();
        adapter.writeError(res, type, new Headers(), new Headers(), error);
        refusedAtTheDoor(
          req,
          {
            system: adapter.rpcSystem,
            method: method.path.slice(1),
            route: method.path,
            code: error.code,
            status: res.statusCode,
          },
          started,
        );
      });
    }
    const found = transcoder.match(req.method ?? "GET", path);
    if (found.kind !== "found") return false;
    const { binding } = found;
    const legacy = binding.profile.name === LEGACY_PROFILE_NAME;
    return gate.atTheDoor(req, binding.template.source, undefined, (error) => {
      if (cors.handle(req, res)) return;
      req.resume();
      if (legacy) sendPrepared(req, res, gate.plainRefusal(error));
      else void binding.profile.fail(exchangeOf(req, res, serving.maxRequestBytes), error);
      refusedAtTheDoor(
        req,
        {
          system: legacy ? "docflow_legacy" : "http_json",
          method: `${binding.method.parent.typeName}/${binding.method.name}`,
          route: binding.template.source,
          code: error.code,
          status: res.statusCode,
        },
        started,
      );
    });
  };
  const handlerOf = (routes: readonly Route[]) =>
    // Not async: the guard takes the promise a route returns (one promise a request fewer).
    guarded(deps.log, (req, res) => {
      if (door(req, res)) return;
      const front = beginRequest(req, res, observer, deps.log, clientOf);
      const served = serveByTable(routes, front, req, res);
      if (!served) return watchSend(res, timeouts.sendMs);
      return served.then(() => watchSend(res, timeouts.sendMs));
    });

  const listener = createListener(
    handlerOf(table),
    timeouts,
    deps.log,
    options.tls,
    options.connections,
    (target) => {
      const path = target.split("?", 1)[0] ?? "";
      return HEALTH_PATHS.has(path) || observer.metricsRoute(path) !== undefined;
    },
  );
  observer.watchConnections(listener.stats);
  const ops = opsApart
    ? createOpsListener(handlerOf([healthRoute, metricsRoute]), timeouts)
    : undefined;
  return {
    async listen(port, host) {
      const address = await listener.listen(port, host);
      // The server of /openapi.json, unless PUBLIC_URL names it: this one address, or "/".
      const wildcard = address.address === "0.0.0.0" || address.address === "::";
      const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
      docs.listening(
        wildcard ? undefined : `${options.tls ? "https" : "http"}://${shown}:${address.port}`,
      );
      return address;
    },
    listenOps(port, host) {
      if (!ops) throw new Error("the operations port is off (opsPort)");
      return ops.listen(port, host);
    },
    async drain(drainMs) {
      health.startDraining();
      if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
    },
    async close() {
      health.startDraining();
      // Refusals held back (pacing) are answered now, before connections are closed.
      gate.answerHeld();
      shutdown.abort(SHUTDOWN);
      await Promise.all([listener.close(), ops?.close()]);
      gate.stop();
    },
  };
}

/**
 * The operations port (OPS_PORT): /metrics and the probes, HTTP/1.1 in
 * cleartext, for Prometheus and the kubelet inside the cluster. Its own
 * timeouts are the API port's; nothing else is served on it (404).
 */
function createOpsListener(
  handle: (req: NodeRequest, res: NodeResponse) => void,
  timeouts: Timeouts,
): { listen(port: number, host: string): Promise<AddressInfo>; close(): Promise<void> } {
  const server = http.createServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      keepAliveTimeout: timeouts.keepAliveMs,
    },
    handle,
  );
  return {
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          resolve(server.address() as AddressInfo);
        });
      }),
    close: () =>
      new Promise((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

/**
 * /<package>.<Service>/<Method>: CORS, then negotiation (src/protocols/negotiate.ts):
 * the adapter that serves the call, or the refusal the request gets.
 */
function rpcRoute(
  pipeline: Pipeline,
  serving: ServeOptions,
  cors: CorsPolicy,
  publicServices: ReadonlySet<string>,
  plainRefusal: (error: ConnectError) => PreparedError,
): Route {
  return {
    match(front, req) {
      const method = pipeline.routes.get(front.path);
      if (!method) return undefined;
      // Negotiated once a request, whichever of admission and serving asks first.
      const negotiation: Negotiation = negotiate(req, method);
      return {
        route: method.path,
        // Health and reflection; and a request negotiation refuses (405, 415, 505): its
        // answer costs no more than a refusal would, and says what is really wrong.
        exempt: publicServices.has(method.method.parent.typeName) || !negotiation.ok,
        clientTimeoutMs: (req) =>
          negotiation.ok ? negotiation.adapter.clientTimeoutMs(req) : undefined,
        refuse(req, res, front, error) {
          if (cors.handle(req, res)) return;
          req.resume();
          // Not reached: a request negotiation refuses is exempt (above). Kept for the types.
          if (!negotiation.ok) return sendPrepared(req, res, plainRefusal(error));
          const { adapter, type } = negotiation;
          front.refusedCall(adapter.rpcSystem, method.path.slice(1), adapter.name).code =
            error.code;
          // In the request's own form (its codec; a Connect stream's end message), as any error of a call.
          adapter.writeError(res, type, new Headers(), new Headers(), error);
        },
        serve(req, res, front) {
          if (cors.handle(req, res)) return;
          if (!negotiation.ok) {
            // The access log names the protocol the request spoke (a verb it does not take).
            if (negotiation.speaks) front.protocol = negotiation.speaks.name;
            writeRefusal(req, res, negotiation.refusal);
            return;
          }
          const { adapter } = negotiation;
          const call = front.call(adapter.rpcSystem, method.path.slice(1), adapter.name);
          return serveRpc(serving, negotiation, method, call, req, res);
        },
      };
    },
  };
}

/**
 * The `google.api.http` bindings (src/transcoder): the legacy paths and any
 * standard binding, one table. CORS first, then the binding the method and
 * the path pick, served by its profile.
 */
function transcodedRoute(
  transcoder: Transcoder,
  pipeline: Pipeline,
  serving: ServeOptions,
  cors: CorsPolicy,
  plainRefusal: (error: ConnectError) => PreparedError,
): Route {
  const invoker = pipelineInvoker(pipeline, serving.shutdownSignal);
  return {
    match(front, req) {
      const found = transcoder.match(req.method ?? "GET", front.path);
      if (found.kind === "not-found") return undefined;
      const binding = found.kind === "found" ? found.binding : found.first;
      const legacy = binding.profile.name === LEGACY_PROFILE_NAME;
      const method = `${binding.method.parent.typeName}/${binding.method.name}`;
      return {
        route: binding.template.source,
        // A wrong verb is answered 405 at once: it costs less than a refusal.
        exempt: found.kind !== "found",
        refuse(req, res, front, error) {
          if (cors.handle(req, res)) return;
          req.resume();
          const outcome = front.refusedCall(
            legacy ? "docflow_legacy" : "http_json",
            method,
            legacy ? "legacy" : "http",
          );
          outcome.code = error.code;
          outcome.method = method;
          if (legacy) return sendPrepared(req, res, plainRefusal(error));
          return binding.profile.fail(exchangeOf(req, res, serving.maxRequestBytes), error);
        },
        serve(req, res, front) {
          if (cors.handle(req, res)) return;
          // A legacy call is named by the pipeline's outermost interceptor, once the verb chose it.
          const call = legacy
            ? front.call("docflow_legacy", UNKNOWN_RPC_METHOD, "legacy")
            : front.call("http_json", method, "http");
          const exchange = exchangeOf(req, res, serving.maxRequestBytes);
          if (found.kind === "method-not-allowed") {
            return binding.profile.methodNotAllowed(
              exchange,
              found.allowed,
              binding.template.source,
            );
          }
          return transcoder.serve(found, front.query, exchange, invoker, {
            req,
            res,
            front: call,
            binding,
            protocolName: legacy ? "legacy" : "http",
            url: legacy ? binding.template.source : front.path,
          });
        },
      };
    },
  };
}

/**
 * No route: what a gRPC server answers for a method it does not serve (docs/api.md
 * §3: 200, grpc-status 12, trailers-only; grpcurl and buf curl rely on it),
 * else a 404; negotiate (src/protocols/negotiate.ts) says which.
 */
function notServed(req: NodeRequest, res: NodeResponse, front: FrontRequest): void {
  const { refusal } = negotiate(req, undefined, front.path.slice(0, MAX_SHOWN_PATH));
  if (refusal.kind === "unimplemented") {
    const { adapter, error } = refusal;
    front.call(adapter.rpcSystem, UNKNOWN_RPC_METHOD, adapter.name).outcome.code = error.code;
  }
  writeRefusal(req, res, refusal);
}
