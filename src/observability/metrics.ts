/**
 * Prometheus metrics (docs/observability.md): OpenTelemetry semantic
 * convention names mapped to Prometheus (dots → underscores, unit suffix),
 * in a registry of our own, served on GET /metrics. Every label value comes
 * from a fixed set: declared routes and methods, status codes, protocol
 * versions — never a path, id, header or query value.
 */
import { collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { NodeRequest, NodeResponse } from "../wire/http";
import { sendMethodNotAllowed } from "../wire/plain";

export const METRICS_PATH = "/metrics";

/** The OpenTelemetry recommended buckets for durations in seconds. */
export const DURATION_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
];

/** `http.request.method` values; any other method is `_OTHER`. */
const KNOWN_METHODS: ReadonlySet<string> = new Set([
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "DELETE",
  "CONNECT",
  "OPTIONS",
  "TRACE",
  "PATCH",
]);

export function knownMethod(method: string | undefined): string {
  return method !== undefined && KNOWN_METHODS.has(method) ? method : "_OTHER";
}

/** `network.protocol.version`: "1.1" or "2" (Node says "2.0"). */
export function protocolVersion(httpVersion: string): string {
  return httpVersion === "2.0" ? "2" : httpVersion;
}

export interface HttpRequestLabels {
  readonly http_request_method: string;
  readonly http_route?: string;
  readonly http_response_status_code: number;
  readonly network_protocol_version: string;
  readonly error_type?: string;
}

export interface RpcCallLabels {
  readonly rpc_system_name: string;
  readonly rpc_method: string;
  readonly rpc_response_status_code?: string;
  readonly error_type?: string;
}

export interface Metrics {
  requestStarted(): void;
  requestEnded(labels: HttpRequestLabels, seconds: number): void;
  callEnded(labels: RpcCallLabels, seconds: number): void;
  /** GET/HEAD /metrics: the Prometheus text format. */
  handle(req: NodeRequest, res: NodeResponse): Promise<void>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const rpcDuration = new Histogram({
    name: "rpc_server_call_duration_seconds",
    help: "Duration of RPC calls served (gRPC, gRPC-Web, Connect and the legacy bridge), in seconds.",
    labelNames: ["rpc_system_name", "rpc_method", "rpc_response_status_code", "error_type"],
    buckets: [...DURATION_BUCKETS],
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: "http_server_request_duration_seconds",
    help: "Duration of HTTP requests served on the service port, in seconds.",
    labelNames: [
      "http_request_method",
      "http_route",
      "http_response_status_code",
      "network_protocol_version",
      "error_type",
    ],
    buckets: [...DURATION_BUCKETS],
    registers: [registry],
  });
  const active = new Gauge({
    name: "http_server_active_requests",
    help: "HTTP requests being served on the service port.",
    registers: [registry],
  });
  return {
    requestStarted: () => active.inc(),
    requestEnded(labels, seconds) {
      active.dec();
      httpDuration.observe(labels as unknown as Record<string, string | number>, seconds);
    },
    callEnded(labels, seconds) {
      rpcDuration.observe(labels as unknown as Record<string, string>, seconds);
    },
    async handle(req, res) {
      req.resume();
      if (req.method !== "GET" && req.method !== "HEAD") {
        sendMethodNotAllowed(req, res, ["GET", "HEAD"], METRICS_PATH);
        return;
      }
      const body = Buffer.from(await registry.metrics(), "utf8");
      res.statusCode = 200;
      res.setHeader("content-type", registry.contentType);
      res.setHeader("cache-control", "no-store");
      res.setHeader("content-length", String(body.length));
      if (req.method === "HEAD") res.end();
      else res.end(body);
    },
  };
}
