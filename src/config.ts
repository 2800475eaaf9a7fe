/** Configuration, from environment variables only, checked once at start-up. */
import { existsSync, readFileSync } from "node:fs";
import { isIP } from "node:net";
import type { JSONWebKeySet } from "jose";
import { type AdmissionConfig, DEFAULT_ADMISSION } from "./admission/admission";
import {
  BEARER_ASYMMETRIC_ALGORITHMS,
  BEARER_LIFETIME_S,
  BEARER_MAX_SKEW_S,
  type BearerConfig,
} from "./auth/bearer-config";
import { parseJwks } from "./auth/jwks";
import { type EnvReader, envReader, shown, withoutTrailingSlashes } from "./env";
import { LOG_LEVELS, type LogLevel } from "./log";
import { loadTracingConfig, type TracingConfig } from "./observability/otel-config";

/** Limits that protect the service from slow, idle and stuck peers (docs/api.md §9, docs/operations.md, "Timeouts and deadlines"). */
export interface Timeouts {
  /** A new connection must send its first byte within this time. */
  readonly firstByteMs: number;
  /** HTTP/1.1: the request line and headers must arrive within this time. */
  readonly headersMs: number;
  /** The whole request, body included, must arrive within this time (HTTP/1.1 and h2c). */
  readonly requestMs: number;
  /** An answer handed to Node must reach the client within this time, or its stream (HTTP/1.1: connection) is cut. */
  readonly sendMs: number;
  /** HTTP/1.1: an idle keep-alive connection is closed after this time. */
  readonly keepAliveMs: number;
  /** h2c: a session with no open stream is closed (GOAWAY) after this time. */
  readonly h2IdleMs: number;
  /** Default deadline of every call; a gRPC/Connect client deadline can only lower it. */
  readonly callDeadlineMs: number;
  /**
   * Longest wait for one MongoDB round trip (server selection, connecting,
   * each socket read). A retried read can take about three of these, so keep
   * three of them under the call deadline.
   */
  readonly databaseMs: number;
  /** /healthz and grpc health give up on the database after this time. */
  readonly healthMs: number;
  /** On SIGTERM, how long the service keeps serving while /readyz says 503, so balancers stop sending (not on SIGINT). */
  readonly drainMs: number;
  /** How long in-flight calls may take to finish once shutdown starts. */
  readonly shutdownMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = Object.freeze({
  firstByteMs: 10_000,
  headersMs: 20_000,
  requestMs: 60_000,
  sendMs: 30_000,
  keepAliveMs: 65_000,
  h2IdleMs: 65_000,
  callDeadlineMs: 10_000,
  databaseMs: 2_000,
  healthMs: 1_000,
  drainMs: 5_000,
  shutdownMs: 10_000,
});

export interface Config {
  readonly port: number;
  readonly host: string;
  /** undefined: start the embedded, in-memory database. */
  readonly mongodbUri: string | undefined;
  readonly mongodbDatabase: string;
  readonly seedFile: string | undefined;
  readonly logLevel: LogLevel;
  readonly timeouts: Timeouts;
  /** Origins whose pages may call the API (CORS): exact origins, or ["*"]; empty: none. */
  readonly corsAllowedOrigins: readonly string[];
  /** Credentials, employee rights and boxes are reused for this long (0: no cache). */
  readonly authCacheTtlMs: number;
  readonly authCacheMaxEntries: number;
  /** Prometheus metrics on GET /metrics. */
  readonly metricsEnabled: boolean;
  /** OpenTelemetry traces, from the standard OTEL_* variables; undefined: off. */
  readonly tracing: TracingConfig | undefined;
  /** Bearer tokens (docs/api.md §5.1); undefined: off. */
  readonly bearer: BearerConfig | undefined;
  /**
   * Other spellings of the ServiceAuth header that SDKs send (docs/api.md §5),
   * `DiadocAuth:ddauth` as { scheme, prefix } (src/domain/auth.ts's
   * ServiceAuthAlias: config imports no domain); empty: none.
   */
  readonly serviceAuthAliases: readonly { readonly scheme: string; readonly prefix: string }[];
  /** The URL clients reach the service at (the server of /openapi.json); undefined: the URL of each request. */
  readonly publicUrl: string | undefined;
  /** TLS on the port (PEM files, read and checked by main.ts); undefined: cleartext. */
  readonly tls:
    | { readonly certFile: string; readonly keyFile: string; readonly clientCaFile?: string }
    | undefined;
  /** How often the TLS files are read again for a rotated certificate. */
  readonly tlsReloadIntervalMs: number;
  /** Admission control (docs/operations.md, "Overload"). */
  readonly admission: AdmissionConfig;
  /** Connections (docs/operations.md, "Overload"): how many at once, and how long an HTTP/2 one lives. */
  readonly connections: ConnectionLimits;
  /**
   * The failure budget of authentication (docs/security.md): failures per
   * client address and per API key, and the window a full budget empties in
   * (src/domain/failure-budget.ts's FailureBudgetConfig: config imports no domain).
   */
  readonly authFailures: {
    readonly perAddress: number;
    readonly perKey: number;
    readonly windowMs: number;
  };
  /** TRUSTED_PROXIES: addresses and CIDR ranges whose X-Forwarded-For names the client; empty: none. */
  readonly trustedProxies: readonly string[];
  /** OPS_PORT: /metrics (and the probes) on a port of their own; undefined: on the API port. */
  readonly ops: { readonly port: number; readonly host: string } | undefined;
}

/** Limits on the connections of the port. */
export interface ConnectionLimits {
  /** Open connections at most; one more is answered 503 (HTTP/1.1) or GOAWAY (HTTP/2) and closed. */
  readonly max: number;
  /** An HTTP/2 connection is sent GOAWAY after this long (±10 %), so that clients reconnect elsewhere; 0: never. */
  readonly h2MaxAgeMs: number;
  /** After that GOAWAY, calls in flight have this long to finish before the connection is closed. */
  readonly h2MaxAgeGraceMs: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = Object.freeze({
  max: 10_000,
  h2MaxAgeMs: 300_000,
  h2MaxAgeGraceMs: 30_000,
});

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

/** Environment variable of each timeout, and its bounds. */
const TIMEOUT_VARIABLES: Readonly<Record<keyof Timeouts, [string, number, number]>> = {
  firstByteMs: ["FIRST_BYTE_TIMEOUT_MS", 1, 600_000],
  headersMs: ["HEADERS_TIMEOUT_MS", 1, 600_000],
  requestMs: ["REQUEST_TIMEOUT_MS", 1, 3_600_000],
  sendMs: ["SEND_TIMEOUT_MS", 1, 3_600_000],
  keepAliveMs: ["KEEP_ALIVE_TIMEOUT_MS", 1, 3_600_000],
  h2IdleMs: ["H2_IDLE_TIMEOUT_MS", 1, 3_600_000],
  callDeadlineMs: ["CALL_DEADLINE_MS", 1, 600_000],
  databaseMs: ["MONGODB_TIMEOUT_MS", 1, 600_000],
  healthMs: ["HEALTH_TIMEOUT_MS", 1, 60_000],
  drainMs: ["SHUTDOWN_DRAIN_MS", 0, 600_000],
  shutdownMs: ["SHUTDOWN_TIMEOUT_MS", 0, 600_000],
};

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const reader = envReader(env, problems);
  const { value, integer } = reader;

  const port = integer("PORT", 8080, 0, 65535);
  const host = value("HOST") ?? "127.0.0.1";
  const mongodbUri = value("MONGODB_URI");
  if (mongodbUri !== undefined && !/^mongodb(\+srv)?:\/\/\S+$/.test(mongodbUri)) {
    problems.push(
      `MONGODB_URI must be a mongodb:// or mongodb+srv:// connection string (got ${shown(mongodbUri)})`,
    );
  }
  const embeddedDb = value("EMBEDDED_DB");
  if (embeddedDb !== undefined && embeddedDb !== "allow") {
    problems.push(`EMBEDDED_DB must be "allow" or unset (got ${shown(embeddedDb)})`);
  }
  // A forgotten MONGODB_URI must not run production on a database that keeps nothing.
  if (value("NODE_ENV") === "production" && mongodbUri === undefined && embeddedDb !== "allow") {
    problems.push(
      "MONGODB_URI is required when NODE_ENV=production (EMBEDDED_DB=allow runs the in-memory demo database anyway)",
    );
  }
  const mongodbDatabase = value("MONGODB_DB") ?? "docflow";
  if (!/^[A-Za-z0-9_-]{1,63}$/.test(mongodbDatabase)) {
    problems.push(
      `MONGODB_DB must be 1 to 63 letters, digits, '_' or '-' (got ${shown(mongodbDatabase)})`,
    );
  }
  const seedFile = value("SEED_FILE");
  if (seedFile !== undefined && !existsSync(seedFile)) {
    problems.push(`SEED_FILE names a file that does not exist (got ${shown(seedFile)})`);
  }
  // Any case, as the yes/no variables: LOG_LEVEL=DEBUG is debug.
  const rawLogLevel = value("LOG_LEVEL") ?? "info";
  const logLevel = rawLogLevel.toLowerCase() as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")} (got ${shown(rawLogLevel)})`);
  }
  // Stryker disable next-line ObjectLiteral: the loop below sets every key
  const timeouts = { ...DEFAULT_TIMEOUTS };
  for (const [key, [name, min, max]] of Object.entries(TIMEOUT_VARIABLES)) {
    const k = key as keyof Timeouts;
    timeouts[k] = integer(name, DEFAULT_TIMEOUTS[k], min, max);
  }
  const corsAllowedOrigins = (value("CORS_ALLOWED_ORIGINS") ?? "")
    .split(",")
    .map((o) => o.trim())
    .filter(Boolean);
  for (const origin of corsAllowedOrigins) {
    if (origin !== "*" && !/^https?:\/\/[^/?#\s]+$/.test(origin)) {
      problems.push(
        `CORS_ALLOWED_ORIGINS: ${shown(origin)} is not an origin (scheme://host[:port]) or *`,
      );
    }
  }
  const authCacheTtlMs = integer("AUTH_CACHE_TTL_S", 5, 0, 300) * 1000;
  const authCacheMaxEntries = integer("AUTH_CACHE_MAX_ENTRIES", 10_000, 1, 10_000_000);
  const metricsGiven = value("METRICS_ENABLED") ?? "true";
  const metricsRaw = metricsGiven.toLowerCase();
  if (metricsRaw !== "true" && metricsRaw !== "false") {
    problems.push(`METRICS_ENABLED must be "true" or "false" (got ${shown(metricsGiven)})`);
  }
  const metricsEnabled = metricsRaw !== "false";
  const publicUrlRaw = value("PUBLIC_URL");
  if (publicUrlRaw !== undefined && !/^https?:\/\/[^/?#\s@]+(?:\/[^?#\s]*)?$/.test(publicUrlRaw)) {
    problems.push(
      `PUBLIC_URL must be an http:// or https:// URL with no query, fragment or credentials (got ${shown(publicUrlRaw)})`,
    );
  }
  const publicUrl = publicUrlRaw === undefined ? undefined : withoutTrailingSlashes(publicUrlRaw);
  const certFile = value("TLS_CERT_FILE");
  const keyFile = value("TLS_KEY_FILE");
  const clientCaFile = value("TLS_CLIENT_CA_FILE");
  if ((certFile === undefined) !== (keyFile === undefined)) {
    problems.push("TLS_CERT_FILE and TLS_KEY_FILE: set both (TLS on) or neither (cleartext)");
  }
  if (clientCaFile !== undefined && certFile === undefined) {
    problems.push("TLS_CLIENT_CA_FILE needs TLS_CERT_FILE and TLS_KEY_FILE (mutual TLS is TLS)");
  }
  const tls =
    certFile !== undefined && keyFile !== undefined
      ? Object.freeze({ certFile, keyFile, ...(clientCaFile ? { clientCaFile } : {}) })
      : undefined;
  const tlsReloadIntervalMs = integer("TLS_RELOAD_INTERVAL_MS", 10_000, 100, 3_600_000);
  const admission = loadAdmissionConfig(reader, problems);
  const connections: ConnectionLimits = Object.freeze({
    max: integer("MAX_CONNECTIONS", DEFAULT_CONNECTION_LIMITS.max, 1, 1_000_000),
    h2MaxAgeMs: integer(
      "H2_MAX_CONNECTION_AGE_MS",
      DEFAULT_CONNECTION_LIMITS.h2MaxAgeMs,
      0,
      86_400_000,
    ),
    h2MaxAgeGraceMs: integer(
      "H2_MAX_CONNECTION_AGE_GRACE_MS",
      DEFAULT_CONNECTION_LIMITS.h2MaxAgeGraceMs,
      0,
      3_600_000,
    ),
  });
  const authFailures = Object.freeze({
    perAddress: integer("AUTH_FAILURES_PER_ADDRESS", 30, 0, 1_000_000),
    perKey: integer("AUTH_FAILURES_PER_KEY", 100, 0, 1_000_000),
    windowMs: integer("AUTH_FAILURE_WINDOW_S", 60, 1, 86_400) * 1000,
  });
  const trustedProxies = (value("TRUSTED_PROXIES") ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  for (const entry of trustedProxies) {
    const problem = trustedProxyProblem(entry);
    if (problem) problems.push(`TRUSTED_PROXIES: ${shown(entry)} ${problem}`);
  }
  const opsPort = value("OPS_PORT") === undefined ? undefined : integer("OPS_PORT", 0, 0, 65535);
  if (opsPort !== undefined && opsPort !== 0 && opsPort === port) {
    problems.push(`OPS_PORT must differ from PORT (got ${opsPort} for both)`);
  }
  if (opsPort === undefined && value("OPS_HOST") !== undefined) {
    problems.push("OPS_HOST is set but OPS_PORT is not: set OPS_PORT to serve /metrics apart");
  }
  const ops =
    opsPort === undefined
      ? undefined
      : Object.freeze({ port: opsPort, host: value("OPS_HOST") ?? host });
  const tracing = loadTracingConfig(env, problems);
  const bearer = loadBearerConfig(reader, problems);
  const serviceAuthAliases = loadServiceAuthAliases(value("SERVICE_AUTH_ALIASES"), problems);
  // Node refuses a headers timeout above the request timeout.
  if (timeouts.headersMs > timeouts.requestMs) {
    problems.push(
      `HEADERS_TIMEOUT_MS must not be larger than REQUEST_TIMEOUT_MS (got ${timeouts.headersMs} and ${timeouts.requestMs})`,
    );
  }
  if (problems.length > 0) {
    throw new ConfigError(problems);
  }
  return Object.freeze({
    port,
    host,
    mongodbUri,
    mongodbDatabase,
    seedFile,
    logLevel,
    timeouts: Object.freeze(timeouts),
    corsAllowedOrigins: Object.freeze(corsAllowedOrigins),
    authCacheTtlMs,
    authCacheMaxEntries,
    metricsEnabled,
    tracing,
    bearer,
    serviceAuthAliases,
    publicUrl,
    tls,
    tlsReloadIntervalMs,
    admission,
    connections,
    authFailures,
    trustedProxies: Object.freeze(trustedProxies),
    ops,
  });
}

/** The problem with a TRUSTED_PROXIES entry, or undefined when it is an address or a CIDR range. */
function trustedProxyProblem(entry: string): string | undefined {
  const [address = "", bits, extra] = entry.split("/");
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return "is not an IP address or CIDR range";
  if (bits === undefined) return undefined;
  const n = /^\d{1,3}$/.test(bits) ? Number(bits) : -1;
  return n >= 0 && n <= (family === 6 ? 128 : 32) ? undefined : "has a prefix length out of range";
}

/** A "true" or "false" variable (any case); anything else is a problem. */
function flag(
  value: EnvReader["value"],
  name: string,
  fallback: boolean,
  problems: string[],
): boolean {
  const given = value(name);
  if (given === undefined) return fallback;
  const lower = given.toLowerCase();
  if (lower !== "true" && lower !== "false") {
    problems.push(`${name} must be "true" or "false" (got ${shown(given)})`);
    return fallback;
  }
  return lower === "true";
}

function loadAdmissionConfig({ value, integer }: EnvReader, problems: string[]): AdmissionConfig {
  const d = DEFAULT_ADMISSION;
  const enabled = flag(value, "ADMISSION_ENABLED", d.enabled, problems);
  for (const [gone, why] of RETIRED_ADMISSION_VARIABLES) {
    if (value(gone) !== undefined) problems.push(`${gone} is no longer read: ${why}`);
  }
  const floor = integer("ADMISSION_LIMIT_FLOOR", d.floor, 1, 100_000);
  const max = integer("ADMISSION_MAX_LIMIT", d.max, 1, 100_000);
  if (floor > max) {
    problems.push(
      `ADMISSION_LIMIT_FLOOR must not be larger than ADMISSION_MAX_LIMIT (got ${floor} and ${max})`,
    );
  }
  const sloMs = integer("ADMISSION_LATENCY_TARGET_MS", d.sloMs, 1, 60_000);
  const queueTargetMs = integer("ADMISSION_QUEUE_TARGET_MS", d.queueTargetMs, 1, 60_000);
  return Object.freeze({
    enabled,
    floor,
    max,
    sloMs,
    queueTargetMs,
    fairShares: flag(value, "ADMISSION_CLIENT_SHARES", d.fairShares, problems),
    retryAfterS: integer("ADMISSION_RETRY_AFTER_S", d.retryAfterS, 1, 3_600),
  });
}

/** Admission's variables of before issue 41, and what replaced them (docs/configuration.md, "Overload"). */
const RETIRED_ADMISSION_VARIABLES: readonly [string, string][] = [
  ["ADMISSION_MIN_LIMIT", "the limit's floor is ADMISSION_LIMIT_FLOOR"],
  ["ADMISSION_INITIAL_LIMIT", "the limit starts at ADMISSION_LIMIT_FLOOR"],
  [
    "ADMISSION_LOOP_DELAY_TARGET_MS",
    "the event loop's delay no longer moves the limit (docs/decisions.md, Admission)",
  ],
];

/** An HTTP token (RFC 9110 §5.6.2), what an auth-scheme is. */
const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Letters: the header's parameter names are letters and '_' (src/domain/auth.ts), and '_' ends the prefix. */
const ALIAS_PREFIX = /^[A-Za-z]+$/;
/** Schemes of their own, never another spelling of ServiceAuth. */
const RESERVED_SCHEMES = ["serviceauth", "bearer"];

/** SERVICE_AUTH_ALIASES: comma-separated `Scheme:prefix`, e.g. `DiadocAuth:ddauth`; each bad entry is a problem. */
function loadServiceAuthAliases(
  given: string | undefined,
  problems: string[],
): Config["serviceAuthAliases"] {
  const name = "SERVICE_AUTH_ALIASES";
  const aliases: { scheme: string; prefix: string }[] = [];
  if (given === undefined) return Object.freeze(aliases);
  const entries = given
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length === 0) problems.push(`${name} names no alias (got ${shown(given)})`);
  const seen = new Set<string>();
  for (const entry of entries) {
    const parts = entry.split(":").map((p) => p.trim());
    const [scheme = "", prefix = ""] = parts;
    if (parts.length !== 2) {
      problems.push(
        `${name}: ${shown(entry)} is not Scheme:prefix (for example DiadocAuth:ddauth)`,
      );
    } else if (!HTTP_TOKEN.test(scheme)) {
      problems.push(
        `${name}: ${shown(entry)}: the scheme must be an HTTP token (letters, digits and !#$%&'*+-.^_\`|~)`,
      );
    } else if (!ALIAS_PREFIX.test(prefix)) {
      problems.push(`${name}: ${shown(entry)}: the prefix must be letters only`);
    } else if (RESERVED_SCHEMES.includes(scheme.toLowerCase())) {
      problems.push(
        `${name}: ${shown(entry)}: ServiceAuth and Bearer are schemes of their own, not aliases`,
      );
    } else if (seen.has(scheme.toLowerCase())) {
      problems.push(`${name}: ${shown(entry)} repeats a scheme (schemes are case-insensitive)`);
    } else {
      seen.add(scheme.toLowerCase());
      aliases.push(Object.freeze({ scheme, prefix }));
    }
  }
  return Object.freeze(aliases);
}

function loadBearerConfig(
  { value, integer }: EnvReader,
  problems: string[],
): BearerConfig | undefined {
  const issuer = value("BEARER_ISSUER");
  const audience = value("BEARER_AUDIENCE");
  const jwksUrl = value("BEARER_JWKS_URL");
  const jwksFile = value("BEARER_JWKS_FILE");
  const optional = [
    "BEARER_USER_CLAIM",
    "BEARER_ALGORITHMS",
    "BEARER_CLOCK_SKEW_S",
    "BEARER_REQUIRED_SCOPE",
    "BEARER_ALLOWED_CLIENT_IDS",
    "BEARER_JWKS_COOLDOWN_MS",
    "BEARER_MAX_LIFETIME_S",
  ];
  const anySet = [issuer, audience, jwksUrl, jwksFile].some((v) => v !== undefined);
  if (!anySet) {
    for (const name of optional) {
      if (value(name) !== undefined) {
        problems.push(
          `${name} is set but Bearer tokens are off: set BEARER_ISSUER, BEARER_AUDIENCE and BEARER_JWKS_URL or BEARER_JWKS_FILE`,
        );
      }
    }
    return undefined;
  }
  const before = problems.length;
  if (issuer === undefined)
    problems.push("BEARER_ISSUER is required when Bearer tokens are configured");
  if (audience === undefined)
    problems.push("BEARER_AUDIENCE is required when Bearer tokens are configured");
  if (jwksUrl !== undefined && jwksFile !== undefined) {
    problems.push("BEARER_JWKS_URL and BEARER_JWKS_FILE: set exactly one, not both");
  } else if (jwksUrl === undefined && jwksFile === undefined) {
    problems.push(
      "BEARER_JWKS_URL or BEARER_JWKS_FILE is required when Bearer tokens are configured",
    );
  }
  if (jwksUrl !== undefined) {
    const problem = jwksUrlProblem(jwksUrl);
    if (problem) problems.push(`BEARER_JWKS_URL ${problem} (got ${shown(jwksUrl)})`);
  }
  let jwks: JSONWebKeySet | undefined;
  if (jwksFile !== undefined) {
    let text: string | undefined;
    try {
      // Stryker disable next-line StringLiteral: without an encoding the Buffer reaches JSON.parse as the same text
      text = readFileSync(jwksFile, "utf8");
    } catch {
      problems.push(`BEARER_JWKS_FILE cannot be read: ${jwksFile}`);
    }
    if (text !== undefined) {
      try {
        jwks = parseJwks(text);
      } catch (error) {
        problems.push(
          `BEARER_JWKS_FILE ${jwksFile} is not a valid JWKS: it ${(error as Error).message}`,
        );
      }
    }
  }
  const userClaim = value("BEARER_USER_CLAIM") ?? "sub";
  const algorithms = (value("BEARER_ALGORITHMS") ?? "RS256,PS256,ES256")
    .split(",")
    .map((a) => a.trim())
    .filter(Boolean);
  for (const alg of algorithms) {
    if (!(BEARER_ASYMMETRIC_ALGORITHMS as readonly string[]).includes(alg)) {
      problems.push(
        `BEARER_ALGORITHMS: ${shown(alg)} is not accepted (symmetric algorithms and none are refused; use ${BEARER_ASYMMETRIC_ALGORITHMS.join(", ")})`,
      );
    }
  }
  if (algorithms.length === 0) problems.push("BEARER_ALGORITHMS names no algorithm");
  const clockSkewS = integer("BEARER_CLOCK_SKEW_S", 30, 0, BEARER_MAX_SKEW_S);
  const jwksCooldownMs = integer("BEARER_JWKS_COOLDOWN_MS", 30_000, 0, 3_600_000);
  const maxLifetimeS = integer(
    "BEARER_MAX_LIFETIME_S",
    BEARER_LIFETIME_S.default,
    BEARER_LIFETIME_S.min,
    BEARER_LIFETIME_S.max,
  );
  const clients = value("BEARER_ALLOWED_CLIENT_IDS")
    ?.split(",")
    .map((c) => c.trim())
    .filter(Boolean);
  // Stryker disable next-line ConditionalExpression,LogicalOperator: any problem refuses the whole configuration (loadConfig throws); the guard is for the types
  if (problems.length > before || issuer === undefined || audience === undefined) return undefined;
  return Object.freeze({
    issuer,
    audience,
    jwksUrl,
    jwks,
    userClaim,
    algorithms: Object.freeze(algorithms),
    clockSkewS,
    requiredScope: value("BEARER_REQUIRED_SCOPE"),
    allowedClientIds: clients && clients.length > 0 ? Object.freeze(clients) : undefined,
    jwksCooldownMs,
    maxLifetimeS,
  });
}

/**
 * The key set comes over https: anyone on the path of an http:// fetch could
 * hand the service keys of their own. Only a loopback address may be plain
 * http (an issuer beside the service, and the tests).
 */
function jwksUrlProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an https:// URL";
  }
  if (/\s/.test(raw)) return "must be an https:// URL";
  if (url.username !== "" || url.password !== "") return "must not carry credentials";
  if (url.protocol === "https:") return undefined;
  if (url.protocol !== "http:") return "must be an https:// URL";
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const loopback = host === "localhost" || host === "::1" || host.startsWith("127.");
  return loopback && isIP(host === "localhost" ? "127.0.0.1" : host) !== 0
    ? undefined
    : "must be an https:// URL (http:// only on a loopback address)";
}
