/** loadConfig(env): every variable checked at once, one message each, defaults when absent. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, DEFAULT_TIMEOUTS, loadConfig } from "../../src/config";

const problemsOf = (env: Record<string, string>): readonly string[] => {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
};

describe("timeouts", () => {
  it("default to values a reverse proxy expects", () => {
    expect(loadConfig({}).timeouts).toEqual(DEFAULT_TIMEOUTS);
    expect(DEFAULT_TIMEOUTS.keepAliveMs).toBeGreaterThan(60_000);
    expect(DEFAULT_TIMEOUTS.databaseMs * 3).toBeLessThan(DEFAULT_TIMEOUTS.callDeadlineMs);
  });

  it("each can be set", () => {
    const t = loadConfig({
      FIRST_BYTE_TIMEOUT_MS: "1",
      HEADERS_TIMEOUT_MS: "2",
      REQUEST_TIMEOUT_MS: "3",
      SEND_TIMEOUT_MS: "10",
      KEEP_ALIVE_TIMEOUT_MS: "4",
      H2_IDLE_TIMEOUT_MS: "5",
      CALL_DEADLINE_MS: "6",
      MONGODB_TIMEOUT_MS: "7",
      HEALTH_TIMEOUT_MS: "8",
      SHUTDOWN_DRAIN_MS: "9",
      SHUTDOWN_TIMEOUT_MS: "0",
    }).timeouts;
    expect(t).toEqual({
      firstByteMs: 1,
      headersMs: 2,
      requestMs: 3,
      sendMs: 10,
      keepAliveMs: 4,
      h2IdleMs: 5,
      callDeadlineMs: 6,
      databaseMs: 7,
      healthMs: 8,
      drainMs: 9,
      shutdownMs: 0,
    });
  });

  it("bad values are each reported, naming the variable", () => {
    expect(
      problemsOf({ FIRST_BYTE_TIMEOUT_MS: "0", CALL_DEADLINE_MS: "1.5", HEALTH_TIMEOUT_MS: "x" }),
    ).toEqual([
      'FIRST_BYTE_TIMEOUT_MS must be an integer from 1 to 600000 (got "0")',
      'CALL_DEADLINE_MS must be an integer from 1 to 600000 (got "1.5")',
      'HEALTH_TIMEOUT_MS must be an integer from 1 to 60000 (got "x")',
    ]);
  });

  it("a headers timeout above the request timeout is refused (Node would throw)", () => {
    expect(problemsOf({ HEADERS_TIMEOUT_MS: "5000", REQUEST_TIMEOUT_MS: "1000" })).toEqual([
      "HEADERS_TIMEOUT_MS must not be larger than REQUEST_TIMEOUT_MS (got 5000 and 1000)",
    ]);
  });
});

describe("no silent in-memory production", () => {
  it("NODE_ENV=production without MONGODB_URI is refused", () => {
    expect(problemsOf({ NODE_ENV: "production" })).toEqual([
      "MONGODB_URI is required when NODE_ENV=production (EMBEDDED_DB=allow runs the in-memory demo database anyway)",
    ]);
  });

  it("EMBEDDED_DB=allow overrides it, and MONGODB_URI satisfies it", () => {
    expect(problemsOf({ NODE_ENV: "production", EMBEDDED_DB: "allow" })).toEqual([]);
    expect(problemsOf({ NODE_ENV: "production", MONGODB_URI: "mongodb://db:27017" })).toEqual([]);
  });

  it("EMBEDDED_DB takes only allow", () => {
    expect(problemsOf({ EMBEDDED_DB: "yes" })).toEqual([
      'EMBEDDED_DB must be "allow" or unset (got "yes")',
    ]);
  });
});

describe("overload (docs/operations.md, Overload)", () => {
  it("defaults: admission on, the documented floor, limit and targets, shares on", () => {
    expect(loadConfig({}).admission).toEqual({
      enabled: true,
      floor: 32,
      max: 200,
      sloMs: 250,
      queueTargetMs: 100,
      fairShares: true,
      retryAfterS: 1,
    });
    expect(loadConfig({}).connections).toEqual({
      max: 10_000,
      h2MaxAgeMs: 300_000,
      h2MaxAgeGraceMs: 30_000,
    });
  });

  it("each can be set; the flags take any case", () => {
    const config = loadConfig({
      ADMISSION_ENABLED: "FALSE",
      ADMISSION_LIMIT_FLOOR: "2",
      ADMISSION_MAX_LIMIT: "40",
      ADMISSION_LATENCY_TARGET_MS: "20",
      ADMISSION_QUEUE_TARGET_MS: "250",
      ADMISSION_CLIENT_SHARES: "False",
      ADMISSION_RETRY_AFTER_S: "3",
      MAX_CONNECTIONS: "500",
      H2_MAX_CONNECTION_AGE_MS: "0",
      H2_MAX_CONNECTION_AGE_GRACE_MS: "1000",
    });
    expect(config.admission).toEqual({
      enabled: false,
      floor: 2,
      max: 40,
      sloMs: 20,
      queueTargetMs: 250,
      fairShares: false,
      retryAfterS: 3,
    });
    expect(config.connections).toEqual({ max: 500, h2MaxAgeMs: 0, h2MaxAgeGraceMs: 1_000 });
  });

  it("the variables of before are refused, each saying what replaced it", () => {
    expect(
      problemsOf({
        ADMISSION_MIN_LIMIT: "2",
        ADMISSION_INITIAL_LIMIT: "8",
        ADMISSION_LOOP_DELAY_TARGET_MS: "15",
      }),
    ).toEqual([
      "ADMISSION_MIN_LIMIT is no longer read: the limit's floor is ADMISSION_LIMIT_FLOOR",
      "ADMISSION_INITIAL_LIMIT is no longer read: the limit starts at ADMISSION_LIMIT_FLOOR",
      "ADMISSION_LOOP_DELAY_TARGET_MS is no longer read: the event loop's delay no longer moves the limit (docs/decisions.md, Admission)",
    ]);
  });

  it("bad values are each reported, naming the variable", () => {
    expect(
      problemsOf({
        ADMISSION_ENABLED: "yes",
        ADMISSION_QUEUE_TARGET_MS: "0",
        ADMISSION_CLIENT_SHARES: "1",
        MAX_CONNECTIONS: "-1",
        H2_MAX_CONNECTION_AGE_MS: "5m",
      }),
    ).toEqual([
      'ADMISSION_ENABLED must be "true" or "false" (got "yes")',
      'ADMISSION_QUEUE_TARGET_MS must be an integer from 1 to 60000 (got "0")',
      'ADMISSION_CLIENT_SHARES must be "true" or "false" (got "1")',
      'MAX_CONNECTIONS must be an integer from 1 to 1000000 (got "-1")',
      'H2_MAX_CONNECTION_AGE_MS must be an integer from 0 to 86400000 (got "5m")',
    ]);
  });

  it("limits that contradict each other are refused", () => {
    expect(problemsOf({ ADMISSION_LIMIT_FLOOR: "50", ADMISSION_MAX_LIMIT: "10" })).toEqual([
      "ADMISSION_LIMIT_FLOOR must not be larger than ADMISSION_MAX_LIMIT (got 50 and 10)",
    ]);
  });
});

describe("observability", () => {
  it("METRICS_ENABLED: true by default, false turns metrics off, anything else refused", () => {
    expect(loadConfig({}).metricsEnabled).toBe(true);
    expect(loadConfig({ METRICS_ENABLED: "false" }).metricsEnabled).toBe(false);
    expect(problemsOf({ METRICS_ENABLED: "no" })).toEqual([
      'METRICS_ENABLED must be "true" or "false" (got "no")',
    ]);
  });

  it("tracing is off unless an endpoint or OTEL_TRACES_EXPORTER=otlp says otherwise", () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" };
    expect(loadConfig(endpoint).tracing).toMatchObject({
      url: "http://collector:4318/v1/traces",
      protocol: "http/protobuf",
      sampler: "parentbased_always_on",
      propagators: ["tracecontext", "baggage"],
      serviceName: "docflow-api",
    });
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://x.example/traces" }).tracing?.url,
    ).toBe("https://x.example/traces");
    expect(loadConfig({ OTEL_TRACES_EXPORTER: "otlp" }).tracing?.url).toBe(
      "http://localhost:4318/v1/traces",
    );
    expect(loadConfig({ ...endpoint, OTEL_SDK_DISABLED: "true" }).tracing).toBeUndefined();
    expect(loadConfig({ ...endpoint, OTEL_TRACES_EXPORTER: "none" }).tracing).toBeUndefined();
    expect(
      loadConfig({
        ...endpoint,
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.25",
        OTEL_PROPAGATORS: "none",
        OTEL_RESOURCE_ATTRIBUTES: "service.name=from-attributes,team=docs",
      }).tracing,
    ).toMatchObject({
      samplerRatio: 0.25,
      propagators: [],
      serviceName: "from-attributes",
      resourceAttributes: { team: "docs" },
    });
  });

  it("a malformed OTEL_* value is refused even when tracing is off, header values never shown", () => {
    const problems = problemsOf({ OTEL_EXPORTER_OTLP_HEADERS: "api-key" });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain("OTEL_EXPORTER_OTLP_HEADERS");
    expect(problems[0]).not.toContain("api-key");
  });
});

describe("Bearer tokens (docs/api.md §5.1)", () => {
  const base = {
    BEARER_ISSUER: "https://idp.example/realms/x",
    BEARER_AUDIENCE: "docflow-api",
    BEARER_JWKS_URL: "https://idp.example/jwks",
  };
  const dir = mkdtempSync(join(tmpdir(), "bearer-config-"));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const named = (env: Record<string, string>, variable: string) =>
    expect(problemsOf(env).some((p) => p.includes(variable))).toBe(true);

  it("are off unless configured, and take the contract's (docs/api.md) defaults", () => {
    expect(loadConfig({}).bearer).toBeUndefined();
    expect(loadConfig(base).bearer).toMatchObject({
      userClaim: "sub",
      algorithms: ["RS256", "PS256", "ES256"],
      clockSkewS: 30,
      jwksCooldownMs: 30_000,
      requiredScope: undefined,
      allowedClientIds: undefined,
    });
  });

  it("a variable missing its partner names it", () => {
    named({ BEARER_ISSUER: base.BEARER_ISSUER }, "BEARER_AUDIENCE");
    named({ BEARER_AUDIENCE: "a", BEARER_JWKS_URL: base.BEARER_JWKS_URL }, "BEARER_ISSUER");
    named({ BEARER_ISSUER: "i", BEARER_AUDIENCE: "a" }, "BEARER_JWKS_URL");
    named({ BEARER_REQUIRED_SCOPE: "docflow" }, "BEARER_REQUIRED_SCOPE");
  });

  it("both JWKS_URL and JWKS_FILE, an unreadable or invalid file are refused", () => {
    const good = file(
      "good.json",
      JSON.stringify({
        keys: [
          {
            kty: "EC",
            crv: "P-256",
            x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
            y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
          },
        ],
      }),
    );
    named({ ...base, BEARER_JWKS_FILE: good }, "BEARER_JWKS_FILE");
    const { BEARER_JWKS_URL: _, ...noUrl } = base;
    expect(loadConfig({ ...noUrl, BEARER_JWKS_FILE: good }).bearer?.jwks?.keys).toHaveLength(1);
    named({ ...noUrl, BEARER_JWKS_FILE: join(dir, "missing.json") }, "BEARER_JWKS_FILE");
    named({ ...noUrl, BEARER_JWKS_FILE: file("bad.json", "{") }, "BEARER_JWKS_FILE");
    named({ ...noUrl, BEARER_JWKS_FILE: file("nokeys.json", "{}") }, "BEARER_JWKS_FILE");
    named(
      { ...noUrl, BEARER_JWKS_FILE: file("oct.json", '{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}') },
      "BEARER_JWKS_FILE",
    );
  });

  it("symmetric algorithms, none and a skew over 120 s are refused", () => {
    named({ ...base, BEARER_ALGORITHMS: "RS256,HS256" }, "BEARER_ALGORITHMS");
    named({ ...base, BEARER_ALGORITHMS: "none" }, "BEARER_ALGORITHMS");
    named({ ...base, BEARER_CLOCK_SKEW_S: "121" }, "BEARER_CLOCK_SKEW_S");
    expect(loadConfig({ ...base, BEARER_CLOCK_SKEW_S: "0" }).bearer?.clockSkewS).toBe(0);
    expect(
      loadConfig({ ...base, BEARER_ALLOWED_CLIENT_IDS: "a, b" }).bearer?.allowedClientIds,
    ).toEqual(["a", "b"]);
  });
});
