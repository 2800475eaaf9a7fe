/**
 * Issue 15 / docs/api.md §9.1: Prometheus metrics on GET /metrics. Calls over all six
 * protocols (successes, 401, 409, 413 / resource_exhausted), unknown paths
 * and methods; a scrape before and after; count deltas per label set; the
 * bucket set; _count equal to the +Inf bucket; bounded label values.
 */
import { spawnSync } from "node:child_process";
import http from "node:http";
import { create } from "@bufbuild/protobuf";
import { beforeAll, describe, expect, it } from "vitest";
import { CounteragentService } from "../../gen/docflow/api/v1/counteragents_pb";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import { CounteragentGroupToCreateSchema } from "../../gen/docflow/legacy/counteragent_groups_pb";
import {
  SubscriptionSchema,
  SubscriptionsToUpdateSchema,
} from "../../gen/docflow/legacy/subscriptions_pb";
import { createMetrics, DATABASE_BUCKETS, DURATION_BUCKETS } from "../../src/observability/metrics";
import { createObserver } from "../../src/observability/observer";
import { MAX_REQUEST_BYTES } from "../../src/wire/body";
import { authHeader, BOX, USERS } from "../support/fixture";
import { callRpc, legacy, type RpcProtocol, startHarness, useHarness } from "../support/harness";
import { call, PROTOCOLS, type Protocol } from "../support/protocols";

const metrics = createMetrics();
const h = useHarness(undefined, undefined, {
  observer: createObserver(metrics, undefined),
  databaseMonitor: (client) => metrics.attachDatabase(client),
});
const auth = authHeader("admin");
const get = SubscriptionService.method.getSubscriptions;
const update = SubscriptionService.method.updateSubscriptions;
const createGroup = CounteragentService.method.createCounteragentGroup;

// ---------------------------------------------------------------- the text format

type Samples = Map<string, number>;

/** name{a="x",b="y"} value → key `name|a=x,b=y` (labels sorted). */
function parse(text: string): Samples {
  const samples: Samples = new Map();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels = [...(m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)]
      .map(([, k, v]) => `${k}=${v}`)
      .sort()
      .join(",");
    samples.set(`${m[1]}|${labels}`, Number(m[3]));
  }
  return samples;
}

function key(name: string, labels: Record<string, string | number | undefined>): string {
  return `${name}|${Object.entries(labels)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${v}`)
    .sort()
    .join(",")}`;
}

async function scrape(): Promise<{ text: string; samples: Samples; type: string | undefined }> {
  const res = await fetch(`${h.baseUrl}/metrics`);
  expect(res.status).toBe(200);
  const text = await res.text();
  return { text, samples: parse(text), type: res.headers.get("content-type") ?? undefined };
}

const delta = (before: Samples, after: Samples, k: string) =>
  (after.get(k) ?? 0) - (before.get(k) ?? 0);

const series = (s: Samples, name: string) =>
  [...s.keys()].filter((k) => k.startsWith(`${name}_count|`)).length;

// ---------------------------------------------------------------- calls

const SYSTEM: Record<Protocol, string> = {
  "connect-json": "connectrpc",
  "connect-binary": "connectrpc",
  grpc: "grpc",
  "grpc-web": "grpc",
  "legacy-protobuf": "docflow_legacy",
  "legacy-json": "docflow_legacy",
  "in-memory": "",
};

/** rpc_response_status_code as each system spells it (Connect: only on errors). */
function status(protocol: Protocol, code: string): string | undefined {
  if (SYSTEM[protocol] === "connectrpc") return code === "ok" ? undefined : code;
  return code.toUpperCase();
}

function tooLarge() {
  return create(update.input, {
    boxId: BOX,
    userId: USERS.clerk.userId,
    subscriptions: create(SubscriptionsToUpdateSchema, {
      Subscriptions: [
        create(SubscriptionSchema, { Id: "x".repeat(MAX_REQUEST_BYTES + 10), IsSubscribed: true }),
      ],
    }),
  });
}

function rawGet(path: string, method = "GET"): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port: h.port, path, method, agent: false },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("GET /metrics", () => {
  beforeAll(async () => {
    // A group named "Taken" exists, so creating it again is 409 / already_exists.
    const r = await callRpc(
      h,
      "connect-json",
      createGroup,
      create(createGroup.input, {
        boxId: BOX,
        group: create(CounteragentGroupToCreateSchema, { Name: "Taken" }),
      }),
      auth,
    );
    expect(r.ok).toBe(true);
  });

  it("is Prometheus text with the service's metrics and prom-client's defaults", async () => {
    const { text, type } = await scrape();
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const name of [
      "rpc_server_call_duration_seconds",
      "http_server_request_duration_seconds",
      "http_server_active_requests",
      "process_cpu_seconds_total",
      "nodejs_eventloop_lag_seconds",
      "nodejs_heap_size_used_bytes",
      "nodejs_gc_duration_seconds",
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
  });

  it("counts every call on all six protocols, per label set, and every request", async () => {
    const before = (await scrape()).samples;
    const expected = new Map<string, number>();
    const add = (k: string) => expected.set(k, (expected.get(k) ?? 0) + 1);
    for (const protocol of PROTOCOLS) {
      const system = SYSTEM[protocol];
      const rpcKey = (method: string, code: string, serverError = false) => {
        const s = status(protocol, code);
        return key("rpc_server_call_duration_seconds_count", {
          rpc_system_name: system,
          rpc_method: method,
          rpc_response_status_code: s,
          error_type: serverError ? s : undefined,
        });
      };
      const getName = `${get.parent.typeName}/${get.name}`;
      expect(
        (await call(h, protocol, get, create(get.input, { boxId: BOX, userId: "u-admin" }), auth))
          .ok,
      ).toBe(true);
      add(rpcKey(getName, "ok"));
      const unauth = await call(h, protocol, get, create(get.input, { boxId: BOX, userId: "u" }));
      expect(unauth).toMatchObject({ ok: false, status: 401 });
      add(rpcKey(getName, "unauthenticated"));
      const dup = await call(
        h,
        protocol,
        createGroup,
        create(createGroup.input, {
          boxId: BOX,
          group: create(CounteragentGroupToCreateSchema, { Name: "Taken" }),
        }),
        auth,
      );
      expect(dup).toMatchObject({ ok: false, status: 409 });
      add(rpcKey(`${createGroup.parent.typeName}/${createGroup.name}`, "already_exists"));
      if (protocol.startsWith("legacy")) {
        const big = await legacy(h, {
          method: "POST",
          path: `/UpdateSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`,
          headers: {
            authorization: auth,
            ...(protocol === "legacy-json" && { accept: "application/json" }),
          },
          body: new Uint8Array(MAX_REQUEST_BYTES + 1),
        });
        expect(big.status).toBe(413);
      } else {
        // Refused by the router before any interceptor runs: the front counts it.
        const big = await callRpc(h, protocol as RpcProtocol, update, tooLarge(), auth);
        expect(big).toMatchObject({ ok: false });
      }
      add(rpcKey(`${update.parent.typeName}/${update.name}`, "resource_exhausted"));
    }
    // A gRPC call refused for its size is answered before its body has arrived: its stream
    // (and the request's observation) ends a little later.
    let after = (await scrape()).samples;
    for (let i = 0; i < 100 && [...expected].some(([k, n]) => delta(before, after, k) < n); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = (await scrape()).samples;
    }
    for (const [k, n] of expected) {
      expect({ k, n: delta(before, after, k) }).toEqual({ k, n });
    }
    // Every RPC series that moved is one we expected.
    const moved = [...after.keys()].filter(
      (k) =>
        k.startsWith("rpc_server_call_duration_seconds_count|") && delta(before, after, k) !== 0,
    );
    expect(moved.sort()).toEqual([...expected.keys()].sort());

    // The legacy path as declared, whatever case the client used.
    const legacyRoute = (status: number, version = "1.1") =>
      key("http_server_request_duration_seconds_count", {
        http_request_method: "GET",
        http_route: "/GetSubscriptions",
        http_response_status_code: status,
        network_protocol_version: version,
      });
    expect(delta(before, after, legacyRoute(200))).toBe(2);
    expect(delta(before, after, legacyRoute(401))).toBe(2);
    const grpcRoute = key("http_server_request_duration_seconds_count", {
      http_request_method: "POST",
      http_route: `/${getName()}`,
      http_response_status_code: 200,
      network_protocol_version: "2",
    });
    // gRPC: the OK call and the UNAUTHENTICATED one both answer HTTP 200.
    expect(delta(before, after, grpcRoute)).toBe(2);
  });

  it("takes the declared route, not the path as sent", async () => {
    const before = (await scrape()).samples;
    expect(await rawGet(`/getsubscriptions?boxId=${BOX}&userId=u-admin`)).toBe(401);
    const after = (await scrape()).samples;
    const k = key("http_server_request_duration_seconds_count", {
      http_request_method: "GET",
      http_route: "/GetSubscriptions",
      http_response_status_code: 401,
      network_protocol_version: "1.1",
    });
    expect(delta(before, after, k)).toBe(1);
    expect(
      delta(
        before,
        after,
        key("rpc_server_call_duration_seconds_count", {
          rpc_system_name: "docflow_legacy",
          rpc_method: getName(),
          rpc_response_status_code: "UNAUTHENTICATED",
        }),
      ),
    ).toBe(1);
  });

  it("unknown paths, methods and verbs never become label values: a scan adds no series", async () => {
    const scan = async (round: number) => {
      for (let i = 0; i < 20; i++) {
        expect(await rawGet(`/scan-${round}-${i}/admin.php?id=${i}`)).toBe(404);
        // Methods Node parses but the conventions do not name: _OTHER.
        expect(
          await rawGet(`/x${round}${i}`, ["PROPFIND", "MKCOL", "SEARCH", "PURGE"][i % 4]),
        ).toBe(404);
        const r = await callRpc(
          h,
          "grpc",
          { ...get, name: `Nope${round}${i}` } as typeof get,
          create(get.input),
          auth,
        );
        expect(r).toMatchObject({ ok: false });
      }
    };
    await scan(0);
    const first = (await scrape()).samples;
    await scan(1);
    const second = (await scrape()).samples;
    expect(series(second, "http_server_request_duration_seconds")).toBe(
      series(first, "http_server_request_duration_seconds"),
    );
    expect(series(second, "rpc_server_call_duration_seconds")).toBe(
      series(first, "rpc_server_call_duration_seconds"),
    );
    const unknown = key("http_server_request_duration_seconds_count", {
      http_request_method: "GET",
      http_response_status_code: 404,
      network_protocol_version: "1.1",
    });
    expect(delta(first, second, unknown)).toBe(20);
    const other = key("http_server_request_duration_seconds_count", {
      http_request_method: "_OTHER",
      http_response_status_code: 404,
      network_protocol_version: "1.1",
    });
    expect(delta(first, second, other)).toBe(20);
    const unimplemented = key("rpc_server_call_duration_seconds_count", {
      rpc_system_name: "grpc",
      rpc_method: "_OTHER",
      rpc_response_status_code: "UNIMPLEMENTED",
      error_type: "UNIMPLEMENTED",
    });
    expect(delta(first, second, unimplemented)).toBe(20);
    for (const k of second.keys()) {
      expect(k).not.toMatch(/scan-|admin\.php|Nope|PROPFIND|MKCOL|SEARCH|PURGE/);
    }
  });

  it("health, docs and /metrics itself are counted under their routes", async () => {
    const before = (await scrape()).samples;
    expect(await rawGet("/healthz")).toBe(200);
    expect(await rawGet("/openapi.json")).toBe(200);
    const after = (await scrape()).samples;
    for (const route of ["/healthz", "/openapi.json", "/metrics"]) {
      const k = key("http_server_request_duration_seconds_count", {
        http_request_method: "GET",
        http_route: route,
        http_response_status_code: 200,
        network_protocol_version: "1.1",
      });
      expect({ route, n: delta(before, after, k) }).toEqual({ route, n: 1 });
    }
  });

  it("every histogram series has the bucket set, and _count equals the +Inf bucket", async () => {
    const { samples } = await scrape();
    const wanted = [...DURATION_BUCKETS.map(String), "+Inf"].sort();
    let checked = 0;
    for (const name of [
      "rpc_server_call_duration_seconds",
      "http_server_request_duration_seconds",
    ]) {
      for (const [k, count] of samples) {
        if (!k.startsWith(`${name}_count|`)) continue;
        const labels = k.slice(k.indexOf("|") + 1);
        const buckets = [...samples.entries()].filter(([b]) => {
          if (!b.startsWith(`${name}_bucket|`)) return false;
          const rest = b
            .slice(b.indexOf("|") + 1)
            .split(",")
            .filter((l) => !l.startsWith("le="))
            .join(",");
          return rest === labels;
        });
        const les = buckets.map(([b]) => /(?:^|[|,])le=([^,]+)/.exec(b)?.[1] ?? "").sort();
        expect(les).toEqual(wanted);
        const inf = buckets.find(([b]) => b.includes("le=+Inf"))?.[1];
        expect(inf).toBe(count);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(10);
  });

  it("follows the Prometheus naming rules for the service's own metrics (docs/api.md §9.1)", async () => {
    const { text } = await scrape();
    const types = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, n, t]) => [n, t]);
    const helps = new Set([...text.matchAll(/^# HELP (\S+) \S/gm)].map(([, n]) => n));
    const own = types.filter(([n]) => !/^(process|nodejs)_/.test(n ?? ""));
    expect(own.map(([n]) => n).sort()).toEqual([
      "db_client_connection_max",
      "db_client_connection_pending_requests",
      "db_client_connection_wait_time_seconds",
      "db_client_connections_usage",
      "db_client_operation_duration_seconds",
      "docflow_admission_calls",
      "docflow_admission_latency_seconds",
      "docflow_admission_limit",
      "docflow_admission_queue_wait_seconds",
      "docflow_admission_refusals_total",
      "docflow_connections_aged_total",
      "docflow_connections_open",
      "docflow_connections_refused_total",
      "docflow_ready",
      "http_server_active_requests",
      "http_server_request_duration_seconds",
      "rpc_server_call_duration_seconds",
    ]);
    for (const [name = "", type] of types) {
      expect(helps.has(name)).toBe(true);
      expect(name).toMatch(/^[a-z][a-z0-9_]*$/);
      if (type === "counter") expect(name).toMatch(/_total$/);
      // prom-client's default nodejs_active_*_total gauges are its own business (docs/api.md §9.1).
      if (type !== "counter" && !/^nodejs_/.test(name)) expect(name).not.toMatch(/_total$/);
      if (/duration|seconds|_time/.test(name) && !/^nodejs_/.test(name)) {
        expect(name).toMatch(/_seconds(_total)?$/);
      }
      expect(name).not.toMatch(/_(milliseconds|ms|microseconds|kilobytes|megabytes)(_|$)/);
    }
  });
});

/**
 * promtool from $PROMTOOL (CI sets it: then it must run) or PATH (build: see
 * docs/observability.md); with neither, the test says it skipped, and why.
 */
const PROMTOOL = process.env.PROMTOOL ?? "promtool";
const promtoolRequired = process.env.PROMTOOL !== undefined;
const promtoolFound = spawnSync(PROMTOOL, ["--version"]).status === 0;

describe("database metrics (OpenTelemetry database conventions)", () => {
  it("each command a call sends: its duration by command and collection, in the database buckets", async () => {
    const before = (await scrape()).samples;
    const res = await legacy(h, {
      method: "GET",
      path: `/GetSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`,
      headers: { authorization: auth },
    });
    expect(res.status).toBe(200);
    const after = (await scrape()).samples;
    const found = [...after.keys()].filter(
      (k) =>
        k.startsWith("db_client_operation_duration_seconds_count|") && delta(before, after, k) > 0,
    );
    // The call read the employee's subscriptions (credentials may come from the cache).
    expect(
      found.some((k) => /db_operation_name=find/.test(k) && /db_collection_name=\w/.test(k)),
    ).toBe(true);
    const les = [...after.keys()]
      .filter(
        (k) =>
          k.startsWith("db_client_operation_duration_seconds_bucket|") &&
          k.includes("db_operation_name=find,"),
      )
      .map((k) => /le=([^,]+)/.exec(k)?.[1]);
    expect(new Set(les)).toEqual(new Set([...DATABASE_BUCKETS.map(String), "+Inf"]));
  });

  it("a failed command: error_type is the server's code name or the driver's error class; an unknown command is _OTHER", async () => {
    const before = (await scrape()).samples;
    await expect(h.db.command({ noSuchCommand: 1 })).rejects.toThrow();
    const after = (await scrape()).samples;
    const failed = [...after.keys()].filter(
      (k) =>
        k.startsWith("db_client_operation_duration_seconds_count|") &&
        k.includes("error_type=") &&
        delta(before, after, k) === 1,
    );
    expect(failed).toHaveLength(1);
    // An unknown command name is not a label value.
    expect(failed[0]).toMatch(/db_operation_name=_OTHER/);
    expect(failed[0]).toMatch(/error_type=[A-Za-z]+(,|$)/);
  });

  it("collection names are a bounded label set: past 32, _OTHER", async () => {
    for (let i = 0; i < 40; i++) await h.db.collection(`scan_${i}`).findOne({});
    const { samples } = await scrape();
    const names = new Set(
      [...samples.keys()]
        .filter((k) => k.startsWith("db_client_operation_duration_seconds_count|"))
        .map((k) => /db_collection_name=([^,]*)/.exec(k)?.[1])
        .filter((n) => n !== undefined),
    );
    expect(names.size).toBeLessThanOrEqual(33);
    expect(names.has("_OTHER")).toBe(true);
  });

  it("the pool: connections idle and used, the most it may open, waits and waiters", async () => {
    const before = (await scrape()).samples;
    await Promise.all(
      Array.from({ length: 8 }, () =>
        legacy(h, {
          method: "GET",
          path: `/GetSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`,
          headers: { authorization: auth },
        }),
      ),
    );
    const { samples } = await scrape();
    const pools = [...samples.keys()].filter((k) => k.startsWith("db_client_connection_max|"));
    expect(pools.length).toBeGreaterThan(0);
    const pool = /db_client_connection_pool_name=([^,]+)/.exec(pools[0] as string)?.[1] as string;
    expect(pool).toMatch(/^[\w.-]+:\d+$/);
    expect(
      samples.get(key("db_client_connection_max", { db_client_connection_pool_name: pool })),
    ).toBe(100);
    const idle = samples.get(
      key("db_client_connections_usage", {
        db_client_connection_pool_name: pool,
        db_client_connection_state: "idle",
      }),
    );
    const used = samples.get(
      key("db_client_connections_usage", {
        db_client_connection_pool_name: pool,
        db_client_connection_state: "used",
      }),
    );
    // Between calls every connection is back in the pool.
    expect(used).toBe(0);
    expect(idle).toBeGreaterThan(0);
    expect(
      samples.get(
        key("db_client_connection_pending_requests", { db_client_connection_pool_name: pool }),
      ),
    ).toBe(0);
    const waits = key("db_client_connection_wait_time_seconds_count", {
      db_client_connection_pool_name: pool,
    });
    expect(delta(before, samples, waits)).toBeGreaterThanOrEqual(8);
  });
});

describe("readiness", () => {
  it("docflow_ready is what /readyz answers: 1 while the database answers", async () => {
    expect((await fetch(`${h.baseUrl}/readyz`)).status).toBe(200);
    const { samples } = await scrape();
    expect(samples.get("docflow_ready|")).toBe(1);
  });
  it("0 once the instance drains (as /readyz's 503)", async () => {
    const own = await startHarness(undefined, undefined, undefined, {
      observer: createObserver(createMetrics(), undefined),
    });
    try {
      await own.server.drain(0);
      expect((await fetch(`${own.baseUrl}/readyz`)).status).toBe(503);
      const text = await (await fetch(`${own.baseUrl}/metrics`)).text();
      expect(parse(text).get("docflow_ready|")).toBe(0);
    } finally {
      await own.close();
    }
  });
});

describe("promtool check metrics", () => {
  it("reports nothing for the service's own metrics (docs/api.md §9.1)", async (ctx) => {
    if (!promtoolFound) {
      expect(promtoolRequired, `PROMTOOL=${PROMTOOL} is set but does not run`).toBe(false);
      ctx.skip("promtool is not installed (CI builds it: test/support/promtool.sh)");
    }
    const { text } = await scrape();
    // prom-client's default nodejs_active_*_total gauges are its own business.
    const own = text
      .split("\n")
      .filter((line) => !/^(# (HELP|TYPE) )?(process|nodejs)_/.test(line))
      .join("\n");
    const run = spawnSync(PROMTOOL, ["check", "metrics"], { input: own, encoding: "utf8" });
    expect(`${run.stdout}${run.stderr}`.trim()).toBe("");
    expect(run.status).toBe(0);
  });
});

function getName(): string {
  return `${get.parent.typeName}/${get.name}`;
}
