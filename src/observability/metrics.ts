/**
 * Prometheus metrics (docs/observability.md): OpenTelemetry semantic
 * convention names mapped to Prometheus (dots → underscores, unit suffix),
 * in a registry of our own, served on GET /metrics. Every label value comes
 * from a fixed set: declared routes and methods, status codes, protocol
 * versions — never a path, id, header or query value.
 */
import type { CommandStartedEvent, MongoClient } from "mongodb";
import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type { AdmissionObserver } from "../admission/admission";
import type { NodeRequest, NodeResponse } from "../wire/http";
import { sendMethodNotAllowed } from "../wire/plain";
import { KeyedHistogram, type Labels } from "./histogram";

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

/** The OpenTelemetry recommended buckets of db.client.operation.duration, in seconds. */
export const DATABASE_BUCKETS: readonly number[] = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10];

/** `db.operation.name` values: the commands the service sends; any other is `_OTHER`. */
const KNOWN_COMMANDS: ReadonlySet<string> = new Set([
  "find",
  "aggregate",
  "count",
  "distinct",
  "getMore",
  "insert",
  "update",
  "delete",
  "findAndModify",
  "bulkWrite",
  "createIndexes",
  "listIndexes",
  "ping",
  "hello",
  "killCursors",
  "endSessions",
  "commitTransaction",
  "abortTransaction",
]);
/** A collection name as a label: letters, digits, "_" and "." (system collections), bounded. */
const COLLECTION_NAME = /^[A-Za-z_][A-Za-z0-9_.]{0,63}$/;
/** At most this many collection names become label values; any further one is `_OTHER`. */
const MAX_COLLECTIONS = 32;

/** The collection a command addresses, if any (`{find: "boxes"}`, `{getMore: id, collection: "boxes"}`). */
export function commandCollection(event: CommandStartedEvent): string | undefined {
  const command = event.command as Record<string, unknown>;
  const target = command[event.commandName];
  if (typeof target === "string") return target;
  return typeof command.collection === "string" ? command.collection : undefined;
}

export interface Metrics {
  requestStarted(): void;
  requestEnded(labels: HttpRequestLabels, seconds: number): void;
  /** A request refused at the door: observed, never counted as active. */
  requestRefused(labels: HttpRequestLabels, seconds: number): void;
  callEnded(labels: RpcCallLabels, seconds: number): void;
  /**
   * Database metrics from the client's command and pool monitoring (the
   * client must be created with monitorCommands): operation duration per
   * command and collection, and the connection pool's state.
   */
  attachDatabase(client: MongoClient): void;
  /** `docflow_ready`: what /readyz would answer (1 or 0), checked at each scrape. */
  watchReadiness(check: () => Promise<boolean>): void;
  /** Admission's refusals and waits, as they happen (docs/observability.md, "Overload"). */
  readonly admission: AdmissionObserver;
  /** Admission's limit and calls, read at each scrape. */
  watchAdmission(state: AdmissionState): void;
  /** The listener's connection counts, read at each scrape. */
  watchConnections(stats: ConnectionCounts): void;
  /** GET/HEAD /metrics: the Prometheus text format. */
  handle(req: NodeRequest, res: NodeResponse): Promise<void>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // The per-request metrics are KeyedHistograms and a plain count read at
  // scrape time: nothing of prom-client's label handling runs per request.
  const rpcDuration = new KeyedHistogram(
    "rpc_server_call_duration_seconds",
    "Duration of RPC calls served (gRPC, gRPC-Web, Connect and the legacy bridge), in seconds.",
    ["rpc_system_name", "rpc_method", "rpc_response_status_code", "error_type"],
    DURATION_BUCKETS,
    registry,
  );
  const httpDuration = new KeyedHistogram(
    "http_server_request_duration_seconds",
    "Duration of HTTP requests served on the service port, in seconds.",
    [
      "http_request_method",
      "http_route",
      "http_response_status_code",
      "network_protocol_version",
      "error_type",
    ],
    DURATION_BUCKETS,
    registry,
  );
  let activeRequests = 0;
  new Gauge({
    name: "http_server_active_requests",
    help: "HTTP requests being served on the service port.",
    registers: [registry],
    collect() {
      this.set(activeRequests);
    },
  });
  const attachDatabase = databaseMetrics(registry);
  let readiness: (() => Promise<boolean>) | undefined;
  // Not an OpenTelemetry convention (there is none for readiness): the service's own name.
  new Gauge({
    name: "docflow_ready",
    help: "1 when the instance answers /readyz with 200 (MongoDB answers, not draining), else 0; checked at each scrape.",
    registers: [registry],
    async collect() {
      if (readiness) this.set((await readiness()) ? 1 : 0);
    },
  });
  const admission = admissionMetrics(registry);
  return {
    attachDatabase,
    watchReadiness(check) {
      readiness = check;
    },
    admission: admission.observer,
    watchAdmission: admission.watch,
    watchConnections: connectionMetrics(registry),
    requestStarted: () => {
      activeRequests++;
    },
    requestEnded(labels, seconds) {
      activeRequests--;
      httpDuration.observe(labels as unknown as Labels, seconds);
    },
    requestRefused(labels, seconds) {
      httpDuration.observe(labels as unknown as Labels, seconds);
    },
    callEnded(labels, seconds) {
      rpcDuration.observe(labels as unknown as Labels, seconds);
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

/** What the connection metrics read at scrape time. */
export interface ConnectionCounts {
  readonly open: number;
  readonly refused: number;
  readonly aged: number;
}

/** docflow_connections_* : open connections, those refused over MAX_CONNECTIONS, HTTP/2 ones aged out. */
function connectionMetrics(registry: Registry): (counts: ConnectionCounts) => void {
  let counts: ConnectionCounts | undefined;
  new Gauge({
    name: "docflow_connections_open",
    help: "Connections open on the service port (HTTP/1.1 and HTTP/2).",
    registers: [registry],
    collect() {
      if (counts) this.set(counts.open);
    },
  });
  new Counter({
    name: "docflow_connections_refused_total",
    help: "Connections refused because MAX_CONNECTIONS were open (HTTP/1.1: 503; HTTP/2: GOAWAY).",
    registers: [registry],
    collect() {
      if (counts) {
        this.reset();
        this.inc(counts.refused);
      }
    },
  });
  new Counter({
    name: "docflow_connections_aged_total",
    help: "HTTP/2 connections sent GOAWAY at their maximum age (H2_MAX_CONNECTION_AGE_MS).",
    registers: [registry],
    collect() {
      if (counts) {
        this.reset();
        this.inc(counts.aged);
      }
    },
  });
  return (watched) => {
    counts = watched;
  };
}

/** What the admission gauges read at scrape time. */
export interface AdmissionState {
  readonly limiter: { readonly limit: number };
  /** The smoothed service time of admitted calls that did their work, ms. */
  readonly serviceMs: number;
  readonly running: number;
  readonly queued: number;
}

/** The buckets of the time a call waits for admission, in seconds (the queue target is 100 ms by default). */
const QUEUE_WAIT_BUCKETS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
];

/**
 * docflow_admission_* (the service's own names: no convention covers
 * admission). Refusals are counted in plain maps and handed to the counter
 * at scrape time; a refusal costs a map update, not prom-client's label work.
 */
function admissionMetrics(registry: Registry): {
  observer: AdmissionObserver;
  watch(state: AdmissionState): void;
} {
  let state: AdmissionState | undefined;
  const refusals = new Map<string, Map<string, number>>();
  new Counter({
    name: "docflow_admission_refusals_total",
    help: "Calls refused by admission control before any work, by reason (overloaded, client_share, deadline) and client (the API client's name or the token's client id; _unverified for credentials not yet seen to authenticate).",
    labelNames: ["reason", "client"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [reason, byClient] of refusals) {
        for (const [client, n] of byClient) this.inc({ reason, client }, n);
      }
    },
  });
  new Gauge({
    name: "docflow_admission_limit",
    help: "How many calls may run at once: the adaptive concurrency limit, learnt from admitted calls' service time.",
    registers: [registry],
    collect() {
      if (state) this.set(Math.floor(state.limiter.limit));
    },
  });
  new Gauge({
    name: "docflow_admission_calls",
    help: "Calls under admission control, by state (running, or queued for a slot).",
    labelNames: ["state"],
    registers: [registry],
    collect() {
      if (!state) return;
      this.set({ state: "running" }, state.running);
      this.set({ state: "queued" }, state.queued);
    },
  });
  new Gauge({
    name: "docflow_admission_latency_seconds",
    help: "The smoothed service time of admitted calls that did their work (the time the queue target leaves room for), in seconds.",
    registers: [registry],
    collect() {
      if (state) this.set(state.serviceMs / 1000);
    },
  });
  const waited = new KeyedHistogram(
    "docflow_admission_queue_wait_seconds",
    "Time calls that could not run at once waited in admission's queue, by outcome (admitted, or refused when the wait ran out), in seconds.",
    ["outcome"],
    QUEUE_WAIT_BUCKETS,
    registry,
  );
  const ADMITTED: Labels = { outcome: "admitted" };
  const REFUSED: Labels = { outcome: "refused" };
  // Both outcomes exposed from the start: a rate over them works before the first wait.
  waited.declare(ADMITTED);
  waited.declare(REFUSED);
  return {
    observer: {
      refused(reason, client) {
        let byClient = refusals.get(reason);
        if (!byClient) {
          byClient = new Map();
          refusals.set(reason, byClient);
        }
        byClient.set(client, (byClient.get(client) ?? 0) + 1);
      },
      waited(seconds, admitted) {
        waited.observe(admitted ? ADMITTED : REFUSED, seconds);
      },
    },
    watch(watched) {
      state = watched;
    },
  };
}

/**
 * db.client.* metrics (OpenTelemetry database conventions, mapped to
 * Prometheus as the others are). Label values come from fixed sets: known
 * command names, at most MAX_COLLECTIONS collection names, the pool's
 * server address, the driver's error class or server code name.
 */
function databaseMetrics(registry: Registry): (client: MongoClient) => void {
  // Per command: a KeyedHistogram, and the pool's state kept in plain
  // counts that the gauges read at scrape time (collect), not per event.
  const duration = new KeyedHistogram(
    "db_client_operation_duration_seconds",
    "Duration of MongoDB commands sent by the service, in seconds.",
    ["db_system_name", "db_operation_name", "db_collection_name", "error_type"],
    DATABASE_BUCKETS,
    registry,
  );
  const checkedOut = new Map<string, Set<number>>();
  const open = new Map<string, Set<number>>();
  const waiting = new Map<string, number>();
  new Gauge({
    name: "db_client_connections_usage",
    help: "Connections of the MongoDB pool, by state (idle or used).",
    labelNames: ["db_client_connection_pool_name", "db_client_connection_state"],
    registers: [registry],
    collect() {
      for (const pool of new Set([...open.keys(), ...checkedOut.keys()])) {
        const used = checkedOut.get(pool)?.size ?? 0;
        const name = { db_client_connection_pool_name: pool };
        this.set({ ...name, db_client_connection_state: "used" }, used);
        this.set(
          { ...name, db_client_connection_state: "idle" },
          Math.max(0, (open.get(pool)?.size ?? 0) - used),
        );
      }
    },
  });
  const maxConnections = new Gauge({
    name: "db_client_connection_max",
    help: "The most connections the MongoDB pool may open.",
    labelNames: ["db_client_connection_pool_name"],
    registers: [registry],
  });
  new Gauge({
    name: "db_client_connection_pending_requests",
    help: "Calls waiting for a connection of the MongoDB pool.",
    labelNames: ["db_client_connection_pool_name"],
    registers: [registry],
    collect() {
      for (const [pool, n] of waiting) this.set({ db_client_connection_pool_name: pool }, n);
    },
  });
  const waitTime = new KeyedHistogram(
    "db_client_connection_wait_time_seconds",
    "Time a call waited for a connection of the MongoDB pool, in seconds.",
    ["db_client_connection_pool_name"],
    DATABASE_BUCKETS,
    registry,
  );
  const collections = new Set<string>();
  const collectionLabel = (name: string | undefined): string => {
    if (name === undefined) return "";
    if (collections.has(name)) return name;
    if (!COLLECTION_NAME.test(name) || collections.size >= MAX_COLLECTIONS) return "_OTHER";
    collections.add(name);
    return name;
  };
  // One label set per command and collection, made once (the commands and collections are bounded).
  const labelSets = new Map<string, Map<string, Labels>>();
  const labelsOf = (operation: string, collection: string): Labels => {
    let byCollection = labelSets.get(operation);
    if (!byCollection) {
      byCollection = new Map();
      labelSets.set(operation, byCollection);
    }
    let labels = byCollection.get(collection);
    if (!labels) {
      labels = collection
        ? {
            db_system_name: "mongodb",
            db_operation_name: operation,
            db_collection_name: collection,
          }
        : { db_system_name: "mongodb", db_operation_name: operation };
      byCollection.set(collection, labels);
    }
    return labels;
  };
  return (client) => {
    const started = new Map<number, Labels>();
    const ended = (requestId: number, durationMs: number, errorType: string) => {
      const labels = started.get(requestId);
      if (!labels) return;
      started.delete(requestId);
      duration.observe(
        errorType ? { ...labels, error_type: errorType } : labels,
        durationMs / 1000,
      );
    };
    client.on("commandStarted", (event) => {
      started.set(
        event.requestId,
        labelsOf(
          KNOWN_COMMANDS.has(event.commandName) ? event.commandName : "_OTHER",
          collectionLabel(commandCollection(event)),
        ),
      );
    });
    client.on("commandSucceeded", (event) => ended(event.requestId, event.duration, ""));
    client.on("commandFailed", (event) => {
      const failure = event.failure as Error & { codeName?: unknown };
      const name = typeof failure.codeName === "string" ? failure.codeName : failure.name;
      ended(event.requestId, event.duration, /^[A-Za-z]{1,64}$/.test(name) ? name : "_OTHER");
    });
    // The pool: connections by state, per server, read by the gauges at scrape time.
    const setOf = (map: Map<string, Set<number>>, pool: string) => {
      let set = map.get(pool);
      if (!set) {
        set = new Set();
        map.set(pool, set);
      }
      return set;
    };
    const wait = (pool: string, delta: number) =>
      waiting.set(pool, (waiting.get(pool) ?? 0) + delta);
    client.on("connectionPoolCreated", (event) => {
      maxConnections.set(
        { db_client_connection_pool_name: event.address },
        event.options.maxPoolSize,
      );
      setOf(open, event.address);
      setOf(checkedOut, event.address);
    });
    client.on("connectionCreated", (event) => {
      setOf(open, event.address).add(Number(event.connectionId));
    });
    client.on("connectionClosed", (event) => {
      setOf(open, event.address).delete(Number(event.connectionId));
      setOf(checkedOut, event.address).delete(Number(event.connectionId));
    });
    client.on("connectionCheckOutStarted", (event) => wait(event.address, 1));
    client.on("connectionCheckOutFailed", (event) => {
      wait(event.address, -1);
      waitTime.observe({ db_client_connection_pool_name: event.address }, event.durationMS / 1000);
    });
    client.on("connectionCheckedOut", (event) => {
      wait(event.address, -1);
      waitTime.observe({ db_client_connection_pool_name: event.address }, event.durationMS / 1000);
      setOf(checkedOut, event.address).add(Number(event.connectionId));
    });
    client.on("connectionCheckedIn", (event) => {
      setOf(checkedOut, event.address).delete(Number(event.connectionId));
    });
  };
}
