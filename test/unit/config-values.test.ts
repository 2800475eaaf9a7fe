/**
 * loadConfig, variable by variable: the defaults, the limits of each range
 * (the last good value and the first bad one), trimming, and the exact
 * message a bad value gets. Complements config.test.ts (timeouts, NODE_ENV,
 * observability and Bearer as features).
 */
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config";

const problemsOf = (env: Record<string, string>): readonly string[] => {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
};

describe("the error", () => {
  it("lists every problem, one a line, in one message", () => {
    let error: unknown;
    try {
      loadConfig({ PORT: "x", LOG_LEVEL: "loud" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).name).toBe("ConfigError");
    expect((error as ConfigError).message).toBe(
      'invalid configuration:\n  - PORT must be an integer from 0 to 65535 (got "x")\n  - LOG_LEVEL must be one of debug, info, warn, error, silent (got "loud")',
    );
  });
});

describe("PORT, HOST", () => {
  it("defaults: 8080 on 127.0.0.1", () => {
    expect([loadConfig({}).port, loadConfig({}).host]).toEqual([8080, "127.0.0.1"]);
  });
  it("values are trimmed; blank is unset", () => {
    expect(loadConfig({ PORT: " 81 ", HOST: " 0.0.0.0 " })).toMatchObject({
      port: 81,
      host: "0.0.0.0",
    });
    expect(loadConfig({ PORT: "  ", HOST: "" })).toMatchObject({ port: 8080, host: "127.0.0.1" });
  });
  it("0 to 65535, digits only", () => {
    expect(loadConfig({ PORT: "0" }).port).toBe(0);
    expect(loadConfig({ PORT: "65535" }).port).toBe(65535);
    for (const bad of ["65536", "-1", "8080x", "x8080", "80.0", "1e3"]) {
      expect(problemsOf({ PORT: bad })).toEqual([
        `PORT must be an integer from 0 to 65535 (got "${bad}")`,
      ]);
    }
  });
});

describe("the database", () => {
  it("MONGODB_URI: unset by default (the embedded engine); a mongodb or mongodb+srv URL", () => {
    expect(loadConfig({}).mongodbUri).toBeUndefined();
    expect(loadConfig({ MONGODB_URI: "mongodb://db:27017" }).mongodbUri).toBe("mongodb://db:27017");
    expect(loadConfig({ MONGODB_URI: "mongodb+srv://c.example" }).mongodbUri).toBe(
      "mongodb+srv://c.example",
    );
    for (const bad of [
      "http://db",
      "mongodb://",
      "x mongodb://db",
      "mongodb://db x",
      "mongodb:/db",
    ]) {
      expect(problemsOf({ MONGODB_URI: bad }), bad).toEqual([
        `MONGODB_URI must be a mongodb:// or mongodb+srv:// connection string (got ${JSON.stringify(bad.trim())})`,
      ]);
    }
  });
  it("MONGODB_DB: docflow by default; 1 to 63 letters, digits, '_' or '-'", () => {
    expect(loadConfig({}).mongodbDatabase).toBe("docflow");
    expect(loadConfig({ MONGODB_DB: "a".repeat(63) }).mongodbDatabase).toBe("a".repeat(63));
    expect(loadConfig({ MONGODB_DB: "A_b-9" }).mongodbDatabase).toBe("A_b-9");
    for (const bad of ["a".repeat(64), "a.b", "a b", "é", "x/"]) {
      expect(problemsOf({ MONGODB_DB: bad }), bad).toEqual([
        `MONGODB_DB must be 1 to 63 letters, digits, '_' or '-' (got ${JSON.stringify(bad)})`,
      ]);
    }
  });
  it("SEED_FILE: a file that exists", () => {
    const dir = mkdtempSync(join(tmpdir(), "seed-config-"));
    const file = join(dir, "f.json");
    writeFileSync(file, "{}");
    expect(loadConfig({ SEED_FILE: file }).seedFile).toBe(file);
    expect(loadConfig({}).seedFile).toBeUndefined();
    expect(problemsOf({ SEED_FILE: join(dir, "nope.json") })).toEqual([
      `SEED_FILE names a file that does not exist (got ${JSON.stringify(join(dir, "nope.json"))})`,
    ]);
  });
});

describe("LOG_LEVEL", () => {
  it("info by default; each level taken, in any case (as METRICS_ENABLED=FALSE is)", () => {
    expect(loadConfig({}).logLevel).toBe("info");
    for (const level of ["silent", "error", "warn", "info", "debug"]) {
      expect(loadConfig({ LOG_LEVEL: level }).logLevel).toBe(level);
      expect(loadConfig({ LOG_LEVEL: level.toUpperCase() }).logLevel).toBe(level);
    }
    expect(loadConfig({ LOG_LEVEL: "Debug" }).logLevel).toBe("debug");
    expect(problemsOf({ LOG_LEVEL: "VERBOSE" })).toEqual([
      'LOG_LEVEL must be one of debug, info, warn, error, silent (got "VERBOSE")',
    ]);
  });
});

describe("timeouts: limits", () => {
  it("a headers timeout equal to the request timeout is accepted", () => {
    expect(
      loadConfig({ HEADERS_TIMEOUT_MS: "5000", REQUEST_TIMEOUT_MS: "5000" }).timeouts,
    ).toMatchObject({
      headersMs: 5000,
      requestMs: 5000,
    });
  });
  it("the top of a range is accepted, one more refused", () => {
    expect(loadConfig({ HEALTH_TIMEOUT_MS: "60000" }).timeouts.healthMs).toBe(60_000);
    expect(problemsOf({ HEALTH_TIMEOUT_MS: "60001" })).toEqual([
      'HEALTH_TIMEOUT_MS must be an integer from 1 to 60000 (got "60001")',
    ]);
  });
});

describe("CORS_ALLOWED_ORIGINS", () => {
  it("none by default; a comma list of origins or *, trimmed, empty items dropped", () => {
    expect(loadConfig({}).corsAllowedOrigins).toEqual([]);
    expect(
      loadConfig({ CORS_ALLOWED_ORIGINS: " https://a.example , http://b.example:8080,,*" })
        .corsAllowedOrigins,
    ).toEqual(["https://a.example", "http://b.example:8080", "*"]);
  });
  it.each([
    "https://a.example/",
    "https://a.example/path",
    "a.example",
    "ftp://a.example",
    "xhttps://a.example",
    "https://a.example?x",
    "https://a.example#x",
    "https://",
  ])("%s is not an origin", (origin) => {
    expect(problemsOf({ CORS_ALLOWED_ORIGINS: origin })).toEqual([
      `CORS_ALLOWED_ORIGINS: "${origin}" is not an origin (scheme://host[:port]) or *`,
    ]);
  });
  it("a long bad origin is shown cut to 80 characters", () => {
    const long = `https://${"a".repeat(100)}/`;
    expect(problemsOf({ CORS_ALLOWED_ORIGINS: long })).toEqual([
      `CORS_ALLOWED_ORIGINS: "${long.slice(0, 80)}…" is not an origin (scheme://host[:port]) or *`,
    ]);
  });
});

describe("SERVICE_AUTH_ALIASES (docs/api.md §5)", () => {
  const name = "SERVICE_AUTH_ALIASES";
  it("none by default; a comma list of Scheme:prefix, trimmed, empty items dropped", () => {
    expect(loadConfig({}).serviceAuthAliases).toEqual([]);
    expect(loadConfig({ [name]: "DiadocAuth:ddauth" }).serviceAuthAliases).toEqual([
      { scheme: "DiadocAuth", prefix: "ddauth" },
    ]);
    expect(
      loadConfig({ [name]: " DiadocAuth : ddauth ,, Legacy-Auth.v2:LEG," }).serviceAuthAliases,
    ).toEqual([
      { scheme: "DiadocAuth", prefix: "ddauth" },
      { scheme: "Legacy-Auth.v2", prefix: "LEG" },
    ]);
    expect(Object.isFrozen(loadConfig({ [name]: "A:b" }).serviceAuthAliases)).toBe(true);
  });

  it.each([
    ["DiadocAuth", " is not Scheme:prefix (for example DiadocAuth:ddauth)"],
    ["DiadocAuth:dd:auth", " is not Scheme:prefix (for example DiadocAuth:ddauth)"],
    [":ddauth", ": the scheme must be an HTTP token (letters, digits and !#$%&'*+-.^_`|~)"],
    [
      "Diadoc Auth:ddauth",
      ": the scheme must be an HTTP token (letters, digits and !#$%&'*+-.^_`|~)",
    ],
    [
      "Diadoc/Auth:ddauth",
      ": the scheme must be an HTTP token (letters, digits and !#$%&'*+-.^_`|~)",
    ],
    ["DiadocAuth:", ": the prefix must be letters only"],
    ["DiadocAuth:dd_auth", ": the prefix must be letters only"],
    ["DiadocAuth:dd2", ": the prefix must be letters only"],
    ["ServiceAuth:svcauth", ": ServiceAuth and Bearer are schemes of their own, not aliases"],
    ["serviceauth:x", ": ServiceAuth and Bearer are schemes of their own, not aliases"],
    ["BEARER:x", ": ServiceAuth and Bearer are schemes of their own, not aliases"],
  ])("%j: %s", (entry, words) => {
    expect(problemsOf({ [name]: entry })).toEqual([`${name}: ${JSON.stringify(entry)}${words}`]);
  });

  it("a scheme twice, in any case, is named at its second entry", () => {
    expect(problemsOf({ [name]: "DiadocAuth:ddauth,diadocauth:other" })).toEqual([
      `${name}: "diadocauth:other" repeats a scheme (schemes are case-insensitive)`,
    ]);
  });

  it("only commas is no alias at all", () => {
    expect(problemsOf({ [name]: ", ," })).toEqual([`${name} names no alias (got ", ,")`]);
  });

  it("every bad entry is reported, with the other variables' problems", () => {
    expect(problemsOf({ PORT: "x", [name]: "A:b,Bearer:c,D" })).toEqual([
      'PORT must be an integer from 0 to 65535 (got "x")',
      `${name}: "Bearer:c": ServiceAuth and Bearer are schemes of their own, not aliases`,
      `${name}: "D" is not Scheme:prefix (for example DiadocAuth:ddauth)`,
    ]);
  });

  it("a long bad entry is shown cut to 80 characters", () => {
    const long = `${"A".repeat(100)}:x_y`;
    expect(problemsOf({ [name]: long })).toEqual([
      `${name}: "${long.slice(0, 80)}…": the prefix must be letters only`,
    ]);
  });
});

describe("the failure budget of authentication (docs/security.md)", () => {
  it("defaults: 30 failures per address, 100 per API key, a full budget empties in 60 s", () => {
    expect(loadConfig({}).authFailures).toEqual({ perAddress: 30, perKey: 100, windowMs: 60_000 });
  });
  it("each bound: 0 (no budget of that kind) to 1,000,000; a window of 1 s to a day", () => {
    expect(
      loadConfig({
        AUTH_FAILURES_PER_ADDRESS: "0",
        AUTH_FAILURES_PER_KEY: "1000000",
        AUTH_FAILURE_WINDOW_S: "86400",
      }).authFailures,
    ).toEqual({ perAddress: 0, perKey: 1_000_000, windowMs: 86_400_000 });
    expect(
      problemsOf({
        AUTH_FAILURES_PER_ADDRESS: "-1",
        AUTH_FAILURES_PER_KEY: "1000001",
        AUTH_FAILURE_WINDOW_S: "0",
      }),
    ).toEqual([
      'AUTH_FAILURES_PER_ADDRESS must be an integer from 0 to 1000000 (got "-1")',
      'AUTH_FAILURES_PER_KEY must be an integer from 0 to 1000000 (got "1000001")',
      'AUTH_FAILURE_WINDOW_S must be an integer from 1 to 86400 (got "0")',
    ]);
  });
});

describe("TRUSTED_PROXIES", () => {
  it("default: none (X-Forwarded-For is never read)", () => {
    expect(loadConfig({}).trustedProxies).toEqual([]);
  });
  it("addresses and CIDR ranges, IPv4 and IPv6, trimmed", () => {
    expect(
      loadConfig({ TRUSTED_PROXIES: " 10.0.0.0/8 , 192.168.1.7,::1, fd00::/8 ," }).trustedProxies,
    ).toEqual(["10.0.0.0/8", "192.168.1.7", "::1", "fd00::/8"]);
  });
  it("anything else is named", () => {
    expect(
      problemsOf({ TRUSTED_PROXIES: "proxy.internal,10.0.0.0/33,::1/129,10.0.0.1/8/1,1.2.3.4/x" }),
    ).toEqual([
      'TRUSTED_PROXIES: "proxy.internal" is not an IP address or CIDR range',
      'TRUSTED_PROXIES: "10.0.0.0/33" has a prefix length out of range',
      'TRUSTED_PROXIES: "::1/129" has a prefix length out of range',
      'TRUSTED_PROXIES: "10.0.0.1/8/1" is not an IP address or CIDR range',
      'TRUSTED_PROXIES: "1.2.3.4/x" has a prefix length out of range',
    ]);
  });
});

describe("OPS_PORT, OPS_HOST", () => {
  it("default: no port of their own (/metrics on the API's)", () => {
    expect(loadConfig({}).ops).toBeUndefined();
  });
  it("a port, on HOST unless OPS_HOST says otherwise", () => {
    expect(loadConfig({ OPS_PORT: "9090", HOST: "0.0.0.0" }).ops).toEqual({
      port: 9090,
      host: "0.0.0.0",
    });
    expect(loadConfig({ OPS_PORT: "0", OPS_HOST: "127.0.0.2" }).ops).toEqual({
      port: 0,
      host: "127.0.0.2",
    });
  });
  it("the refusals", () => {
    expect(problemsOf({ OPS_PORT: "8080" })).toEqual([
      "OPS_PORT must differ from PORT (got 8080 for both)",
    ]);
    expect(problemsOf({ OPS_PORT: "65536" })).toEqual([
      'OPS_PORT must be an integer from 0 to 65535 (got "65536")',
    ]);
    expect(problemsOf({ OPS_HOST: "0.0.0.0" })).toEqual([
      "OPS_HOST is set but OPS_PORT is not: set OPS_PORT to serve /metrics apart",
    ]);
  });
});

describe("the credentials cache", () => {
  it("5 s and 10,000 entries by default; seconds become milliseconds; 0 turns it off", () => {
    expect(loadConfig({})).toMatchObject({ authCacheTtlMs: 5_000, authCacheMaxEntries: 10_000 });
    expect(loadConfig({ AUTH_CACHE_TTL_S: "300", AUTH_CACHE_MAX_ENTRIES: "1" })).toMatchObject({
      authCacheTtlMs: 300_000,
      authCacheMaxEntries: 1,
    });
    expect(loadConfig({ AUTH_CACHE_TTL_S: "0" }).authCacheTtlMs).toBe(0);
    expect(problemsOf({ AUTH_CACHE_TTL_S: "301", AUTH_CACHE_MAX_ENTRIES: "0" })).toEqual([
      'AUTH_CACHE_TTL_S must be an integer from 0 to 300 (got "301")',
      'AUTH_CACHE_MAX_ENTRIES must be an integer from 1 to 10000000 (got "0")',
    ]);
  });
});

describe("Bearer: every value as given, every problem's words", () => {
  const base = {
    BEARER_ISSUER: "https://idp.example/realms/x",
    BEARER_AUDIENCE: "docflow-api",
    BEARER_JWKS_URL: "https://idp.example/jwks",
  };
  it("each optional variable set while Bearer is off is named", () => {
    const env = {
      BEARER_USER_CLAIM: "uid",
      BEARER_ALGORITHMS: "RS256",
      BEARER_CLOCK_SKEW_S: "5",
      BEARER_REQUIRED_SCOPE: "s",
      BEARER_ALLOWED_CLIENT_IDS: "a",
      BEARER_JWKS_COOLDOWN_MS: "1",
    };
    expect(problemsOf(env)).toEqual(
      Object.keys(env).map(
        (name) =>
          `${name} is set but Bearer tokens are off: set BEARER_ISSUER, BEARER_AUDIENCE and BEARER_JWKS_URL or BEARER_JWKS_FILE`,
      ),
    );
  });
  it("the required variables, each named once", () => {
    expect(problemsOf({ BEARER_JWKS_URL: base.BEARER_JWKS_URL })).toEqual([
      "BEARER_ISSUER is required when Bearer tokens are configured",
      "BEARER_AUDIENCE is required when Bearer tokens are configured",
    ]);
    expect(problemsOf({ BEARER_ISSUER: "i", BEARER_AUDIENCE: "a" })).toEqual([
      "BEARER_JWKS_URL or BEARER_JWKS_FILE is required when Bearer tokens are configured",
    ]);
  });
  it("every value given is kept, trimmed; the lists split on commas", () => {
    expect(
      loadConfig({
        ...base,
        BEARER_USER_CLAIM: " uid ",
        BEARER_ALGORITHMS: " ES256 , PS256 ,",
        BEARER_CLOCK_SKEW_S: "120",
        BEARER_REQUIRED_SCOPE: " docflow ",
        BEARER_ALLOWED_CLIENT_IDS: " app , ,other ",
        BEARER_JWKS_COOLDOWN_MS: "3600000",
      }).bearer,
    ).toEqual({
      issuer: base.BEARER_ISSUER,
      audience: "docflow-api",
      jwksUrl: base.BEARER_JWKS_URL,
      jwks: undefined,
      userClaim: "uid",
      algorithms: ["ES256", "PS256"],
      clockSkewS: 120,
      requiredScope: "docflow",
      allowedClientIds: ["app", "other"],
      jwksCooldownMs: 3_600_000,
      maxLifetimeS: 86_400,
    });
  });
  it("an empty list of clients means any client", () => {
    expect(
      loadConfig({ ...base, BEARER_ALLOWED_CLIENT_IDS: " , " }).bearer?.allowedClientIds,
    ).toBeUndefined();
  });
  it("the words of each refusal", () => {
    expect(problemsOf({ ...base, BEARER_JWKS_URL: "idp.example/jwks" })).toEqual([
      'BEARER_JWKS_URL must be an https:// URL (got "idp.example/jwks")',
    ]);
    expect(problemsOf({ ...base, BEARER_JWKS_URL: "https://idp.example/ jwks" })).toEqual([
      'BEARER_JWKS_URL must be an https:// URL (got "https://idp.example/ jwks")',
    ]);
    expect(problemsOf({ ...base, BEARER_JWKS_URL: "file:https://idp.example/jwks" })).toEqual([
      'BEARER_JWKS_URL must be an https:// URL (got "file:https://idp.example/jwks")',
    ]);
    // docs/security.md: anyone on the path of a plain http:// fetch could hand the service its keys.
    for (const url of ["http://idp.test/jwks", "http://10.0.0.1/jwks", "http://127.example/jwks"]) {
      expect(problemsOf({ ...base, BEARER_JWKS_URL: url })).toEqual([
        `BEARER_JWKS_URL must be an https:// URL (http:// only on a loopback address) (got "${url}")`,
      ]);
    }
    for (const url of ["http://127.0.0.1:9/jwks", "http://localhost/jwks", "http://[::1]:9/jwks"]) {
      expect(loadConfig({ ...base, BEARER_JWKS_URL: url }).bearer?.jwksUrl).toBe(url);
    }
    expect(problemsOf({ ...base, BEARER_MAX_LIFETIME_S: "59" })).toEqual([
      'BEARER_MAX_LIFETIME_S must be an integer from 60 to 604800 (got "59")',
    ]);
    expect(problemsOf({ ...base, BEARER_MAX_LIFETIME_S: "604801" })).toEqual([
      'BEARER_MAX_LIFETIME_S must be an integer from 60 to 604800 (got "604801")',
    ]);
    expect(loadConfig({ ...base, BEARER_MAX_LIFETIME_S: "604800" }).bearer?.maxLifetimeS).toBe(
      604_800,
    );
    expect(problemsOf({ ...base, BEARER_JWKS_FILE: "/x.json" })).toEqual([
      "BEARER_JWKS_URL and BEARER_JWKS_FILE: set exactly one, not both",
      "BEARER_JWKS_FILE cannot be read: /x.json",
    ]);
    expect(problemsOf({ ...base, BEARER_ALGORITHMS: "," })).toEqual([
      "BEARER_ALGORITHMS names no algorithm",
    ]);
    expect(problemsOf({ ...base, BEARER_ALGORITHMS: `RS256,${"H".repeat(90)}` })).toEqual([
      `BEARER_ALGORITHMS: "${"H".repeat(80)}…" is not accepted (symmetric algorithms and none are refused; use RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA, Ed25519)`,
    ]);
    expect(problemsOf({ ...base, BEARER_JWKS_COOLDOWN_MS: "3600001" })).toEqual([
      'BEARER_JWKS_COOLDOWN_MS must be an integer from 0 to 3600000 (got "3600001")',
    ]);
  });
  it("an unreadable JWKS file is named, and nothing else is said of it", () => {
    const dir = mkdtempSync(join(tmpdir(), "jwks-config-"));
    const file = join(dir, "locked.json");
    writeFileSync(file, "{}");
    chmodSync(file, 0o000);
    const { BEARER_JWKS_URL: _, ...noUrl } = base;
    const problems = problemsOf({ ...noUrl, BEARER_JWKS_FILE: join(dir, "missing.json") });
    expect(problems).toEqual([`BEARER_JWKS_FILE cannot be read: ${join(dir, "missing.json")}`]);
  });
  it("any problem in Bearer's variables leaves Bearer unconfigured, never half-configured", () => {
    expect(problemsOf({ ...base, BEARER_CLOCK_SKEW_S: "x" })).toHaveLength(1);
  });
});

describe("a refused value is shown back", () => {
  it("quoted, cut after 80 characters, with the password of a URL hidden", () => {
    expect(problemsOf({ PORT: "80 80" })).toEqual([
      'PORT must be an integer from 0 to 65535 (got "80 80")',
    ]);
    expect(problemsOf({ MONGODB_URI: "mongodb//app:s3cret@db:27017/x" })).toEqual([
      'MONGODB_URI must be a mongodb:// or mongodb+srv:// connection string (got "mongodb//app:***@db:27017/x")',
    ]);
    expect(problemsOf({ MONGODB_URI: "mongodb://app:s3cret@db x" })[0]).not.toContain("s3cret");
    expect(
      problemsOf({
        BEARER_ISSUER: "i",
        BEARER_AUDIENCE: "a",
        BEARER_JWKS_URL: "ftp://u:pw@idp/jwks",
      }),
    ).toEqual(['BEARER_JWKS_URL must not carry credentials (got "ftp://u:***@idp/jwks")']);
    expect(problemsOf({ OTEL_TRACES_EXPORTER: "zipkin" })).toEqual([
      'OTEL_TRACES_EXPORTER must be one of otlp, none (got "zipkin")',
    ]);
    // As given: a value is compared without case, but shown as it was written.
    expect(problemsOf({ OTEL_TRACES_SAMPLER: "Bogus" })[0]).toMatch(/\(got "Bogus"\)$/);
    expect(problemsOf({ METRICS_ENABLED: "Yes" })).toEqual([
      'METRICS_ENABLED must be "true" or "false" (got "Yes")',
    ]);
    expect(
      problemsOf({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "2" }),
    ).toEqual(['OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 (got "2")']);
    expect(problemsOf({ OTEL_PROPAGATORS: "tracecontext,b3" })).toEqual([
      'OTEL_PROPAGATORS must list tracecontext, baggage or none (got "b3")',
    ]);
    expect(problemsOf({ OTEL_SDK_DISABLED: "yes" })).toEqual([
      'OTEL_SDK_DISABLED must be "true" or "false" (got "yes")',
    ]);
    expect(problemsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toEqual([
      'OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL (got "collector:4318")',
    ]);
    expect(problemsOf({ OTEL_EXPORTER_OTLP_TIMEOUT: "soon" })).toEqual([
      'OTEL_EXPORTER_OTLP_TIMEOUT must be an integer from 1 to 600000 (got "soon")',
    ]);
  });
  it("but never the value of a header list (it carries API keys)", () => {
    const [problem] = problemsOf({ OTEL_EXPORTER_OTLP_HEADERS: "api-key secret-value" });
    expect(problem).toBe(
      "OTEL_EXPORTER_OTLP_HEADERS must be a comma-separated list of key=value (percent-encoded)",
    );
  });
  it("PUBLIC_URL: an http(s) URL without query, fragment or credentials; a trailing / dropped", () => {
    expect(loadConfig({}).publicUrl).toBeUndefined();
    expect(loadConfig({ PUBLIC_URL: "https://api.example.com/" }).publicUrl).toBe(
      "https://api.example.com",
    );
    expect(loadConfig({ PUBLIC_URL: "http://10.0.0.1:8080/docflow" }).publicUrl).toBe(
      "http://10.0.0.1:8080/docflow",
    );
    for (const bad of [
      "api.example.com",
      "https://api.example.com/?x=1",
      "https://u:p@api.example.com",
      "https://api.example.com/#a",
    ]) {
      expect(problemsOf({ PUBLIC_URL: bad }), bad).toHaveLength(1);
      expect(problemsOf({ PUBLIC_URL: bad })[0], bad).toMatch(
        /^PUBLIC_URL must be an http:\/\/ or https:\/\/ URL with no query, fragment or credentials \(got "/,
      );
    }
  });
});

describe("TLS", () => {
  it("off by default; TLS_CERT_FILE and TLS_KEY_FILE both or neither; a client CA only with them", () => {
    expect(loadConfig({}).tls).toBeUndefined();
    expect(loadConfig({ TLS_CERT_FILE: "/c.pem", TLS_KEY_FILE: "/k.pem" }).tls).toEqual({
      certFile: "/c.pem",
      keyFile: "/k.pem",
    });
    expect(
      loadConfig({ TLS_CERT_FILE: "/c.pem", TLS_KEY_FILE: "/k.pem", TLS_CLIENT_CA_FILE: "/ca.pem" })
        .tls,
    ).toEqual({ certFile: "/c.pem", keyFile: "/k.pem", clientCaFile: "/ca.pem" });
    expect(problemsOf({ TLS_CERT_FILE: "/c.pem" })).toEqual([
      "TLS_CERT_FILE and TLS_KEY_FILE: set both (TLS on) or neither (cleartext)",
    ]);
    expect(problemsOf({ TLS_CLIENT_CA_FILE: "/ca.pem" })).toEqual([
      "TLS_CLIENT_CA_FILE needs TLS_CERT_FILE and TLS_KEY_FILE (mutual TLS is TLS)",
    ]);
    expect(loadConfig({}).tlsReloadIntervalMs).toBe(10_000);
    expect(problemsOf({ TLS_RELOAD_INTERVAL_MS: "10" })).toEqual([
      'TLS_RELOAD_INTERVAL_MS must be an integer from 100 to 3600000 (got "10")',
    ]);
  });
});

describe("OTEL_*: a malformed value is one problem naming its variable (the process exits 2 with it)", () => {
  it.each([
    ["OTEL_SDK_DISABLED", "maybe"],
    ["OTEL_TRACES_EXPORTER", "zipkin"],
    ["OTEL_EXPORTER_OTLP_ENDPOINT", "not a url"],
    ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "ftp://x"],
    ["OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"],
    ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "thrift"],
    ["OTEL_EXPORTER_OTLP_HEADERS", "secret-token-without-equals"],
    ["OTEL_EXPORTER_OTLP_TRACES_HEADERS", "k=%E0%A4%A"],
    ["OTEL_EXPORTER_OTLP_TIMEOUT", "soon"],
    ["OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "-1"],
    ["OTEL_TRACES_SAMPLER", "sometimes"],
    ["OTEL_TRACES_SAMPLER_ARG", "1.5"],
    ["OTEL_PROPAGATORS", "b3"],
    ["OTEL_RESOURCE_ATTRIBUTES", "=x"],
    ["OTEL_BSP_SCHEDULE_DELAY", "x"],
    ["OTEL_BSP_EXPORT_TIMEOUT", "0"],
    ["OTEL_BSP_MAX_QUEUE_SIZE", "lots"],
    ["OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "1.5"],
  ])("%s=%s", (name, value) => {
    const problems = problemsOf({
      [name]: value,
      ...(name === "OTEL_TRACES_SAMPLER_ARG" && { OTEL_TRACES_SAMPLER: "traceidratio" }),
    });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(name);
    if (name.endsWith("HEADERS")) expect(problems[0]).not.toContain("secret-token");
  });
});

describe("MONGODB_URI's own timeouts", () => {
  it("are honoured: an explicit serverSelectionTimeoutMS (any case) in the URI wins over MONGODB_TIMEOUT_MS", async () => {
    const { MongoClient } = await import("mongodb");
    const { timeoutOptions } = await import("../../src/storage/database");
    const clientOf = (uri: string) => new MongoClient(uri, timeoutOptions(uri, 3_000, 9_000));
    const plain = clientOf("mongodb://db.example:27017/docflow");
    expect(plain.options.serverSelectionTimeoutMS).toBe(3_000);
    expect(plain.options.waitQueueTimeoutMS).toBe(3_000);
    expect(plain.options.socketTimeoutMS).toBe(9_000);
    const explicit = clientOf(
      "mongodb://db.example:27017/docflow?serverselectiontimeoutms=45000&socketTimeoutMS=0",
    );
    expect(explicit.options.serverSelectionTimeoutMS).toBe(45_000);
    expect(explicit.options.socketTimeoutMS).toBe(0);
    // What the URI leaves unsaid stays MONGODB_TIMEOUT_MS.
    expect(explicit.options.connectTimeoutMS).toBe(3_000);
    expect(explicit.options.waitQueueTimeoutMS).toBe(3_000);
  });
});
