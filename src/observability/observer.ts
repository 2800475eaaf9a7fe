/**
 * The front's one hook into observability: each request is observed from
 * its first byte to its 'close' — metrics of every request and of every RPC
 * call (legacy ones included), and the request's SERVER span when tracing is
 * on. The front says what it learnt (the declared route, the RPC method);
 * everything else is decided here.
 */

import { Code } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import type { AdmissionObserver } from "../admission/admission";
import type { LogFields } from "../log";
import type { CallOutcome } from "../rpc/outcome";
import { googleCodeName } from "../transcoder/status";
import type { NodeRequest, NodeResponse } from "../wire/http";
import {
  type AdmissionState,
  type ConnectionCounts,
  type HttpRequestLabels,
  knownMethod,
  METRICS_PATH,
  type Metrics,
  protocolVersion,
  type RpcCallLabels,
} from "./metrics";

/**
 * `rpc.system.name`: `grpc` for gRPC and gRPC-Web, `connectrpc` for Connect,
 * and `docflow_legacy` for the legacy HTTP bridge (our own value: it is none
 * of the registered systems, and it runs the same RPC).
 */
/** How a call came: gRPC (and gRPC-Web), Connect, a legacy path, or a binding of the transcoder. */
export type RpcSystem = "grpc" | "connectrpc" | "docflow_legacy" | "http_json";

/** `rpc.method` of a gRPC/Connect call to a method this service does not serve (never the path itself). */
export const UNKNOWN_RPC_METHOD = "_OTHER";

/** Codes that are the server's fault: `error.type` is set and the span status is ERROR. */
export const SERVER_ERROR_CODES: ReadonlySet<Code> = new Set([
  Code.Unknown,
  Code.DeadlineExceeded,
  Code.Unimplemented,
  Code.Internal,
  Code.Unavailable,
  Code.DataLoss,
]);

/**
 * `rpc.response.status_code`: gRPC (and the legacy bridge) `OK`,
 * `INVALID_ARGUMENT`, …; Connect: the Connect code on errors, nothing on success.
 */
export function statusCodeOf(system: RpcSystem, code: Code | null): string | undefined {
  if (system === "connectrpc") return code === null ? undefined : codeToString(code);
  return code === null ? "OK" : googleCodeName(code);
}

/** What a finished request was, for the tracer. */
export interface RequestSummary {
  readonly method: string;
  readonly route: string | undefined;
  readonly status: number;
  readonly protocolVersion: string;
  readonly rpc:
    | {
        readonly system: RpcSystem;
        readonly method: string;
        readonly statusCode: string | undefined;
        readonly serverError: boolean;
      }
    | undefined;
}

/** One request's span (tracing.ts). */
export interface RequestSpan {
  readonly logFields: LogFields;
  run<T>(work: () => T): T;
  end(summary: RequestSummary): void;
}

/** Starts a SERVER span for a request, or none (not traced, or not sampled). */
export interface RequestTracer {
  start(req: NodeRequest, path: string): RequestSpan | undefined;
}

export interface RequestObservation {
  /** The declared route, once the front knows it. */
  route: string | undefined;
  /** Says the request is a call of `method` (fully qualified, or `_OTHER`). */
  rpc(system: RpcSystem, method: string): void;
  /** Where the pipeline's outermost interceptor (or an adapter answering before it) writes how the call ended. */
  readonly outcome: CallOutcome;
  /** Runs the request's work in its trace context. */
  run<T>(work: () => T): T;
  /** traceId and spanId when a span is recorded. */
  readonly logFields: LogFields;
  end(status: number, seconds: number): void;
}

/** A call admission refused at the door, before the front observed it (the door: src/http/server.ts). */
export interface DoorRefusal {
  readonly system: RpcSystem;
  /** `rpc.method`, fully qualified. */
  readonly method: string;
  /** The declared route. */
  readonly route: string;
  readonly code: Code;
  /** The HTTP status written. */
  readonly status: number;
}

export interface Observer {
  /** A call refused at the door: its call and request metrics, as if the front had observed it. */
  refused(req: NodeRequest, refusal: DoorRefusal, seconds: number): void;
  /** GET /metrics, when metrics are on. */
  metricsRoute(path: string): Metrics | undefined;
  /** Admission's metrics (none when metrics are off). */
  readonly admission: AdmissionObserver | undefined;
  watchAdmission(state: AdmissionState): void;
  watchConnections(counts: ConnectionCounts): void;
  /** What /readyz would answer, read at each scrape (the readiness gauge). */
  watchReadiness(check: () => Promise<boolean>): void;
  begin(req: NodeRequest, res: NodeResponse, path: string): RequestObservation;
}

const NO_FIELDS: LogFields = Object.freeze({});

export function createObserver(
  metrics: Metrics | undefined,
  tracer: RequestTracer | undefined,
): Observer {
  return {
    metricsRoute: (path) => (path === METRICS_PATH ? metrics : undefined),
    watchReadiness: (check) => metrics?.watchReadiness(check),
    admission: metrics?.admission,
    watchAdmission: (state) => metrics?.watchAdmission(state),
    watchConnections: (counts) => metrics?.watchConnections(counts),
    refused(req, refusal, seconds) {
      if (!metrics) return;
      const statusCode = statusCodeOf(refusal.system, refusal.code);
      const serverError = SERVER_ERROR_CODES.has(refusal.code);
      metrics.callEnded(
        callLabels(refusal.system, refusal.method, statusCode, serverError),
        seconds,
      );
      metrics.requestRefused(
        requestLabels(
          knownMethod(req.method),
          refusal.route,
          refusal.status,
          protocolVersion(req.httpVersion),
        ),
        seconds,
      );
    },
    begin(req, _res, path) {
      metrics?.requestStarted();
      const span = tracer?.start(req, path);
      let call: { system: RpcSystem; method: string } | undefined;
      const outcome: CallOutcome = { code: undefined, method: undefined };
      return {
        route: undefined,
        outcome,
        rpc(system, method) {
          call = { system, method };
        },
        run: (work) => (span ? span.run(work) : work()),
        logFields: span?.logFields ?? NO_FIELDS,
        end(status, seconds) {
          const method = knownMethod(req.method);
          const version = protocolVersion(req.httpVersion);
          let rpc: RequestSummary["rpc"];
          // No interceptor ran and no RPC answer was written (405, client gone): not a call.
          if (call && outcome.code !== undefined) {
            const code = outcome.code;
            const statusCode = statusCodeOf(call.system, code);
            const serverError = code !== null && SERVER_ERROR_CODES.has(code);
            const rpcMethod = outcome.method ?? call.method;
            rpc = { system: call.system, method: rpcMethod, statusCode, serverError };
            metrics?.callEnded(
              callLabels(call.system, rpcMethod, statusCode, serverError),
              seconds,
            );
          }
          metrics?.requestEnded(requestLabels(method, this.route, status, version), seconds);
          span?.end({ method, route: this.route, status, protocolVersion: version, rpc });
        },
      };
    },
  };
}

type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** The labels of a call, absent ones left out (no spreads: this runs for every call). */
function callLabels(
  system: RpcSystem,
  method: string,
  statusCode: string | undefined,
  serverError: boolean,
): RpcCallLabels {
  const labels: Writable<RpcCallLabels> = { rpc_system_name: system, rpc_method: method };
  if (statusCode !== undefined) {
    labels.rpc_response_status_code = statusCode;
    if (serverError) labels.error_type = statusCode;
  }
  return labels;
}

/** The labels of a request, absent ones left out (the histogram orders them by its label names). */
function requestLabels(
  method: string,
  route: string | undefined,
  status: number,
  version: string,
): HttpRequestLabels {
  const labels: Writable<HttpRequestLabels> = {
    http_request_method: method,
    http_response_status_code: status,
    network_protocol_version: version,
  };
  if (route !== undefined) labels.http_route = route;
  if (status >= 500) labels.error_type = String(status);
  return labels;
}
