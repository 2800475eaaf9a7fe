/**
 * OpenTelemetry traces (docs/observability.md), loaded only when tracing is
 * configured: every package of the SDK is imported here, dynamically, so a
 * service without OTEL_* settings loads no SDK, no context manager and no
 * MongoDB command monitoring.
 *
 * - One SERVER span per request, made at the front (the HTTP instrumentation
 *   does not see cleartext HTTP/2), child of the caller's traceparent.
 * - A CLIENT span per MongoDB command sent during a request, from the
 *   driver's command monitoring: names and addresses, never the query.
 * - Export failures never change a response and are logged at most once a minute.
 */
import { randomUUID } from "node:crypto";
import type { Span, TextMapPropagator } from "@opentelemetry/api";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import type { MongoClient } from "mongodb";
import type { LogFields, Logger } from "../log";
import { SERVICE_VERSION } from "../version";
import type { NodeRequest } from "../wire/http";
import { commandCollection, knownMethod, METRICS_PATH, protocolVersion } from "./metrics";
import type { RequestSpan, RequestTracer } from "./observer";
import { UNKNOWN_RPC_METHOD } from "./observer";
import type { TracingConfig } from "./otel-config";

/** What `knownMethod` makes of a method the HTTP conventions do not name. */
const UNKNOWN_HTTP_METHOD = "_OTHER";
/** The method part of a span name: the conventions name an unknown method's span "HTTP". */
const spanMethod = (method: string) => (method === UNKNOWN_HTTP_METHOD ? "HTTP" : method);

/** Requests that get no span: probes, scrapes and grpc health. */
const UNTRACED: ReadonlySet<string> = new Set(["/livez", "/readyz", "/healthz", METRICS_PATH]);
const UNTRACED_PREFIX = "/grpc.health.v1.Health/";
const EXPORT_FAILURE_LOG_MS = 60_000;
const MAX_SHOWN_PATH = 200;

export interface Tracing {
  readonly tracer: RequestTracer;
  /** Makes CLIENT spans of the client's commands (turn on `monitorCommands`). */
  attach(client: MongoClient): void;
  /** traceId and spanId of the active span, for log lines written inside a request. */
  logFields(): LogFields | undefined;
  /** Exports what is left, within `timeoutMs`. */
  shutdown(timeoutMs: number): Promise<void>;
}

export interface TracingOptions {
  readonly config: TracingConfig;
  readonly log: Logger;
  /** Tests: spans go here, one by one, instead of to the OTLP exporter. */
  readonly exporter?: SpanExporter;
}

export async function startTracing(options: TracingOptions): Promise<Tracing> {
  const { config, log } = options;
  const api = await import("@opentelemetry/api");
  const core = await import("@opentelemetry/core");
  const sdk = await import("@opentelemetry/sdk-trace");
  const { resourceFromAttributes } = await import("@opentelemetry/resources");
  const { AsyncLocalStorageContextManager } = await import("@opentelemetry/context-async-hooks");

  const exporter = options.exporter ?? (await otlpExporter(config));
  let lastFailureLog = -Infinity;
  const guarded: SpanExporter = {
    export(spans, done) {
      exporter.export(spans, (result) => {
        if (result.code !== core.ExportResultCode.SUCCESS) {
          const now = Date.now();
          if (now - lastFailureLog >= EXPORT_FAILURE_LOG_MS) {
            lastFailureLog = now;
            log.warn("trace export failed", {
              spans: spans.length,
              error: result.error?.message ?? "unknown",
            });
          }
        }
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
  const processor = options.exporter
    ? new sdk.SimpleSpanProcessor({ exporter: guarded })
    : new sdk.BatchSpanProcessor({ exporter: guarded, ...config.batch });

  const root = (() => {
    switch (config.sampler.replace("parentbased_", "")) {
      case "always_off":
        return new sdk.AlwaysOffSampler();
      case "traceidratio":
        return new sdk.TraceIdRatioBasedSampler(config.samplerRatio);
      default:
        return new sdk.AlwaysOnSampler();
    }
  })();
  const sampler = config.sampler.startsWith("parentbased_")
    ? new sdk.ParentBasedSampler({ root })
    : root;
  const provider = new sdk.TracerProvider({
    sampler,
    resource: resourceFromAttributes({
      ...config.resourceAttributes,
      "service.name": config.serviceName,
      "service.version": SERVICE_VERSION,
      "service.instance.id": randomUUID(),
    }),
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer("docflow-api", SERVICE_VERSION);
  // One context manager per process (test files may start several services).
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const propagator: TextMapPropagator = new core.CompositePropagator({
    propagators: config.propagators.map((p) =>
      p === "tracecontext" ? new core.W3CTraceContextPropagator() : new core.W3CBaggagePropagator(),
    ),
  });

  const idsOf = (span: Span): LogFields => {
    const { traceId, spanId } = span.spanContext();
    return { traceId, spanId };
  };

  const requestTracer: RequestTracer = {
    start(req: NodeRequest, path: string): RequestSpan | undefined {
      if (UNTRACED.has(path) || path.startsWith(UNTRACED_PREFIX)) return undefined;
      const parent = propagator.extract(api.ROOT_CONTEXT, req.headers, api.defaultTextMapGetter);
      const method = knownMethod(req.method);
      const span = tracer.startSpan(
        spanMethod(method),
        {
          kind: api.SpanKind.SERVER,
          attributes: {
            "http.request.method": method,
            // The method as sent, when the conventions do not name it (Node parses only registered methods).
            ...(method === UNKNOWN_HTTP_METHOD
              ? { "http.request.method_original": req.method }
              : {}),
            "url.path": path.slice(0, MAX_SHOWN_PATH),
            "url.scheme": "encrypted" in req.socket && req.socket.encrypted ? "https" : "http",
            "network.protocol.version": protocolVersion(req.httpVersion),
          },
        },
        parent,
      );
      const ctx = api.trace.setSpan(parent, span);
      return {
        logFields: span.isRecording() ? idsOf(span) : {},
        run: (work) => api.context.with(ctx, work),
        end(summary) {
          if (!span.isRecording()) return;
          span.setAttribute("http.response.status_code", summary.status);
          if (summary.route !== undefined) span.setAttribute("http.route", summary.route);
          const rpc = summary.rpc;
          let errorType: string | undefined;
          if (rpc) {
            span.setAttribute("rpc.system.name", rpc.system);
            span.setAttribute("rpc.method", rpc.method);
            if (rpc.statusCode !== undefined) {
              span.setAttribute("rpc.response.status_code", rpc.statusCode);
            }
            if (rpc.serverError) errorType = rpc.statusCode;
          }
          if (errorType === undefined && summary.status >= 500) errorType = String(summary.status);
          span.updateName(
            rpc && rpc.system !== "docflow_legacy" && rpc.method !== UNKNOWN_RPC_METHOD
              ? rpc.method
              : summary.route !== undefined
                ? `${spanMethod(summary.method)} ${summary.route}`
                : spanMethod(summary.method),
          );
          if (errorType !== undefined) {
            span.setAttribute("error.type", errorType);
            span.setStatus({ code: api.SpanStatusCode.ERROR });
          }
          span.end();
        },
      };
    },
  };

  return {
    tracer: requestTracer,
    attach(client) {
      const open = new Map<number, Span>();
      client.on("commandStarted", (event) => {
        const parent = api.trace.getSpan(api.context.active());
        if (!parent?.isRecording()) return;
        const collection = commandCollection(event);
        const colon = event.address.lastIndexOf(":");
        const port = Number(event.address.slice(colon + 1));
        const span = tracer.startSpan(
          collection ? `${event.commandName} ${collection}` : event.commandName,
          {
            kind: api.SpanKind.CLIENT,
            attributes: {
              "db.system.name": "mongodb",
              "db.namespace": event.databaseName,
              "db.operation.name": event.commandName,
              ...(collection !== undefined && { "db.collection.name": collection }),
              "server.address": colon > 0 ? event.address.slice(0, colon) : event.address,
              ...(colon > 0 && Number.isInteger(port) && { "server.port": port }),
            },
          },
          api.context.active(),
        );
        open.set(event.requestId, span);
      });
      client.on("commandSucceeded", (event) => {
        open.get(event.requestId)?.end();
        open.delete(event.requestId);
      });
      client.on("commandFailed", (event) => {
        const span = open.get(event.requestId);
        if (!span) return;
        open.delete(event.requestId);
        const failure = event.failure as Error & { codeName?: unknown };
        span.setAttribute(
          "error.type",
          typeof failure.codeName === "string" ? failure.codeName : failure.name,
        );
        span.setStatus({ code: api.SpanStatusCode.ERROR });
        span.end();
      });
    },
    logFields() {
      const span = api.trace.getSpan(api.context.active());
      return span?.isRecording() ? idsOf(span) : undefined;
    },
    async shutdown(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        provider.shutdown().catch(() => undefined),
        new Promise((resolve) => {
          timer = setTimeout(resolve, timeoutMs);
        }),
      ]);
      clearTimeout(timer);
    },
  };
}

/**
 * The exporter's connections, each with a deadline (docs/security.md,
 * "Outbound fetches"): the exporter's own `timeoutMillis` is a socket idle
 * timer, which a collector dripping a byte at a time resets for ever, and
 * each export stuck so holds one of its 30 slots until tracing stops. Here a
 * connection lives at most `ms`, then is destroyed (the export fails, and is
 * retried on a fresh one within the exporter's deadline); none is kept alive.
 * Its body is capped by the exporter itself (4 MiB), and it follows no redirect.
 */
function deadlineAgent(ms: number) {
  return async (protocol: string) => {
    const { Agent } =
      protocol === "https:" ? await import("node:https") : await import("node:http");
    const agent = new Agent({ keepAlive: false });
    const create = agent.createConnection.bind(agent);
    agent.createConnection = (options, callback) => {
      const socket = create(options, callback);
      const timer = setTimeout(() => {
        socket?.destroy(
          Object.assign(new Error(`export took over ${ms} ms`), { code: "ETIMEDOUT" }),
        );
      }, ms);
      timer.unref();
      socket?.once("close", () => clearTimeout(timer));
      return socket;
    };
    return agent;
  };
}

/** The OTLP exporter of `config` (exported for the outbound-fault tests). */
export async function otlpExporter(config: TracingConfig): Promise<SpanExporter> {
  const options = {
    url: config.url,
    headers: { ...config.headers },
    timeoutMillis: config.timeoutMs,
    httpAgentOptions: deadlineAgent(config.timeoutMs),
  };
  if (config.protocol === "http/json") {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
    return new OTLPTraceExporter(options);
  }
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-proto");
  return new OTLPTraceExporter(options);
}
