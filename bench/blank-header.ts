/**
 * blank-header.ts: does a header full of blanks (or of one repeated
 * character), read before authentication, still stall the service?
 *
 * The measurement behind docs/security.md, "Work before authentication",
 * and docs/performance.md, "The audit's header under load". Self-contained:
 * only node: built-ins. Needs Node 24 (it refuses an older one): run it
 * from the repository with `npx tsx`, which takes the project's Node.
 * A checkout is any clone, this one included (`--checkout head=.`):
 *
 *   # 1. /livez latency, quiet and under attack, the checkouts interleaved
 *   #    (round 1: A B, round 2: B A, round 3: A B):
 *   npx tsx bench/blank-header.ts bench --checkout old=./old --checkout head=./head \
 *       --rounds 3 --seconds 15 [--attackers 4] [--blanks 60000] [--h1-blanks 16000] \
 *       [--phases quiet,h2,h2pad,h1,h1fit] [--budget off|default] [--out runs/NAME]
 *
 *   # 2. the sweep: ~500 header shapes, one request at a time, stalls flagged:
 *   npx tsx bench/blank-header.ts sweep --checkout head=./head [--reps 5] [--stall-ms 50] \
 *       [--only SUBSTRING] [--timeout-ms 60000] [--out runs/NAME]
 *
 * A checkout is a clone with `npm ci` done: `git clone /work/main X && git -C X
 * checkout <sha> && (cd X && npm ci)`. The script runs `npm run -s build` in
 * it, then what package.json's start script runs (`env A=1 node <flags>
 * dist/main.js`), with PORT (a free one), HOST=127.0.0.1,
 * SHUTDOWN_DRAIN_MS=0, the embedded database and the demo data (MONGODB_URI
 * and SEED_FILE unset). The service runs under `taskset -c 0`; this script,
 * the victim and the attackers on core 1 (when there are two cores and
 * taskset). The attackers run in a child process at nice 10, so that on the
 * shared core the victim is woken first. The service's CPU use per phase is
 * read from /proc.
 *
 * bench, for each round and checkout, one service start, a 1 s warm-up, then:
 *   quiet    the victim alone: one HTTP/1.1 keep-alive connection sending
 *            GET /livez one request at a time for --seconds: count, p50, p99, max
 *   h2       the same while --attackers h2c connections (node:http2, prior
 *            knowledge) each send GET /GetSubscriptions?boxId=b&userId=u with
 *            `Authorization: ServiceAuth a=<--blanks blanks>x` in a loop, each
 *            waiting for its answer (statuses and time to answer recorded)
 *   h2pad    control: the same flood with requests as large, the bulk in a
 *            header nothing parses (`x-pad: a…a`, Authorization `ServiceAuth a=x`)
 *   h1       the audit's header over HTTP/1.1 keep-alive connections (Node's
 *            default 16 KiB header limit answers 431 to 60,000 blanks)
 *   h1fit    HTTP/1.1 with --h1-blanks blanks, the most that fits under 16 KiB
 * A /livez attempt that fails (a reset keep-alive connection) is counted
 * apart, not timed. After each phase the attackers stop sending and their
 * answers in flight are awaited (60 s at most) before the next phase.
 * --budget off (the default) sets AUTH_FAILURES_PER_ADDRESS=0 and
 * AUTH_FAILURES_PER_KEY=0, so that every attack request reaches the parser
 * (with the budget on, a commit that has a working one answers 429 after 30
 * failures, before parsing); a commit without the budget ignores both.
 *
 * sweep: the service with Bearer tokens configured too (a generated ES256
 * JWKS file), failure budget off. Each shape is sent --reps times, one at a
 * time, over one h2c connection with --blanks characters, and again over
 * HTTP/1.1 with --h1-blanks; prints status (with grpc-status for gRPC) and
 * time to answer (p50, max), STALL when p50 > --stall-ms. Warm-up first (the
 * controls 20 times, the audit's header twice). TE is sent over HTTP/1.1
 * only (HTTP/2 allows nothing but "trailers"), two Authorization fields too
 * (node:http2 refuses to send them).
 *
 * Everything it starts (the service, its embedded database, the attacker
 * child) it stops, also on Ctrl-C or when stdout closes. Results: tables on
 * stdout; JSON and the service logs under --out (default runs/<mode>-<time>).
 */
import { type ChildProcess, execFileSync, fork, spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import os from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";

// ---------------------------------------------------------------- shared

const LEGACY_PATH = "/GetSubscriptions?boxId=b&userId=u";
const RPC_PATH = "/docflow.api.v1.SubscriptionService/GetSubscriptions";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One answer: an HTTP status, or a word for what happened instead (reset, ECONNRESET…). */
interface Answer {
  status: string;
  ms: number;
}

function pct(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[
    Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))
  ] as number;
}

interface Summary {
  count: number;
  p50: number;
  p99: number;
  max: number;
}
function summarize(ms: readonly number[]): Summary {
  const s = [...ms].sort((a, b) => a - b);
  return { count: s.length, p50: pct(s, 0.5), p99: pct(s, 0.99), max: s.at(-1) ?? Number.NaN };
}
const statusCounts = (answers: readonly Answer[]) => {
  const counts: Record<string, number> = {};
  for (const a of answers) counts[a.status] = (counts[a.status] ?? 0) + 1;
  return counts;
};
const fmt = (ms: number) =>
  Number.isNaN(ms)
    ? "-"
    : ms >= 1000
      ? `${(ms / 1000).toFixed(2)}s`
      : ms >= 10
        ? ms.toFixed(0)
        : ms.toFixed(2);

/** A request over HTTP/2 on `session`; never rejects. */
function h2Request(
  session: http2.ClientHttp2Session,
  headers: http2.OutgoingHttpHeaders,
  body: Buffer | undefined,
  timeoutMs: number,
): Promise<Answer> {
  const t0 = performance.now();
  return new Promise((resolveAnswer) => {
    let status = "";
    let done = false;
    const finish = (what: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolveAnswer({ status: what, ms: performance.now() - t0 });
    };
    const timer = setTimeout(() => {
      finish("timeout");
      req?.close(http2.constants.NGHTTP2_CANCEL);
    }, timeoutMs);
    let req: http2.ClientHttp2Stream | undefined;
    try {
      req = session.request(headers, { endStream: body === undefined });
    } catch (error) {
      finish(`client-refused:${(error as NodeJS.ErrnoException).code ?? "?"}`);
      return;
    }
    req.on("response", (h) => {
      status = String(h[":status"]);
      if (h["grpc-status"] !== undefined) status += `/grpc-status:${h["grpc-status"]}`;
    });
    req.on("trailers", (t) => {
      if (t["grpc-status"] !== undefined)
        status = `${status || "?"}/grpc-status:${t["grpc-status"]}`;
    });
    req.on("data", () => {});
    req.on("end", () => finish(status || "no-status"));
    req.on("error", (e: NodeJS.ErrnoException) => finish(status || `error:${e.code ?? e.message}`));
    req.on("close", () => finish(status || `reset:${req?.rstCode}`));
    if (body !== undefined) req.end(body);
  });
}

/** A request over HTTP/1.1 through `agent`; never rejects. */
function h1Request(
  port: number,
  agent: http.Agent,
  method: string,
  path: string,
  headers: http.OutgoingHttpHeaders,
  body: Buffer | undefined,
  timeoutMs: number,
): Promise<Answer> {
  const t0 = performance.now();
  return new Promise((resolveAnswer) => {
    let done = false;
    const finish = (what: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolveAnswer({ status: what, ms: performance.now() - t0 });
    };
    const timer = setTimeout(() => {
      finish("timeout");
      req.destroy();
    }, timeoutMs);
    let req: http.ClientRequest;
    try {
      req = http.request({ host: "127.0.0.1", port, method, path, headers, agent }, (res) => {
        res.on("data", () => {});
        res.on("end", () => finish(String(res.statusCode)));
        res.on("error", (e: NodeJS.ErrnoException) => finish(`error:${e.code ?? e.message}`));
      });
    } catch (error) {
      finish(`client-refused:${(error as NodeJS.ErrnoException).code ?? "?"}`);
      return;
    }
    req.on("error", (e: NodeJS.ErrnoException) => finish(`error:${e.code ?? e.message}`));
    req.end(body);
  });
}

function h2Connect(port: number): Promise<http2.ClientHttp2Session> {
  return new Promise((resolveSession, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on("error", () => {}); // a failed request reports it; the loop reconnects
    session.once("connect", () => resolveSession(session));
    session.once("close", () => reject(new Error("h2 session closed before connecting")));
  });
}

// ---------------------------------------------------------------- attacker (child process)

interface AttackSpec {
  port: number;
  protocol: "h2" | "h1";
  connections: number;
  /** Sent with every attack request (GET /GetSubscriptions?boxId=b&userId=u). */
  headers: Record<string, string>;
}

/** The audit's header: `ServiceAuth a=` then blanks then `x`. */
const auditHeader = (blanks: number) => `ServiceAuth a=${" ".repeat(blanks)}x`;

/** The attack phases of bench: protocol and headers (from --blanks and --h1-blanks). */
const ATTACKS: Record<
  string,
  { protocol: "h2" | "h1"; headers: (blanks: number, h1Blanks: number) => Record<string, string> }
> = {
  // The audit's request over h2c.
  h2: { protocol: "h2", headers: (b) => ({ authorization: auditHeader(b) }) },
  // Control: a request as large, its bulk in a header nothing parses, a short malformed Authorization.
  h2pad: {
    protocol: "h2",
    headers: (b) => ({ authorization: "ServiceAuth a=x", "x-pad": "a".repeat(b) }),
  },
  // HTTP/1.1 with as many blanks (over Node's 16 KiB header limit: 431) ...
  h1: { protocol: "h1", headers: (b) => ({ authorization: auditHeader(b) }) },
  // ... and with the most that fits under it.
  h1fit: { protocol: "h1", headers: (_b, h1) => ({ authorization: auditHeader(h1) }) },
};

async function attackerMain(spec: AttackSpec): Promise<void> {
  try {
    os.setPriority(10); // the victim (same core) is woken first
  } catch {}
  let stopping = false;
  let hardStop = false;
  process.on("message", (m: { type: string }) => {
    if (m.type === "stop") stopping = true;
  });
  const answers: Answer[] = [];
  const sessions: http2.ClientHttp2Session[] = [];
  const agents: http.Agent[] = [];
  const loop = async (i: number) => {
    if (spec.protocol === "h2") {
      let session: http2.ClientHttp2Session | undefined;
      while (!stopping) {
        if (!session || session.destroyed || session.closed) {
          try {
            session = await h2Connect(spec.port);
            sessions[i] = session;
          } catch {
            answers.push({ status: "connect-failed", ms: 0 });
            await sleep(10);
            continue;
          }
        }
        answers.push(
          await h2Request(
            session,
            { ":method": "GET", ":path": LEGACY_PATH, ...spec.headers },
            undefined,
            600_000,
          ),
        );
      }
      session?.close();
    } else {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      agents[i] = agent;
      while (!stopping) {
        answers.push(
          await h1Request(spec.port, agent, "GET", LEGACY_PATH, spec.headers, undefined, 600_000),
        );
      }
      agent.destroy();
    }
  };
  const loops = Array.from({ length: spec.connections }, (_, i) => loop(i));
  // Ready once every connection has sent its first request.
  await sleep(200);
  process.send?.({ type: "ready" });
  const deadline = new Promise<void>((r) =>
    process.on("message", (m: { type: string; graceMs?: number }) => {
      if (m.type === "stop")
        setTimeout(() => {
          hardStop = true;
          r();
        }, m.graceMs ?? 60_000).unref();
    }),
  );
  await Promise.race([Promise.all(loops), deadline]);
  if (hardStop) {
    for (const s of sessions) s?.destroy();
    for (const a of agents) a?.destroy();
  }
  process.send?.({ type: "result", answers, cutShort: hardStop }, () => process.exit(0));
}

// ---------------------------------------------------------------- the service

interface Service {
  name: string;
  child: ChildProcess;
  port: number;
  log: string;
}

interface StartPlan {
  env: Record<string, string>;
  nodeFlags: string[];
}

/** `npm run -s build && exec env A=1 node --flag dist/main.js`: its env and node flags. */
function startPlan(checkout: string): StartPlan {
  const pkg = JSON.parse(readFileSync(join(checkout, "package.json"), "utf8")) as {
    scripts?: Record<string, string>;
  };
  const start = pkg.scripts?.start ?? "node dist/main.js";
  const last = start.split("&&").at(-1) ?? "";
  const words = last.trim().split(/\s+/);
  const env: Record<string, string> = {};
  const nodeFlags: string[] = [];
  let inNode = false;
  for (const w of words) {
    if (!inNode) {
      if (w === "node") inNode = true;
      else if (/^[A-Z_][A-Z0-9_]*=/.test(w)) {
        const eq = w.indexOf("=");
        env[w.slice(0, eq)] = w.slice(eq + 1);
      }
    } else if (w.startsWith("-")) nodeFlags.push(w);
    else break; // dist/main.js
  }
  return { env, nodeFlags };
}

function binPath(checkout: string) {
  return `${join(checkout, "node_modules/.bin")}:${process.env.PATH ?? ""}`;
}

const built = new Set<string>();
function build(checkout: string) {
  if (built.has(checkout)) return;
  execFileSync("npm", ["run", "-s", "build"], {
    cwd: checkout,
    env: { ...process.env, PATH: binPath(checkout) },
    stdio: "inherit",
  });
  built.add(checkout);
}

function freePort(): Promise<number> {
  return new Promise((r, j) => {
    const s = net.createServer();
    s.once("error", j);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => r(port));
    });
  });
}

const pinning = { ok: false };
const running = new Set<ChildProcess>();

async function startService(
  name: string,
  checkout: string,
  extraEnv: Record<string, string>,
  logFile: string,
): Promise<Service> {
  build(checkout);
  const plan = startPlan(checkout);
  const port = await freePort();
  const node = join(checkout, "node_modules/.bin/node");
  if (!existsSync(node)) throw new Error(`${node} is missing: run npm ci in ${checkout}`);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  delete env.MONGODB_URI;
  delete env.SEED_FILE;
  Object.assign(env, plan.env, {
    PATH: binPath(checkout),
    PORT: String(port),
    HOST: "127.0.0.1",
    SHUTDOWN_DRAIN_MS: "0",
    ...extraEnv,
  });
  const argv = [...plan.nodeFlags, "dist/main.js"];
  const fd = openSync(logFile, "a");
  const child = pinning.ok
    ? spawn("taskset", ["-c", "0", node, ...argv], {
        cwd: checkout,
        env,
        stdio: ["ignore", fd, fd],
      })
    : spawn(node, argv, { cwd: checkout, env, stdio: ["ignore", fd, fd] });
  running.add(child);
  child.once("exit", () => running.delete(child));
  const t0 = Date.now();
  const agent = new http.Agent({ keepAlive: false });
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`${name}: the service exited (${child.exitCode}); see ${logFile}`);
    const a = await h1Request(port, agent, "GET", "/readyz", {}, undefined, 2_000);
    if (a.status === "200") break;
    if (Date.now() - t0 > 90_000) throw new Error(`${name}: not ready after 90 s; see ${logFile}`);
    await sleep(200);
  }
  return { name, child, port, log: logFile };
}

function descendants(pid: number): number[] {
  try {
    const out = execFileSync("ps", ["-e", "-o", "pid=,ppid="], { encoding: "utf8" });
    const kids = new Map<number, number[]>();
    for (const line of out.trim().split("\n")) {
      const [p, pp] = line.trim().split(/\s+/).map(Number);
      if (p === undefined || pp === undefined) continue;
      kids.set(pp, [...(kids.get(pp) ?? []), p]);
    }
    const all: number[] = [];
    const walk = (p: number) => {
      for (const k of kids.get(p) ?? []) {
        all.push(k);
        walk(k);
      }
    };
    walk(pid);
    return all;
  } catch {
    return [];
  }
}

async function stopService(s: Service): Promise<void> {
  const pid = s.child.pid;
  if (pid === undefined) return;
  const under = descendants(pid); // the embedded database (and taskset's node, if any)
  if (s.child.exitCode === null && s.child.signalCode === null) {
    // taskset execs node, so the child's pid is node's
    s.child.kill("SIGTERM");
    const exited = new Promise<void>((r) => s.child.once("exit", () => r()));
    await Promise.race([exited, sleep(20_000)]);
    if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGKILL");
  }
  await sleep(300);
  for (const p of under) {
    try {
      process.kill(p, "SIGKILL"); // only if still alive: our own descendants, by pid
    } catch {}
  }
}

/** CPU seconds (user+system) of a process, from /proc. */
function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (100 Hz)
  } catch {
    return Number.NaN;
  }
}

// ---------------------------------------------------------------- bench

/**
 * GET /livez one at a time on one keep-alive connection for `seconds`. A
 * failed attempt (a reset: a keep-alive connection that the server closed as
 * idle once its blocked event loop ran again) is counted, not timed, and the
 * next attempt opens a new connection.
 */
async function victim(
  port: number,
  seconds: number,
): Promise<{ ms: number[]; errors: Record<string, number> }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const ms: number[] = [];
  const errors: Record<string, number> = {};
  const end = performance.now() + seconds * 1000;
  try {
    while (performance.now() < end) {
      const a = await h1Request(port, agent, "GET", "/livez", {}, undefined, 120_000);
      if (a.status === "200") ms.push(a.ms);
      else errors[a.status] = (errors[a.status] ?? 0) + 1;
    }
  } finally {
    agent.destroy();
  }
  return { ms, errors };
}

interface PhaseResult {
  phase: string;
  victim: Summary & { errors: Record<string, number> };
  attacker?: Summary & { statuses: Record<string, number>; cutShort: boolean };
  serviceCpu: number;
}

async function attackPhase(
  service: Service,
  phase: string,
  spec: AttackSpec,
  seconds: number,
): Promise<PhaseResult> {
  const child = fork(process.argv[1] as string, ["attacker", JSON.stringify(spec)], {
    execArgv: process.execArgv,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  running.add(child);
  child.once("exit", () => running.delete(child));
  const messages: Array<{ type: string; answers?: Answer[]; cutShort?: boolean }> = [];
  let wake: (() => void) | undefined;
  child.on("message", (m: { type: string }) => {
    messages.push(m);
    wake?.();
  });
  const waitFor = async (type: string) => {
    for (;;) {
      const found = messages.find((m) => m.type === type);
      if (found) return found;
      if (child.exitCode !== null) throw new Error(`attacker exited before ${type}`);
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 500);
      });
    }
  };
  await waitFor("ready");
  const cpu0 = cpuSeconds(service.child.pid);
  const t0 = performance.now();
  const { ms, errors } = await victim(service.port, seconds);
  const cpu1 = cpuSeconds(service.child.pid);
  const wall = (performance.now() - t0) / 1000;
  child.send({ type: "stop", graceMs: 60_000 });
  const result = (await waitFor("result")) as { answers: Answer[]; cutShort: boolean };
  await new Promise<void>((r) => (child.exitCode !== null ? r() : child.once("exit", () => r())));
  const answers = result.answers.filter((a) => a.status !== "connect-failed" || a.ms > 0);
  return {
    phase,
    victim: { ...summarize(ms), errors },
    attacker: {
      ...summarize(answers.map((a) => a.ms)),
      statuses: statusCounts(result.answers),
      cutShort: result.cutShort,
    },
    serviceCpu: (cpu1 - cpu0) / wall,
  };
}

async function quietPhase(service: Service, seconds: number): Promise<PhaseResult> {
  const cpu0 = cpuSeconds(service.child.pid);
  const t0 = performance.now();
  const { ms, errors } = await victim(service.port, seconds);
  const wall = (performance.now() - t0) / 1000;
  return {
    phase: "quiet",
    victim: { ...summarize(ms), errors },
    serviceCpu: (cpuSeconds(service.child.pid) - cpu0) / wall,
  };
}

interface RunResult {
  checkout: string;
  round: number;
  phases: PhaseResult[];
}

function printRun(r: RunResult) {
  console.log(`\n== ${r.checkout}, round ${r.round}`);
  console.log(
    "phase   | /livez n    p50     p99     max | attacker n  p50     p99     statuses            | service CPU | /livez failures",
  );
  for (const p of r.phases) {
    const v = p.victim;
    const a = p.attacker;
    console.log(
      `${p.phase.padEnd(7)} | ${String(v.count).padStart(8)} ${fmt(v.p50).padStart(7)} ${fmt(v.p99).padStart(7)} ${fmt(v.max).padStart(7)} | ` +
        (a
          ? `${String(a.count).padStart(10)} ${fmt(a.p50).padStart(7)} ${fmt(a.p99).padStart(7)} ${JSON.stringify(a.statuses).padEnd(19)}${a.cutShort ? " (cut short)" : ""}`
          : `${"".padStart(10)} ${"".padStart(7)} ${"".padStart(7)} ${"".padEnd(19)}`) +
        ` | ${(p.serviceCpu * 100).toFixed(0)}%` +
        (Object.keys(v.errors).length ? ` | /livez failed: ${JSON.stringify(v.errors)}` : ""),
    );
  }
}

function printSummary(results: RunResult[]) {
  console.log("\n== summary over rounds: median [min–max] of the per-round values (ms)");
  const checkouts = [...new Set(results.map((r) => r.checkout))];
  const phases = [...new Set(results.flatMap((r) => r.phases.map((p) => p.phase)))];
  const agg = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const med =
      s.length % 2
        ? (s[(s.length - 1) / 2] as number)
        : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
    return `${fmt(med)} [${fmt(s[0] as number)}–${fmt(s.at(-1) as number)}]`;
  };
  console.log(
    "checkout | phase   | /livez p50          | /livez p99          | /livez max          | /livez n       | attacker p50 (time to answer) | attacker p99        | attacker statuses (all rounds)",
  );
  for (const c of checkouts) {
    for (const ph of phases) {
      const ps = results
        .filter((r) => r.checkout === c)
        .map((r) => r.phases.find((p) => p.phase === ph))
        .filter((p): p is PhaseResult => p !== undefined);
      if (ps.length === 0) continue;
      const statuses: Record<string, number> = {};
      for (const p of ps)
        for (const [k, n] of Object.entries(p.attacker?.statuses ?? {}))
          statuses[k] = (statuses[k] ?? 0) + n;
      const att = ps.every((p) => p.attacker);
      const failed: Record<string, number> = {};
      for (const p of ps)
        for (const [k, n] of Object.entries(p.victim.errors)) failed[k] = (failed[k] ?? 0) + n;
      const failures = Object.keys(failed).length
        ? ` | /livez failed: ${JSON.stringify(failed)}`
        : "";
      console.log(
        `${c.padEnd(8)} | ${ph.padEnd(7)} | ${agg(ps.map((p) => p.victim.p50)).padEnd(19)} | ${agg(ps.map((p) => p.victim.p99)).padEnd(19)} | ${agg(ps.map((p) => p.victim.max)).padEnd(19)} | ${ps
          .map((p) => p.victim.count)
          .join("/")
          .padEnd(14)} | ` +
          (att
            ? `${agg(ps.map((p) => p.attacker?.p50 ?? Number.NaN)).padEnd(29)} | ${agg(ps.map((p) => p.attacker?.p99 ?? Number.NaN)).padEnd(19)} | ${JSON.stringify(statuses)}`
            : `${"".padEnd(29)} | ${"".padEnd(19)} |`) +
          failures,
      );
    }
  }
}

// ---------------------------------------------------------------- sweep

interface Variant {
  name: string;
  protocol: "h2" | "h1";
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body?: Buffer;
}

const grpcFrame = Buffer.from([0, 0, 0, 0, 0]);
const connectJson = Buffer.from("{}");

/** The request each protocol sends, with a malformed ServiceAuth (a fast 401) unless overridden. */
function base(
  kind: "legacy" | "connect" | "grpc" | "grpcweb" | "livez",
): Omit<Variant, "name" | "protocol"> {
  const auth = { authorization: "ServiceAuth a=b" };
  switch (kind) {
    case "legacy":
      return { method: "GET", path: LEGACY_PATH, headers: { ...auth } };
    case "connect":
      return {
        method: "POST",
        path: RPC_PATH,
        headers: { ...auth, "content-type": "application/json" },
        body: connectJson,
      };
    case "grpc":
      return {
        method: "POST",
        path: RPC_PATH,
        headers: { ...auth, "content-type": "application/grpc", te: "trailers" },
        body: grpcFrame,
      };
    case "grpcweb":
      return {
        method: "POST",
        path: RPC_PATH,
        headers: { ...auth, "content-type": "application/grpc-web+proto" },
        body: grpcFrame,
      };
    case "livez":
      return { method: "GET", path: "/livez", headers: {} };
  }
}

/**
 * The shapes, `blanks` long, over `protocol`: each header with the requests
 * (legacy, Connect, gRPC, gRPC-Web, /livez) that read it.
 */
function shapes(blanks: number, protocol: "h2" | "h1"): Variant[] {
  const B = " ".repeat(blanks);
  const half = " ".repeat(Math.floor(blanks / 2));
  const rep = (s: string, n = blanks) => s.repeat(Math.ceil(n / s.length)).slice(0, n);
  const out: Variant[] = [];
  const suffix = protocol === "h1" ? ` [HTTP/1.1, n=${blanks}]` : "";
  const add = (
    name: string,
    kind: Parameters<typeof base>[0],
    headers: Record<string, string | string[]>,
  ) => {
    const b = base(kind);
    out.push({
      name: `${kind} ${name}${suffix}`,
      protocol,
      ...b,
      headers: { ...b.headers, ...headers },
    });
  };
  // Controls: a small header.
  for (const k of ["legacy", "connect", "grpc", "grpcweb", "livez"] as const)
    add("control (small headers)", k, {});

  // Authorization, ServiceAuth.
  const auth: Array<[string, string]> = [
    ["ServiceAuth a=<B>x (the audit's)", `ServiceAuth a=${B}x`],
    ['ServiceAuth a="<B>x (quote never closed)', `ServiceAuth a="${B}x`],
    ['ServiceAuth a="<B>"x (text after the quote)', `ServiceAuth a="${B}"x`],
    ['ServiceAuth a="x"<B>x', `ServiceAuth a="x"${B}x`],
    ['ServiceAuth a="x"<B>,b=c', `ServiceAuth a="x"${B},b=c`],
    [
      'svcauth_api_client_id="<B>", svcauth_token=t (quoted blanks reach the key check)',
      `ServiceAuth svcauth_api_client_id="${B}", svcauth_token=t`,
    ],
    [
      "svcauth_api_client_id=k<B>x, svcauth_token=t (unquoted)",
      `ServiceAuth svcauth_api_client_id=k${B}x, svcauth_token=t`,
    ],
    ["ServiceAuth<B>x", `ServiceAuth${B}x`],
    ["x<B>ServiceAuth a=b (blanks between)", `x${B}ServiceAuth a=b`],
    ["ServiceAuth a<B/2>=<B/2>x", `ServiceAuth a${half}=${half}x`],
    ["ServiceAuth a=b<B>,<B/2>x (space before comma)", `ServiceAuth a=b${half},${half.slice(1)}x`],
    ["ServiceAuth a=b,<B>x (blanks before a name)", `ServiceAuth a=b,${B}x`],
    ["ServiceAuth + tabs a=<tabs>x", `ServiceAuth a=${"\t".repeat(blanks)}x`],
    ["ServiceAuth a=<NBSP×n>x (latin-1 0xA0)", `ServiceAuth a=${"\u00a0".repeat(blanks)}x`],
    ["ServiceAuth <',' ×n>", `ServiceAuth ${rep(",")}`],
    ["ServiceAuth a=<',' ×n>", `ServiceAuth a=${rep(",")}`],
    ["ServiceAuth <'a=' ×n>", `ServiceAuth ${rep("a=")}`],
    ["ServiceAuth <'a=\"' ×n>", `ServiceAuth ${rep('a="')}`],
    ["ServiceAuth <'a=\",' ×n>", `ServiceAuth ${rep('a=",')}`],
    ["ServiceAuth a=<'\"' ×n>", `ServiceAuth a=${rep('"')}`],
    ["ServiceAuth <'a ' ×n>", `ServiceAuth ${rep("a ")}`],
    ["ServiceAuth <'a' ×n> (one long name)", `ServiceAuth ${rep("a")}`],
    ["<'a' ×n> (one long scheme)", rep("a")],
    ["<'a' ×n> x (long scheme, then a param)", `${rep("a")} x`],
    ["ServiceAuth <distinct params 'ab=c,' ×n>", `ServiceAuth ${distinctParams(blanks)}`],
    ["ServiceAuth a=b, a=b (repeated)", "ServiceAuth a=b, a=b"],
  ];
  for (const [n, v] of auth) add(`Authorization: ${n}`, "legacy", { authorization: v });
  for (const [n, v] of auth.slice(0, 3)) {
    add(`Authorization: ${n}`, "connect", { authorization: v });
    add(`Authorization: ${n}`, "grpc", { authorization: v });
  }
  // node:http2 refuses to send two Authorization fields: over HTTP/1.1 only.
  if (protocol === "h1")
    add("two Authorization headers, ServiceAuth a=<B/2>x each", "legacy", {
      authorization: [`ServiceAuth a=${half}x`, `ServiceAuth a=${half}x`],
    });
  add("Authorization: <B/2>x (no scheme)", "legacy", { authorization: `x${half}x` });

  // Authorization, Bearer (the service has a JWKS file configured).
  const bearer: Array<[string, string]> = [
    ["Bearer <B>x", `Bearer ${B}x`],
    ["Bearer x<B>x", `Bearer x${B}x`],
    ["Bearer <'a' ×n> x", `Bearer ${rep("a", blanks - 2)} x`],
    ["Bearer <'a' ×n/2><'=' ×n/2>x", `Bearer ${rep("a", blanks / 2)}${rep("=", blanks / 2)}x`],
    ["Bearer a.b.<B>c", `Bearer a.b.${B}c`],
    ["Bearer <'a.' ×n>", `Bearer ${rep("a.")}`],
    ["Bearer <'a' ×n>.b.c (too large)", `Bearer ${rep("a", blanks - 4)}.b.c`],
    ["Bearer <'a' ×7000>.b.c (just under 8 KiB)", `Bearer ${rep("a", 7000)}.b.c`],
    [
      "Bearer <'a' ×3000>.<'b' ×3000>.<'c' ×1500> (a JWS shape, bad base64 JSON)",
      `Bearer ${rep("a", 3000)}.${rep("b", 3000)}.${rep("c", 1500)}`,
    ],
    [
      'Bearer <base64 of {"alg":"ES256", "kid": 5000 blanks}>.e30.c',
      `Bearer ${Buffer.from(JSON.stringify({ alg: "ES256", kid: " ".repeat(5000) })).toString("base64url")}.e30.c`,
    ],
    ["bearer<B>x", `bearer${B}x`],
    ["x<B>Bearer x", `x${B}Bearer x`],
  ];
  for (const [n, v] of bearer) add(`Authorization: ${n}`, "legacy", { authorization: v });
  for (const [n, v] of bearer.slice(0, 2))
    add(`Authorization: ${n}`, "connect", { authorization: v });

  // Other headers read before authentication.
  const generic: Array<[string, string]> = [
    ["x<B>x", `x${B}x`],
    ["<'a' ×n>", rep("a")],
    ["<',' ×n>", `x${rep(",", blanks - 1)}`],
    ["<';' ×n>", `x${rep(";", blanks - 1)}`],
    ["<', ' ×n>x", `x${rep(", ", blanks - 2)}x`],
  ];
  const specific: Record<string, Array<[string, string]>> = {
    "content-type": [
      ["application/<B>json", `application/${B}json`],
      ["application/json<B>x", `application/json${B}x`],
      ["application/<'+' ×n>json", `application/${rep("+")}json`],
      ["application/<'a+' ×n>x", `application/${rep("a+")}x`],
      ["application/json;<B>charset=x", `application/json;${B}charset=x`],
      ["application/json; <'charset=utf-8;' ×n>", `application/json; ${rep("charset=utf-8;")}`],
      ["application/grpc+<'a' ×n>", `application/grpc+${rep("a")}`],
    ],
    accept: [
      ["application/json<B>x", `application/json${B}x`],
      ["<'application/' ×n>", rep("application/")],
      ["<'application/problem+' ×n>", rep("application/problem+")],
      ["<'text/event-stream' ×n>x", `${rep("text/event-stream", blanks - 1)}x`],
      ["<'*/*;q=1,' ×n>", rep("*/*;q=1,")],
    ],
    "accept-encoding": [
      ["gzip;<';' ×n>", `gzip;${rep(";")}`],
      ["gzip;q=<'0' ×n>1", `gzip;q=${rep("0")}1`],
      ["<'gzip, ' ×n>", rep("gzip, ")],
      ["<'br;q=0.5,' ×n>", rep("br;q=0.5,")],
      ["gzip<B>;q=1", `gzip${B};q=1`],
    ],
    "x-request-id": [["<'a' ×n>!", `${rep("a", blanks - 1)}!`]],
    te: [
      ["trailers<B>x", `trailers${B}x`],
      ["<'trailers, ' ×n>", rep("trailers, ")],
    ],
    "grpc-timeout": [
      ["<'1' ×n>S", `${rep("1", blanks - 1)}S`],
      ["1<B>S", `1${B}S`],
      ["<'1' ×n>", rep("1")],
    ],
    "connect-timeout-ms": [
      ["<'1' ×n>", rep("1")],
      ["1<B>1", `1${B}1`],
      ["<'1' ×n>x", `${rep("1", blanks - 1)}x`],
    ],
    "grpc-accept-encoding": [["<'gzip,' ×n>", rep("gzip,")]],
    "grpc-encoding": [["<'a' ×n>", rep("a")]],
    "connect-accept-encoding": [["<'gzip,' ×n>", rep("gzip,")]],
    "connect-content-encoding": [["<'a' ×n>", rep("a")]],
    "content-encoding": [["<'gzip,' ×n>", rep("gzip,")]],
    "connect-protocol-version": [["<'1' ×n>", rep("1")]],
    traceparent: [["00-<'a' ×n>-01", `00-${rep("a", blanks - 6)}-01`]],
    "x-forwarded-for": [["<'1.2.3.4, ' ×n>", rep("1.2.3.4, ")]],
    origin: [["http://<'a' ×n>", `http://${rep("a", blanks - 7)}`]],
    "user-agent": [["<'a ' ×n>x", `${rep("a ", blanks - 1)}x`]],
    "if-none-match": [["<'\"a\", ' ×n>", rep('"a", ')]],
  };
  const kindsOf: Record<string, Array<Parameters<typeof base>[0]>> = {
    "content-type": ["legacy", "connect", "grpc", "grpcweb"],
    accept: ["legacy", "connect"],
    "accept-encoding": ["legacy", "connect", "livez"],
    "x-request-id": ["legacy", "connect", "grpc", "livez"],
    te: ["grpc", "legacy"],
    "grpc-timeout": ["grpc", "grpcweb"],
    "connect-timeout-ms": ["connect"],
    "grpc-accept-encoding": ["grpc"],
    "grpc-encoding": ["grpc"],
    "connect-accept-encoding": ["connect"],
    "connect-content-encoding": ["connect"],
    "content-encoding": ["connect", "legacy"],
    "connect-protocol-version": ["connect"],
    traceparent: ["legacy"],
    "x-forwarded-for": ["legacy"],
    origin: ["legacy", "connect"],
    "user-agent": ["legacy", "grpc"],
    "if-none-match": ["livez"],
  };
  for (const [header, kinds] of Object.entries(kindsOf)) {
    // HTTP/2 allows no TE but "trailers" (RFC 9113 §8.2.2; node:http2 refuses to send one): over HTTP/1.1 only.
    if (header === "te" && protocol === "h2") continue;
    const shapes = [
      ...(specific[header] ?? []),
      ...((specific[header]?.length ?? 0) > 2 ? generic.slice(0, 2) : generic),
    ];
    for (const kind of kinds)
      for (const [n, v] of shapes) add(`${header}: ${n}`, kind, { [header]: v });
  }

  return out;
}

/**
 * Every shape over h2c with --blanks, and over HTTP/1.1 with --h1-blanks (the
 * most that fits in Node's 16 KiB header limit); plus the audit's header
 * over HTTP/1.1 at full length (431).
 */
function variants(blanks: number, h1Blanks: number): Variant[] {
  const out = [...shapes(blanks, "h2"), ...shapes(h1Blanks, "h1")];
  const b = base("legacy");
  out.push({
    name: `legacy Authorization: ServiceAuth a=<B>x [HTTP/1.1, n=${blanks}: over the 16 KiB header limit]`,
    protocol: "h1",
    ...b,
    headers: { ...b.headers, authorization: auditHeader(blanks) },
  });
  return out;
}

/** `ab=c,ac=c,…`: distinct parameter names (letters only) filling about n characters. */
function distinctParams(n: number): string {
  const parts: string[] = [];
  let len = 0;
  for (let i = 0; len < n; i++) {
    let name = "";
    let k = i;
    do {
      name = String.fromCharCode(97 + (k % 26)) + name;
      k = Math.floor(k / 26);
    } while (k > 0);
    const p = `x${name}=c,`;
    parts.push(p);
    len += p.length;
  }
  return parts.join("").slice(0, -1);
}

interface SweepRow {
  checkout: string;
  variant: string;
  protocol: string;
  statuses: Record<string, number>;
  p50: number;
  max: number;
  stall: boolean;
}

async function sweep(
  service: Service,
  checkout: string,
  reps: number,
  stallMs: number,
  only: string | undefined,
  blanks: number,
  h1Blanks: number,
  timeoutMs: number,
): Promise<SweepRow[]> {
  const rows: SweepRow[] = [];
  let session: http2.ClientHttp2Session | undefined;
  const send = async (v: Variant): Promise<Answer> => {
    if (v.protocol === "h2") {
      if (!session || session.closed || session.destroyed) session = await h2Connect(service.port);
      const headers: http2.OutgoingHttpHeaders = {
        ":method": v.method,
        ":path": v.path,
        ...v.headers,
      };
      return await h2Request(session, headers, v.body, timeoutMs);
    }
    const agent = new http.Agent({ keepAlive: false });
    const answer = await h1Request(
      service.port,
      agent,
      v.method,
      v.path,
      v.headers,
      v.body,
      timeoutMs,
    );
    agent.destroy();
    return answer;
  };
  const all = variants(blanks, h1Blanks);
  // Warm-up (not recorded): the controls 20 times, the audit's header twice.
  for (const v of all.filter((v) => v.name.includes("control")))
    for (let i = 0; i < 20; i++) await send(v);
  for (const v of all.filter((v) => v.name.startsWith("legacy Authorization: ServiceAuth a=<B>x")))
    for (let i = 0; i < 2; i++) await send(v);
  const list = all.filter((v) => !only || v.name.includes(only));
  for (const v of list) {
    const answers: Answer[] = [];
    for (let i = 0; i < reps; i++) answers.push(await send(v));
    const s = summarize(answers.map((a) => a.ms));
    const row = {
      checkout,
      variant: v.name,
      protocol: v.protocol,
      statuses: statusCounts(answers),
      p50: s.p50,
      max: s.max,
      stall: s.p50 > stallMs,
    };
    rows.push(row);
    console.log(
      `${row.stall ? "STALL" : "ok   "} ${checkout.padEnd(5)} ${v.protocol} ${fmt(row.p50).padStart(7)} ${fmt(row.max).padStart(7)}  ${JSON.stringify(row.statuses).padEnd(14)} ${v.name}`,
    );
  }
  session?.close();
  return rows;
}

function bearerEnv(dir: string): Record<string, string> {
  const { publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = {
    ...publicKey.export({ format: "jwk" }),
    kid: "blank-header",
    alg: "ES256",
    use: "sig",
  };
  const file = join(dir, "jwks.json");
  writeFileSync(file, JSON.stringify({ keys: [jwk] }));
  return {
    BEARER_ISSUER: "https://issuer.example",
    BEARER_AUDIENCE: "docflow-api",
    BEARER_JWKS_FILE: file,
  };
}

// ---------------------------------------------------------------- main

async function main() {
  const major = Number(process.versions.node.split(".")[0]);
  if (major < 24) {
    console.error(
      `Node ${process.versions.node}: run with Node 24 (PATH=<clone>/node_modules/.bin:$PATH npx tsx ...)`,
    );
    process.exit(2);
  }
  const [mode, ...rest] = process.argv.slice(2);
  if (mode === "attacker") return attackerMain(JSON.parse(rest[0] as string) as AttackSpec);
  if (mode !== "bench" && mode !== "sweep") {
    console.error(
      "usage: npx tsx bench/blank-header.ts bench|sweep --checkout NAME=DIR [...] (see the comment at the top)",
    );
    process.exit(2);
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      checkout: { type: "string", multiple: true },
      rounds: { type: "string", default: "3" },
      seconds: { type: "string", default: "15" },
      attackers: { type: "string", default: "4" },
      blanks: { type: "string", default: "60000" },
      "h1-blanks": { type: "string", default: "16000" },
      phases: { type: "string", default: "quiet,h2,h2pad,h1,h1fit" },
      budget: { type: "string", default: "off" },
      reps: { type: "string", default: "5" },
      "stall-ms": { type: "string", default: "50" },
      "timeout-ms": { type: "string", default: "60000" },
      only: { type: "string" },
      bearer: { type: "boolean", default: mode === "sweep" },
      out: { type: "string" },
    },
  });
  const checkouts = (values.checkout ?? []).map((c) => {
    const eq = c.indexOf("=");
    return eq < 0
      ? { name: c, dir: resolve(c) }
      : { name: c.slice(0, eq), dir: resolve(c.slice(eq + 1)) };
  });
  if (checkouts.length === 0) throw new Error("give at least one --checkout NAME=DIR");
  const out = resolve(
    values.out ?? join("runs", `${mode}-${new Date().toISOString().replace(/[:.]/g, "-")}`),
  );
  mkdirSync(out, { recursive: true });

  // Pin this process (and so the attacker child) to core 1; the service goes on core 0.
  if (os.availableParallelism() >= 2) {
    for (let i = 0; i < 5 && !pinning.ok; i++) {
      try {
        execFileSync("taskset", ["-a", "-p", "-c", "1", String(process.pid)], {
          stdio: ["ignore", "ignore", "pipe"],
        });
        pinning.ok = true;
      } catch (error) {
        console.error(`taskset: ${String((error as { stderr?: unknown }).stderr ?? error).trim()}`);
        await sleep(100);
      }
    }
  }
  const extraEnv: Record<string, string> =
    values.budget === "off" ? { AUTH_FAILURES_PER_ADDRESS: "0", AUTH_FAILURES_PER_KEY: "0" } : {};
  if (values.bearer) Object.assign(extraEnv, bearerEnv(out));
  const commits = Object.fromEntries(
    checkouts.map((c) => [
      c.name,
      execFileSync("git", ["-C", c.dir, "log", "-1", "--format=%h %s"], { encoding: "utf8" })
        .trim()
        .slice(0, 100),
    ]),
  );
  console.log(
    `node ${process.version}, pinned: ${pinning.ok ? "service core 0, load core 1" : "no"}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  for (const c of checkouts) console.log(`${c.name}: ${c.dir} @ ${commits[c.name]}`);
  console.log(`env for the service: ${JSON.stringify(extraEnv)}`);

  if (mode === "bench") {
    const rounds = Number(values.rounds);
    const seconds = Number(values.seconds);
    const connections = Number(values.attackers);
    const blanks = Number(values.blanks);
    const h1Blanks = Number(values["h1-blanks"]);
    const phases = (values.phases as string).split(",");
    const results: RunResult[] = [];
    for (let round = 1; round <= rounds; round++) {
      const order = round % 2 === 1 ? checkouts : [...checkouts].reverse();
      for (const c of order) {
        const service = await startService(
          c.name,
          c.dir,
          extraEnv,
          join(out, `${c.name}-r${round}.log`),
        );
        try {
          // A short warm-up: JIT and the first connections.
          await victim(service.port, 1);
          const run: RunResult = { checkout: c.name, round, phases: [] };
          for (const ph of phases) {
            if (ph === "quiet") {
              run.phases.push(await quietPhase(service, seconds));
              continue;
            }
            const attack = ATTACKS[ph];
            if (!attack)
              throw new Error(`unknown phase ${ph} (quiet, ${Object.keys(ATTACKS).join(", ")})`);
            const headers = attack.headers(blanks, h1Blanks);
            run.phases.push(
              await attackPhase(
                service,
                ph,
                { port: service.port, protocol: attack.protocol, connections, headers },
                seconds,
              ),
            );
            await sleep(500);
          }
          results.push(run);
          printRun(run);
          writeFileSync(
            join(out, "bench.json"),
            JSON.stringify(
              { commits, extraEnv, seconds, connections, blanks, h1Blanks, results },
              null,
              1,
            ),
          );
        } finally {
          await stopService(service);
        }
      }
    }
    printSummary(results);
    console.log(`\nJSON and service logs: ${out}`);
  } else {
    const rows: SweepRow[] = [];
    for (const c of checkouts) {
      const service = await startService(c.name, c.dir, extraEnv, join(out, `${c.name}-sweep.log`));
      try {
        rows.push(
          ...(await sweep(
            service,
            c.name,
            Number(values.reps),
            Number(values["stall-ms"]),
            values.only,
            Number(values.blanks),
            Number(values["h1-blanks"]),
            Number(values["timeout-ms"]),
          )),
        );
      } finally {
        await stopService(service);
      }
      writeFileSync(join(out, "sweep.json"), JSON.stringify({ commits, extraEnv, rows }, null, 1));
    }
    const stalls = rows.filter((r) => r.stall);
    console.log(`\n${rows.length} rows, ${stalls.length} stalls (p50 > ${values["stall-ms"]} ms):`);
    for (const r of stalls)
      console.log(
        `  ${r.checkout} ${r.protocol} p50 ${fmt(r.p50)} max ${fmt(r.max)} ${JSON.stringify(r.statuses)} ${r.variant}`,
      );
    const slowMax = rows.filter((r) => !r.stall && r.max > Number(values["stall-ms"]));
    if (slowMax.length) {
      console.log(
        `rows whose p50 is fine but whose max is over ${values["stall-ms"]} ms (noise or a first cold call?):`,
      );
      for (const r of slowMax)
        console.log(
          `  ${r.checkout} ${r.protocol} p50 ${fmt(r.p50)} max ${fmt(r.max)} ${r.variant}`,
        );
    }
    console.log(`\nJSON and service logs: ${out}`);
  }
}

const cleanup = () => {
  for (const c of running) {
    const under = c.pid ? descendants(c.pid) : [];
    c.kill("SIGKILL");
    for (const p of under) {
      try {
        process.kill(p, "SIGKILL");
      } catch {}
    }
  }
};
process.stdout.on("error", () => {
  cleanup(); // stdout closed (a pipe into head): stop what we started
  process.exit(1);
});
process.on("uncaughtException", (error) => {
  console.error(error);
  cleanup();
  process.exit(1);
});
process.on("SIGINT", () => {
  cleanup();
  process.exit(130);
});
process.on("SIGTERM", () => {
  cleanup();
  process.exit(143);
});

main().catch((error) => {
  console.error(error);
  cleanup();
  process.exit(1);
});
