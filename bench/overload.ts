/**
 * `npm run bench -- --overload`: the service under open-loop overload
 * (docs/performance.md, "Overload"). Each server runs with its database on
 * one core (the service as `npm start` runs it; the tight baseline beside
 * it), the load on the other. Its capacity is measured first, closed loop
 * (wrk, 32 connections); then vegeta sends a fixed arrival rate of 1×, 2×,
 * 5× and 10× that capacity, as real clients arrive (closed-loop generators
 * wait for each answer and hide the queue), while /readyz is probed on a new
 * connection every 100 ms; then the throughput is measured again second by
 * second until it is back. gRPC the same way with ghz --rps --async; and two
 * clients, one flooding, the other at a fifth of capacity.
 *
 * Every figure is per run and side: goodput (200s per second ÷ capacity),
 * answered share (calls that got any HTTP answer), p99 of successes and of
 * refusals (429 and 503), /readyz p99 and failures, the highest RSS, and
 * the seconds until closed-loop throughput is back at 90 % of capacity.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { type GhzFiles, ghzArgs } from "./ghz";
import { percentile, rssMb } from "./measure";
import { LOAD_CORE, pinned, type Server } from "./processes";

export interface OverloadTools {
  readonly vegeta: string;
  readonly wrk: string;
  readonly ghz: string | undefined;
  readonly ghzFiles: GhzFiles | undefined;
  readonly dir: string;
}

/** One call as vegeta and wrk send it. */
export interface OverloadCall {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface OverloadOptions {
  readonly multipliers: readonly number[];
  readonly seconds: number;
  /** The flooding client's multiple of capacity, and the quiet client's share of it. */
  readonly floodMultiplier: number;
  readonly quietShare: number;
}

export interface SpikeResult {
  readonly side: string;
  readonly protocol: "http" | "grpc";
  readonly multiplier: number;
  readonly capacity: number;
  readonly offeredPerS: number;
  readonly calls: number;
  readonly goodput: number;
  readonly answered: number;
  readonly unanswered: number;
  readonly okP50Ms: number;
  readonly okP99Ms: number;
  readonly refused: number;
  readonly refusedP99Ms: number;
  readonly refusedWithoutRetryAfter: number;
  readonly otherErrors: number;
  readonly probes: number;
  readonly probeFailures: number;
  readonly probeP99Ms: number;
  readonly rssMaxMb: number;
  /** Seconds until closed-loop throughput was back at 90 % of capacity; NaN: not within 10 s. */
  readonly recoveryS: number;
}

interface Call {
  readonly code: number;
  readonly latencyMs: number;
  readonly retryAfter: boolean;
}

const PROBE_EVERY_MS = 100;
const PROBE_TIMEOUT_MS = 5_000;
const RECOVERY_SLICES = 10;
/** vegeta's client timeout: a call without an answer by then counts as unanswered. */
const CLIENT_TIMEOUT_S = 12;

/** Runs a child pinned to the load core; resolves with its stdout when it exits 0. */
function run(argv: readonly string[], input?: string): Promise<string> {
  const [command, ...args] = pinned(LOAD_CORE, argv);
  const child: ChildProcess = spawn(command ?? argv[0] ?? "", args, {
    stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
  });
  if (input !== undefined) child.stdin?.end(input);
  let out = "";
  let err = "";
  child.stdout?.on("data", (c: Buffer) => {
    out += c.toString("utf8");
  });
  child.stderr?.on("data", (c: Buffer) => {
    err += c.toString("utf8");
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${argv[0]} failed (${code}): ${err}`)),
    );
  });
}

/** wrk's Lua script of a call (GET with headers); `done` prints requests per second and non-2xx. */
function wrkScript(dir: string, name: string, call: OverloadCall): string {
  const lines = ['wrk.method = "GET"'];
  for (const [header, value] of Object.entries(call.headers)) {
    lines.push(`wrk.headers[${JSON.stringify(header)}] = ${JSON.stringify(value)}`);
  }
  lines.push(
    "function done(summary, latency, requests)",
    '  io.write(string.format(\'{"rps":%.1f,"bad":%d}\\n\', summary.requests / (summary.duration / 1e6), summary.errors.status + summary.errors.connect + summary.errors.timeout))',
    "end",
  );
  const file = join(dir, `${name}.lua`);
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

/** Closed-loop requests per second: wrk, one thread, 32 connections. */
async function closedLoop(
  tools: OverloadTools,
  script: string,
  url: string,
  seconds: number,
): Promise<{ rps: number; bad: number }> {
  const out = await run([tools.wrk, "-t1", "-c32", `-d${seconds}s`, `--script=${script}`, url]);
  const line = out.split("\n").find((l) => l.startsWith("{"));
  return JSON.parse(line ?? "{}") as { rps: number; bad: number };
}

/** vegeta's targets file for a call at `base`. */
function targets(tools: OverloadTools, name: string, base: string, call: OverloadCall): string {
  const lines = [`GET ${base}${call.path}`];
  for (const [header, value] of Object.entries(call.headers)) lines.push(`${header}: ${value}`);
  const file = join(tools.dir, `${name}.targets`);
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

/** A fixed arrival rate for `seconds`; every result, read back with vegeta encode. */
async function attack(
  tools: OverloadTools,
  targetsFile: string,
  rate: number,
  seconds: number,
  name: string,
): Promise<Call[]> {
  const output = join(tools.dir, `${name}.bin`);
  await run([
    tools.vegeta,
    "attack",
    `-rate=${Math.max(1, Math.round(rate))}/s`,
    `-duration=${seconds}s`,
    `-timeout=${CLIENT_TIMEOUT_S}s`,
    "-max-workers=4000",
    `-targets=${targetsFile}`,
    `-output=${output}`,
  ]);
  const json = await run([tools.vegeta, "encode", "--to", "json", output]);
  const calls: Call[] = [];
  for (const line of json.split("\n")) {
    if (!line) continue;
    const r = JSON.parse(line) as {
      code: number;
      latency: number;
      headers?: Record<string, string[]>;
    };
    const headers = r.headers ?? {};
    calls.push({
      code: r.code,
      latencyMs: r.latency / 1e6,
      retryAfter: Object.keys(headers).some((h) => h.toLowerCase() === "retry-after"),
    });
  }
  return calls;
}

/** /readyz on a new connection every 100 ms (as an orchestrator probes) until `stop`. */
function probeHealth(url: string): { stop(): Promise<{ ms: number[]; failures: number }> } {
  const ms: number[] = [];
  let failures = 0;
  let stopped = false;
  const once = () =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      const req = http.get(`${url}/readyz`, { agent: false }, (res) => {
        res.resume();
        res.on("end", () => {
          ms.push(performance.now() - started);
          if (res.statusCode !== 200) failures++;
          resolve();
        });
      });
      req.setTimeout(PROBE_TIMEOUT_MS, () => req.destroy(new Error("timeout")));
      req.on("error", () => {
        ms.push(performance.now() - started);
        failures++;
        resolve();
      });
    });
  const loop = (async () => {
    while (!stopped) {
      const next = performance.now() + PROBE_EVERY_MS;
      void once();
      await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      // Probes still out finish within their timeout.
      await new Promise((r) => setTimeout(r, 200));
      return { ms, failures };
    },
  };
}

/** The highest RSS of `pid`, sampled every 200 ms until `stop`. */
function watchRss(pid: number): { stop(): number } {
  let max = rssMb(pid);
  const timer = setInterval(() => {
    const now = rssMb(pid);
    if (now > max) max = now;
  }, 200);
  return {
    stop() {
      clearInterval(timer);
      return max;
    },
  };
}

/** Seconds until one second of closed-loop load reaches 90 % of capacity (NaN: not within 10). */
async function recovery(
  tools: OverloadTools,
  script: string,
  url: string,
  capacity: number,
): Promise<number> {
  for (let s = 1; s <= RECOVERY_SLICES; s++) {
    const { rps } = await closedLoop(tools, script, url, 1);
    if (rps >= 0.9 * capacity) return s;
  }
  return Number.NaN;
}

function summarize(
  side: string,
  protocol: "http" | "grpc",
  multiplier: number,
  capacity: number,
  seconds: number,
  calls: readonly Call[],
  okCode: (code: number) => boolean,
  refusedCode: (code: number) => boolean,
  probes: { ms: number[]; failures: number },
  rssMaxMb: number,
  recoveryS: number,
): SpikeResult {
  const ok = calls
    .filter((c) => okCode(c.code))
    .map((c) => c.latencyMs)
    .sort((a, b) => a - b);
  const refusedCalls = calls.filter((c) => refusedCode(c.code));
  const refused = refusedCalls.map((c) => c.latencyMs).sort((a, b) => a - b);
  const unanswered = calls.filter((c) => c.code === 0).length;
  const probeMs = [...probes.ms].sort((a, b) => a - b);
  return {
    side,
    protocol,
    multiplier,
    capacity,
    offeredPerS: capacity * multiplier,
    calls: calls.length,
    goodput: ok.length / seconds / capacity,
    answered: (calls.length - unanswered) / Math.max(1, calls.length),
    unanswered,
    okP50Ms: percentile(ok, 0.5),
    okP99Ms: percentile(ok, 0.99),
    refused: refused.length,
    refusedP99Ms: percentile(refused, 0.99),
    refusedWithoutRetryAfter: refusedCalls.filter((c) => !c.retryAfter).length,
    otherErrors: calls.length - ok.length - refused.length - unanswered,
    probes: probeMs.length,
    probeFailures: probes.failures,
    probeP99Ms: percentile(probeMs, 0.99),
    rssMaxMb,
    recoveryS,
  };
}

/**
 * The spikes of one server at each multiplier of its capacity: a pause,
 * the load fired (`fire`), health probed and RSS watched meanwhile, then the
 * seconds until throughput is back (`recovered`).
 */
async function spikes(
  side: string,
  protocol: "http" | "grpc",
  server: Server,
  capacity: number,
  options: OverloadOptions,
  load: {
    fire(rate: number, label: string): Promise<Call[]>;
    recovered(): Promise<number>;
  },
): Promise<SpikeResult[]> {
  const results: SpikeResult[] = [];
  for (const m of options.multipliers) {
    await new Promise((r) => setTimeout(r, 2_000));
    const probes = probeHealth(server.url);
    const rss = watchRss(server.pid);
    const calls = await load.fire(capacity * m, `${side}-${m}x`);
    const probed = await probes.stop();
    const rssMax = rss.stop();
    const back = await load.recovered();
    const result = summarize(
      side,
      protocol,
      m,
      capacity,
      options.seconds,
      calls,
      (c) => c === 200,
      (c) => c === 429 || c === 503,
      probed,
      rssMax,
      back,
    );
    results.push(result);
    printSpike(result);
  }
  return results;
}

/** The HTTP spikes of one server: capacity, then each multiplier. */
export async function httpSpikes(
  tools: OverloadTools,
  side: string,
  server: Server,
  call: OverloadCall,
  options: OverloadOptions,
): Promise<SpikeResult[]> {
  const script = wrkScript(tools.dir, `${side}-capacity`, call);
  const url = `${server.url}${call.path}`;
  await closedLoop(tools, script, url, 5);
  const { rps: capacity, bad } = await closedLoop(tools, script, url, 10);
  if (bad > 0) console.log(`  ${side}: ${bad} non-2xx answers while measuring capacity`);
  console.log(`  ${side}: capacity ${capacity.toFixed(0)} calls/s (wrk, 32 connections)`);
  const file = targets(tools, side, server.url, call);
  return spikes(side, "http", server, capacity, options, {
    fire: (rate, label) => attack(tools, file, rate, options.seconds, label),
    recovered: () => recovery(tools, script, url, capacity),
  });
}

export interface FairnessResult {
  readonly side: string;
  readonly capacity: number;
  /** The quiet client alone: its p99 and success share. */
  readonly aloneP99Ms: number;
  readonly aloneOk: number;
  /** Beside the flood. */
  readonly quietOk: number;
  readonly quietP99Ms: number;
  readonly quietRefusedByCode: Readonly<Record<string, number>>;
  readonly floodOk: number;
  readonly floodByCode: Readonly<Record<string, number>>;
}

/** Two clients: the quiet one alone, then beside one that floods at `floodMultiplier` × capacity. */
export async function fairness(
  tools: OverloadTools,
  side: string,
  server: Server,
  quiet: OverloadCall,
  flood: OverloadCall,
  capacity: number,
  options: OverloadOptions,
): Promise<FairnessResult> {
  const quietFile = targets(tools, `${side}-quiet`, server.url, quiet);
  const floodFile = targets(tools, `${side}-flood`, server.url, flood);
  const quietRate = capacity * options.quietShare;
  const alone = await attack(tools, quietFile, quietRate, options.seconds, `${side}-alone`);
  await new Promise((r) => setTimeout(r, 2_000));
  const [beside, flooding] = await Promise.all([
    attack(tools, quietFile, quietRate, options.seconds, `${side}-beside`),
    attack(
      tools,
      floodFile,
      capacity * options.floodMultiplier,
      options.seconds,
      `${side}-flooding`,
    ),
  ]);
  const okShare = (calls: readonly Call[]) =>
    calls.filter((c) => c.code === 200).length / Math.max(1, calls.length);
  const p99 = (calls: readonly Call[]) =>
    percentile(
      calls
        .filter((c) => c.code === 200)
        .map((c) => c.latencyMs)
        .sort((a, b) => a - b),
      0.99,
    );
  const byCode = (calls: readonly Call[]) => {
    const out: Record<string, number> = {};
    for (const c of calls) if (c.code !== 200) out[c.code] = (out[c.code] ?? 0) + 1;
    return out;
  };
  const result: FairnessResult = {
    side,
    capacity,
    aloneP99Ms: p99(alone),
    aloneOk: okShare(alone),
    quietOk: okShare(beside),
    quietP99Ms: p99(beside),
    quietRefusedByCode: byCode(beside),
    floodOk: okShare(flooding),
    floodByCode: byCode(flooding),
  };
  console.log(
    `  ${side}: quiet client alone ${(result.aloneOk * 100).toFixed(1)} % ok, p99 ${result.aloneP99Ms.toFixed(0)} ms; beside a ${options.floodMultiplier}× flood ${(result.quietOk * 100).toFixed(1)} % ok, p99 ${result.quietP99Ms.toFixed(0)} ms, other ${JSON.stringify(result.quietRefusedByCode)}; the flood ${(result.floodOk * 100).toFixed(1)} % ok, other ${JSON.stringify(result.floodByCode)}`,
  );
  return result;
}

interface GhzDetail {
  latency: number;
  status: string;
}

/** gRPC: capacity with ghz closed loop (32 calls in flight), then ghz --rps --async at each multiple. */
export async function grpcSpikes(
  tools: OverloadTools,
  side: string,
  server: Server,
  method: string,
  authorization: string,
  options: OverloadOptions,
): Promise<SpikeResult[]> {
  const { ghz, ghzFiles } = tools;
  if (!ghz || !ghzFiles) return [];
  const target = server.url.replace(/^http:\/\//, "");
  const closed = async (seconds: number) => {
    const out = await run(ghzArgs(ghz, ghzFiles, target, method, authorization, 32, seconds));
    const report = JSON.parse(out) as { count: number; total: number };
    return report.count / (report.total / 1e9);
  };
  await closed(5);
  const capacity = await closed(10);
  console.log(`  ${side}: gRPC capacity ${capacity.toFixed(0)} calls/s (ghz, 32 in flight)`);
  return spikes(side, "grpc", server, capacity, options, {
    async fire(rate) {
      const args = ghzArgs(ghz, ghzFiles, target, method, authorization, 400, options.seconds)
        .filter((a) => !a.startsWith("--connections=") && !a.startsWith("--duration-stop"))
        .concat([
          `--rps=${Math.round(rate)}`,
          "--async",
          "--connections=16",
          `--timeout=${CLIENT_TIMEOUT_S}s`,
        ]);
      const report = JSON.parse(await run(args)) as { details?: GhzDetail[] };
      return (report.details ?? []).map((d) => ({
        code: GRPC_CODES[d.status] ?? -1,
        latencyMs: d.latency / 1e6,
        retryAfter: true,
      }));
    },
    async recovered() {
      for (let s = 1; s <= RECOVERY_SLICES; s++) {
        if ((await closed(1)) >= 0.9 * capacity) return s;
      }
      return Number.NaN;
    },
  });
}

/** ghz's status names as the HTTP-like codes the summary counts (OK 200, refusals 503/429, none 0). */
const GRPC_CODES: Readonly<Record<string, number>> = {
  OK: 200,
  Unavailable: 503,
  ResourceExhausted: 429,
  DeadlineExceeded: 0,
  Canceled: 0,
};

export function printSpike(r: SpikeResult): void {
  const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(0).padStart(6) : "     -");
  console.log(
    `  ${r.side.padEnd(8)} ${r.protocol.padEnd(4)} ${`${r.multiplier}x`.padStart(4)} offered ${r.offeredPerS.toFixed(0).padStart(6)}/s  goodput ${r.goodput.toFixed(2)}x  answered ${(r.answered * 100).toFixed(1).padStart(5)} %  ok p50/p99 ${ms(r.okP50Ms)}/${ms(r.okP99Ms)} ms  refused ${String(r.refused).padStart(6)} p99 ${ms(r.refusedP99Ms)} ms (no Retry-After: ${r.refusedWithoutRetryAfter})  other ${r.otherErrors}  readyz ${r.probes - r.probeFailures}/${r.probes} p99 ${ms(r.probeP99Ms)} ms  RSS ${r.rssMaxMb.toFixed(0)} MB  back in ${Number.isFinite(r.recoveryS) ? `${r.recoveryS} s` : "> 10 s"}`,
  );
}

/** The goals of docs/performance.md "Overload", checked against one run's HTTP results. */
export function overloadGoals(results: readonly SpikeResult[]): string[] {
  const lines: string[] = [];
  const check = (ok: boolean, text: string) => lines.push(`${ok ? "met   " : "MISSED"} ${text}`);
  for (const r of results.filter((x) => x.side === "service")) {
    const refusalBound = r.multiplier >= 5 ? 250 : 100;
    const goodputBound = r.multiplier >= 5 ? 0.8 : 0.9;
    const tag = `${r.protocol} ${r.multiplier}x`;
    if (r.multiplier < 2) continue;
    check(r.unanswered === 0, `${tag}: no call unanswered (${r.unanswered})`);
    if (r.multiplier <= 5) {
      check(
        r.goodput >= goodputBound,
        `${tag}: goodput ≥ ${goodputBound}× (${r.goodput.toFixed(2)}×)`,
      );
      check(r.okP99Ms <= 1000, `${tag}: p99 of successes ≤ 1 s (${r.okP99Ms.toFixed(0)} ms)`);
      check(
        r.refusedWithoutRetryAfter === 0 && !(r.refusedP99Ms > refusalBound),
        `${tag}: refusals carry Retry-After (${r.refusedWithoutRetryAfter} without) with p99 ≤ ${refusalBound} ms (${r.refusedP99Ms.toFixed(0)} ms)`,
      );
      if (r.protocol === "http") {
        check(
          r.probeFailures === 0 && r.probeP99Ms <= 250,
          `${tag}: /readyz 200 throughout (${r.probeFailures} failed) with p99 ≤ 250 ms (${r.probeP99Ms.toFixed(0)} ms)`,
        );
      }
    }
    check(r.recoveryS <= 10, `${tag}: throughput back to 0.9× within 10 s (${r.recoveryS} s)`);
    check(r.rssMaxMb < 300, `${tag}: RSS < 300 MB (${r.rssMaxMb.toFixed(0)} MB)`);
  }
  return lines;
}

/** Reads a results file back (for docs and tests of the summary). */
export function readResults(file: string): SpikeResult[] {
  return JSON.parse(readFileSync(file, "utf8")).spikes as SpikeResult[];
}

/** A Go tool's module and version, as the binary records them (`go version -m`); else its path. */
export function goToolVersion(tool: string): string {
  try {
    const info = execFileSync("go", ["version", "-m", tool], { encoding: "utf8" });
    const mod = /^\s*mod\s+(\S+)\s+(\S+)/m.exec(info);
    return mod ? `${mod[1]} ${mod[2]}` : tool;
  } catch {
    return tool;
  }
}
