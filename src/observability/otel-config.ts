/**
 * The standard OTEL_* variables of tracing, checked at start-up like every
 * other setting (a problem per bad variable, naming it; header values are
 * never repeated). Parsing only: the SDK is loaded by tracing.ts, and only
 * when tracing is on.
 */
import { type Env, envReader, shown, withoutTrailingSlashes } from "../env";

export type Sampler =
  | "always_on"
  | "always_off"
  | "traceidratio"
  | "parentbased_always_on"
  | "parentbased_always_off"
  | "parentbased_traceidratio";

const SAMPLERS: readonly Sampler[] = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
];

export interface TracingConfig {
  /** The OTLP/HTTP traces endpoint (…/v1/traces). */
  readonly url: string;
  readonly protocol: "http/protobuf" | "http/json";
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly sampler: Sampler;
  readonly samplerRatio: number;
  readonly propagators: readonly ("tracecontext" | "baggage")[];
  readonly serviceName: string;
  readonly resourceAttributes: Readonly<Record<string, string>>;
  readonly batch: {
    readonly scheduledDelayMillis: number;
    readonly exportTimeoutMillis: number;
    readonly maxQueueSize: number;
    readonly maxExportBatchSize: number;
  };
}

/** undefined: tracing is off (nothing is loaded). Problems are pushed, one per variable. */
export function loadTracingConfig(env: Env, problems: string[]): TracingConfig | undefined {
  const { value, integer } = envReader(env, problems);
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const given = value(name);
    if (given === undefined) return fallback;
    const raw = given.toLowerCase();
    if (!allowed.includes(raw as T)) {
      problems.push(`${name} must be one of ${allowed.join(", ")} (got ${shown(given)})`);
      return fallback;
    }
    return raw as T;
  };
  const url = (name: string) => {
    const raw = value(name);
    if (raw === undefined) return undefined;
    try {
      const u = new URL(raw);
      if (u.protocol === "http:" || u.protocol === "https:") return raw;
    } catch {
      // reported below
    }
    problems.push(`${name} must be an http:// or https:// URL (got ${shown(raw)})`);
    return undefined;
  };
  /** `k=v,k2=v2`, percent-encoded values (W3C Baggage octets); the values are never printed. */
  const pairs = (name: string): Record<string, string> => {
    const raw = value(name);
    const out: Record<string, string> = {};
    if (raw === undefined) return out;
    for (const item of raw.split(",")) {
      if (item.trim() === "") continue;
      const eq = item.indexOf("=");
      const key = eq > 0 ? item.slice(0, eq).trim() : "";
      let decoded: string | undefined;
      try {
        decoded = eq > 0 ? decodeURIComponent(item.slice(eq + 1).trim()) : undefined;
      } catch {
        decoded = undefined;
      }
      if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(key) || decoded === undefined) {
        // The value is not shown: headers carry API keys.
        problems.push(`${name} must be a comma-separated list of key=value (percent-encoded)`);
        return {};
      }
      out[key] = decoded;
    }
    return out;
  };

  const disabledGiven = value("OTEL_SDK_DISABLED");
  const disabledRaw = disabledGiven?.toLowerCase();
  if (disabledGiven !== undefined && disabledRaw !== "true" && disabledRaw !== "false") {
    problems.push(`OTEL_SDK_DISABLED must be "true" or "false" (got ${shown(disabledGiven)})`);
  }
  const exporter = oneOf("OTEL_TRACES_EXPORTER", ["otlp", "none"] as const, "otlp");
  const endpoint = url("OTEL_EXPORTER_OTLP_ENDPOINT");
  const tracesEndpoint = url("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const protocolOf = (name: string) =>
    value(name) === undefined
      ? undefined
      : oneOf(name, ["http/protobuf", "http/json"] as const, "http/protobuf");
  const protocol =
    protocolOf("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ??
    protocolOf("OTEL_EXPORTER_OTLP_PROTOCOL") ??
    "http/protobuf";
  const headers = {
    ...pairs("OTEL_EXPORTER_OTLP_HEADERS"),
    ...pairs("OTEL_EXPORTER_OTLP_TRACES_HEADERS"),
  };
  const timeoutMs = integer(
    "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
    integer("OTEL_EXPORTER_OTLP_TIMEOUT", 10_000, 1, 600_000),
    1,
    600_000,
  );
  const sampler = oneOf("OTEL_TRACES_SAMPLER", SAMPLERS, "parentbased_always_on");
  let samplerRatio = 1;
  const ratioRaw = value("OTEL_TRACES_SAMPLER_ARG");
  if (ratioRaw !== undefined && sampler.endsWith("traceidratio")) {
    const r = /^(?:\d*\.)?\d+$/.test(ratioRaw) ? Number(ratioRaw) : Number.NaN;
    if (!(r >= 0 && r <= 1)) {
      problems.push(
        `OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 (got ${shown(ratioRaw)})`,
      );
    } else {
      samplerRatio = r;
    }
  }
  const propagatorNames = (value("OTEL_PROPAGATORS") ?? "tracecontext,baggage")
    .split(",")
    .map((p) => p.trim().toLowerCase())
    .filter(Boolean);
  const unknownPropagator = propagatorNames.find(
    (p) => p !== "tracecontext" && p !== "baggage" && p !== "none",
  );
  if (unknownPropagator !== undefined) {
    problems.push(
      `OTEL_PROPAGATORS must list tracecontext, baggage or none (got ${shown(unknownPropagator)})`,
    );
  }
  const propagators = propagatorNames.includes("none")
    ? []
    : (propagatorNames.filter((p) => p === "tracecontext" || p === "baggage") as (
        | "tracecontext"
        | "baggage"
      )[]);
  const resourceAttributes = pairs("OTEL_RESOURCE_ATTRIBUTES");
  const serviceName =
    value("OTEL_SERVICE_NAME") ?? resourceAttributes["service.name"] ?? "docflow-api";
  const batch = {
    scheduledDelayMillis: integer("OTEL_BSP_SCHEDULE_DELAY", 5_000, 0, 600_000),
    exportTimeoutMillis: integer("OTEL_BSP_EXPORT_TIMEOUT", 30_000, 1, 600_000),
    maxQueueSize: integer("OTEL_BSP_MAX_QUEUE_SIZE", 2_048, 1, 1_000_000),
    maxExportBatchSize: integer("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512, 1, 1_000_000),
  };
  if (batch.maxExportBatchSize > batch.maxQueueSize) {
    problems.push("OTEL_BSP_MAX_EXPORT_BATCH_SIZE must not be larger than OTEL_BSP_MAX_QUEUE_SIZE");
  }

  const on =
    disabledRaw !== "true" &&
    exporter !== "none" &&
    (endpoint !== undefined ||
      tracesEndpoint !== undefined ||
      value("OTEL_TRACES_EXPORTER") !== undefined);
  if (!on) return undefined;
  return {
    url:
      tracesEndpoint ??
      (endpoint
        ? `${withoutTrailingSlashes(endpoint)}/v1/traces`
        : "http://localhost:4318/v1/traces"),
    protocol,
    headers,
    timeoutMs,
    sampler,
    samplerRatio,
    propagators,
    serviceName,
    resourceAttributes,
    batch,
  };
}
