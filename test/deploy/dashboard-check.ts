/**
 * npm run test:dashboard (test/deploy/dashboard.sh): the Grafana dashboard of
 * deploy/grafana, checked against the real thing. The service (dist/main.js,
 * embedded database, demo data) is put under a short load on every protocol,
 * with some errors; a real Prometheus (PROMETHEUS, Debian's package) scrapes
 * it every second and loads deploy/prometheus's rules. Then every query of
 * every panel, template variables expanded, must parse and return series;
 * every metric a panel names must be one the service exports; the JSON must
 * be a dashboard of the schema version it declares (panels with ids and grid
 * positions, the datasource a variable). Exits non-zero naming each problem.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import { DEMO } from "../../src/fixtures/demo";

const ROOT = new URL("../../", import.meta.url).pathname;
const DASHBOARD = join(ROOT, "deploy/grafana/docflow-api.json");
const RULES = join(ROOT, "deploy/prometheus/docflow-api.rules.yml");
const PROMETHEUS = process.env.PROMETHEUS ?? "prometheus";
const AUTH = `ServiceAuth svcauth_api_client_id=${DEMO.apiKey}, svcauth_token=${DEMO.admin.token}`;

// biome-ignore lint/suspicious/noExplicitAny: the dashboard is arbitrary JSON, checked field by field
type Json = any;
/** Grafana's reference to the datasource variable (a literal "${…}", not a template). */
const DATASOURCE_VARIABLE = ["$", "{datasource}"].join("");
const problems: string[] = [];
const children: ChildProcess[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function start(command: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  return child;
}

async function until<T>(what: string, seconds: number, probe: () => Promise<T | undefined>) {
  for (let i = 0; i < seconds * 4; i++) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what}: not within ${seconds} s`);
}

/** The JSON model: what Grafana needs of a dashboard of this schema version. */
function checkModel(dashboard: Json): Json[] {
  if (typeof dashboard.schemaVersion !== "number") problems.push("schemaVersion is not a number");
  if (typeof dashboard.uid !== "string" || typeof dashboard.title !== "string") {
    problems.push("uid and title must be strings");
  }
  const variables: Json[] = dashboard.templating?.list ?? [];
  const source = variables.find((v) => v.name === "datasource");
  if (source?.type !== "datasource" || source.query !== "prometheus") {
    problems.push("no datasource variable of type prometheus");
  }
  if (!variables.some((v) => v.name === "instance")) problems.push("no instance variable");
  const ids = new Set<number>();
  const panels: Json[] = [];
  for (const panel of dashboard.panels ?? []) {
    const name = `panel ${panel.id} "${panel.title}"`;
    if (!Number.isInteger(panel.id) || ids.has(panel.id))
      problems.push(`${name}: id missing or repeated`);
    ids.add(panel.id);
    const g = panel.gridPos ?? {};
    if (![g.x, g.y, g.w, g.h].every(Number.isInteger) || g.x < 0 || g.w < 1 || g.x + g.w > 24) {
      problems.push(`${name}: gridPos must be whole numbers within 24 columns`);
    }
    if (panel.type === "row") continue;
    if (panel.datasource?.uid !== DATASOURCE_VARIABLE)
      problems.push(`${name}: datasource is not the variable`);
    if (!Array.isArray(panel.targets) || panel.targets.length === 0)
      problems.push(`${name}: no query`);
    for (const target of panel.targets ?? []) {
      if (target.datasource?.uid !== DATASOURCE_VARIABLE)
        problems.push(`${name}: a query's datasource is not the variable`);
      if (typeof target.expr !== "string" || typeof target.refId !== "string") {
        problems.push(`${name}: a query without expr or refId`);
      }
    }
    panels.push(panel);
  }
  return panels;
}

/** A query as Grafana would send it: the template variables expanded. */
const expand = (expr: string) =>
  expr
    .replaceAll("$__rate_interval", "1m")
    .replaceAll("$__interval", "15s")
    .replaceAll("$instance", ".*");

/** Metric names a query reads: identifiers followed by a selector or a range. */
function metricsOf(expr: string): string[] {
  const functions = new Set([
    "sum",
    "rate",
    "increase",
    "histogram_quantile",
    "max",
    "vector",
    "by",
    "or",
  ]);
  return [...expr.matchAll(/([a-z_][a-z0-9_]*)\s*\{/g)]
    .map(([, name]) => name as string)
    .filter((name) => !functions.has(name));
}

async function load(base: string, until: number): Promise<number> {
  const transports = [
    createConnectTransport({ baseUrl: base, httpVersion: "1.1" }),
    createConnectTransport({ baseUrl: base, httpVersion: "2", useBinaryFormat: true }),
    createGrpcTransport({ baseUrl: base }),
    createGrpcWebTransport({ baseUrl: base, httpVersion: "1.1" }),
  ];
  const clients = transports.map((t) => createClient(SubscriptionService, t));
  const who = { boxId: DEMO.boxId, userId: DEMO.clerk.userId };
  const query = `boxId=${DEMO.boxId}&userId=${DEMO.clerk.userId}`;
  let calls = 0;
  while (Date.now() < until) {
    await Promise.all([
      ...clients.map((c) => c.getSubscriptions(who, { headers: { authorization: AUTH } })),
      // Client errors: no credentials, an unknown employee.
      ...clients.map((c) => c.getSubscriptions(who).catch(() => undefined)),
      clients[0]
        ?.getSubscriptions({ ...who, userId: "nobody" }, { headers: { authorization: AUTH } })
        .catch(() => undefined),
      fetch(`${base}/GetSubscriptions?${query}`, { headers: { authorization: AUTH } }),
      fetch(`${base}/GetSubscriptions?${query}`, {
        headers: { authorization: AUTH, accept: "application/json" },
      }),
      fetch(
        `${base}/GetCounteragentsFromGroup?boxId=${DEMO.boxId}&counteragentGroupId=${DEMO.partnersGroupId}&count=4`,
        {
          headers: { authorization: AUTH },
        },
      ),
      fetch(`${base}/Restore?boxId=${DEMO.boxId}&messageId=nope`, {
        method: "POST",
        headers: { authorization: AUTH },
      }),
      fetch(`${base}/GetSubscriptions?${query}`),
    ]);
    calls += 14;
  }
  return calls;
}

async function main(): Promise<void> {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8"));
  const panels = checkModel(dashboard);

  // The service.
  const service = start(process.execPath, [join(ROOT, "dist/main.js")], {
    ...process.env,
    MONGODB_URI: "",
    SEED_FILE: "",
    HOST: "127.0.0.1",
    PORT: "0",
    LOG_LEVEL: "info",
    SHUTDOWN_DRAIN_MS: "0",
    // The load sends calls without credentials on purpose (the 4xx panels): from one
    // address they would spend its failure budget and every later call be refused 429.
    AUTH_FAILURES_PER_ADDRESS: "0",
    AUTH_FAILURES_PER_KEY: "0",
  });
  let out = "";
  service.stdout?.on("data", (c: Buffer) => (out += c.toString()));
  const base = await until("the service listening", 60, async () => {
    const m = /"msg":"listening","url":"(http:\/\/[^"]+)"/.exec(out);
    return m?.[1];
  });

  // Prometheus, scraping it every second, with the rules loaded.
  const dir = mkdtempSync(join(tmpdir(), "docflow-prometheus-"));
  const promPort = await freePort();
  writeFileSync(
    join(dir, "prometheus.yml"),
    [
      "global: { scrape_interval: 1s, evaluation_interval: 1s }",
      `rule_files: ["${RULES}"]`,
      "scrape_configs:",
      "  - job_name: docflow-api",
      `    static_configs: [{ targets: ["${new URL(base).host}"] }]`,
      "",
    ].join("\n"),
  );
  start(
    PROMETHEUS,
    [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${promPort}`,
    ],
    process.env,
  );
  const prom = `http://127.0.0.1:${promPort}`;
  const query = async (expr: string) => {
    const res = await fetch(`${prom}/api/v1/query?query=${encodeURIComponent(expr)}`);
    return (await res.json()) as { status: string; error?: string; data?: { result: unknown[] } };
  };
  await until("Prometheus scraping the service", 60, async () => {
    const up = await query('up{job="docflow-api"} == 1');
    return up.data && up.data.result.length > 0 ? true : undefined;
  });

  // Load for long enough that every rate over 1m has two samples and more.
  const calls = await load(base, Date.now() + 20_000);
  await new Promise((r) => setTimeout(r, 3_000));

  // Every query of every panel: parses, returns series.
  let queries = 0;
  for (const panel of panels) {
    for (const target of panel.targets) {
      queries++;
      const answer = await query(expand(target.expr));
      if (answer.status !== "success") {
        problems.push(`panel "${panel.title}" ${target.refId}: ${answer.error}`);
      } else if ((answer.data?.result.length ?? 0) === 0) {
        problems.push(`panel "${panel.title}" ${target.refId}: no series`);
      }
    }
  }
  // The instance variable's own query.
  const instances = await fetch(
    `${prom}/api/v1/label/instance/values?match[]=${encodeURIComponent('up{job="docflow-api"}')}`,
  ).then((r) => r.json() as Promise<{ data: string[] }>);
  if (instances.data.length === 0) problems.push("the instance variable lists no instance");

  // Every metric a panel names is exported by the service.
  const exposition = await fetch(`${base}/metrics`).then((r) => r.text());
  const exported = new Set([...exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, n]) => n));
  for (const panel of panels) {
    for (const target of panel.targets) {
      for (const metric of metricsOf(target.expr)) {
        const family = metric.replace(/_(bucket|count|sum)$/, "");
        if (metric !== "up" && !exported.has(metric) && !exported.has(family)) {
          problems.push(`panel "${panel.title}": ${metric} is not a metric the service exports`);
        }
      }
    }
  }

  // The rules loaded, and evaluated without error.
  const rules = await fetch(`${prom}/api/v1/rules`).then(
    (r) =>
      r.json() as Promise<{
        data: { groups: { name: string; rules: { health: string; name: string }[] }[] };
      }>,
  );
  const evaluated = rules.data.groups.flatMap((g) => g.rules);
  if (evaluated.length === 0) problems.push("Prometheus loaded no rule of deploy/prometheus");
  for (const rule of evaluated) {
    if (rule.health === "err") problems.push(`rule ${rule.name} fails to evaluate`);
  }

  console.log(
    `dashboard: ${panels.length} panels, ${queries} queries against Prometheus after ${calls} calls; ${evaluated.length} rules evaluated`,
  );
  rmSync(dir, { recursive: true, force: true });
}

main()
  .catch((error: unknown) => {
    problems.push(error instanceof Error ? error.message : String(error));
  })
  .finally(() => {
    for (const child of children) child.kill("SIGTERM");
    if (problems.length > 0) {
      console.error(`dashboard check failed:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
      process.exitCode = 1;
    }
    setTimeout(() => process.exit(), 2_000).unref();
  });
