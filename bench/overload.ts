/**
 * `npm run bench -- --overload`: the service under open-loop overload
 * (docs/performance.md, "Overload"; issue 41). Each server runs with its
 * database on one core (the service as `npm start` runs it), the load on the
 * other. Per protocol — legacy GetSubscriptions as JSON over HTTP/1.1, and
 * GetCounteragentsFromGroup over gRPC:
 *
 * 1. **Capacity**, closed loop (wrk or ghz, 32 in flight), and with it c: the
 *    core's CPU per call at capacity (the server's and its database's CPU
 *    seconds ÷ calls).
 * 2. For each multiple m: **r**, a bare refuser's CPU per answer (bare.ts: a
 *    `node:http` server answering 503, or an h2c server answering
 *    trailers-only UNAVAILABLE, on the same core) under the same open-loop
 *    rate m × capacity; then the **spike** itself, vegeta (or ghz --rps
 *    --async) at m × capacity, /readyz probed on a new connection every
 *    100 ms and RSS sampled meanwhile, the core's CPU counted; then the
 *    seconds until one second of closed-loop load is back at 0.9 × capacity.
 * 3. **Two clients**: the bench's API client at 0.2 × capacity alone, then
 *    beside a second API client flooding at 5× and at 10×.
 *
 * The bound is what a core that refuses at the bare refuser's cost and
 * serves the rest at c could serve: (1 − m·r/c) ÷ (1 − r/c) of capacity.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { type GhzFiles, ghzArgs } from "./ghz";
import { coreMs, cpuMs, percentile, rssMb, tcpCounters } from "./measure";
import { LOAD_CORE, pinned, SERVER_CORE, type Server } from "./processes";

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

export type Protocol = "http" | "grpc";

export interface OverloadOptions {
  /** Spikes at these multiples of capacity. */
  readonly multipliers: readonly number[];
  /** Seconds of each spike, each bare flood and each two-client run. */
  readonly seconds: number;
  /** Closed-loop warm-up, then the measured capacity run, in seconds. */
  readonly capacityWarmupSeconds: number;
  readonly capacitySeconds: number;
  /** Seconds of each bare refuser's flood (r). */
  readonly bareSeconds: number;
  /** The flooding client's multiples of capacity, and the quiet client's share of capacity. */
  readonly floodMultipliers: readonly number[];
  readonly quietShare: number;
  /**
   * vegeta's -max-workers: the most calls it keeps in flight. Once every
   * worker waits for an answer it sends no more, and the open loop becomes a
   * closed one (the spike's "sent" rate falls below the offered one).
   */
  readonly maxWorkers: number;
}

/** A server under test: its process and, when on its core, its database's. */
export interface Target {
  readonly side: string;
  readonly server: Server;
  /** The embedded database's pid; its CPU counts as the core's. Undefined on MONGODB_URI. */
  readonly dbPid: number | undefined;
}

export interface Capacity {
  /** Closed-loop calls per second (answers of any kind; non-2xx are counted apart). */
  readonly callsPerS: number;
  readonly calls: number;
  readonly notOk: number;
  /** c: the core's CPU per call (server + database), µs. */
  readonly coreUsPerCall: number;
  readonly serverUsPerCall: number;
  readonly dbUsPerCall: number;
  /** (server + database CPU) ÷ wall time while measured. */
  readonly coreBusy: number;
  /** The core's time spent on other processes, and stolen by the hypervisor, ÷ wall time. */
  readonly othersBusy: number;
  readonly steal: number;
}

export interface SpikeResult {
  readonly side: string;
  readonly protocol: Protocol;
  readonly repeat: number;
  readonly multiplier: number;
  readonly capacity: number;
  readonly offeredPerS: number;
  /** Calls the generator sent per second (below offeredPerS when it could not keep the rate). */
  readonly sentPerS: number;
  readonly calls: number;
  /** 200s per second ÷ capacity. */
  readonly goodput: number;
  /** r: the bare refuser's CPU per answer at the same rate, µs; NaN when not measured. */
  readonly bareUsPerAnswer: number;
  /** Of the bare flood: calls without an answer (the refuser could not keep up), and the rate sent. */
  readonly bareUnanswered: number;
  readonly bareSentPerS: number;
  /** c: the core's CPU per call at capacity, µs. */
  readonly coreUsPerCall: number;
  /** (1 − m·r/c) ÷ (1 − r/c). */
  readonly bound: number;
  readonly goodputOverBound: number;
  readonly answered: number;
  readonly unanswered: number;
  readonly ok: number;
  readonly okP50Ms: number;
  readonly okP99Ms: number;
  readonly refused: number;
  readonly refusedP99Ms: number;
  readonly refusedWithoutRetryAfter: number;
  readonly otherErrors: number;
  /** The other answers by code or gRPC status. */
  readonly otherByCode: Readonly<Record<string, number>>;
  /** (server + database CPU) ÷ wall time during the spike. */
  readonly coreBusy: number;
  /** The core's time spent on other processes, and stolen by the hypervisor, ÷ wall time. */
  readonly othersBusy: number;
  readonly steal: number;
  /**
   * The machine's SYNs dropped at a full listen queue, and SYNs sent again,
   * during the spike (the kernel's counters; the bench alone makes them).
   */
  readonly listenOverflows: number;
  readonly synRetransmits: number;
  /** The server's warn and error log lines during the spike, and the first error lines. */
  readonly logWarnings: number;
  readonly logErrors: number;
  readonly firstLogErrors: readonly string[];
  /** ≈ the core's CPU per refusal: (CPU − 200s × c) ÷ refusals, µs. */
  readonly usPerRefusal: number;
  readonly probes: number;
  readonly probeFailures: number;
  readonly probeP99Ms: number;
  readonly rssMaxMb: number;
  /** Seconds until closed-loop throughput was back at 90 % of capacity; NaN: not within 10 s. */
  readonly recoveryS: number;
}

export interface ClientResult {
  readonly calls: number;
  /** Share of calls answered 200 (gRPC OK). */
  readonly okShare: number;
  readonly okP99Ms: number;
  /** p99 of every answer, refusals included. */
  readonly p99Ms: number;
  readonly unanswered: number;
  /** Answers other than 200, by code (gRPC: 503 UNAVAILABLE, 429 RESOURCE_EXHAUSTED, 0 none). */
  readonly byCode: Readonly<Record<string, number>>;
}

export interface TwoClientResult {
  readonly side: string;
  readonly protocol: Protocol;
  readonly repeat: number;
  readonly capacity: number;
  readonly quietPerS: number;
  readonly alone: ClientResult;
  readonly beside: readonly {
    readonly floodMultiplier: number;
    readonly quiet: ClientResult;
    readonly flood: ClientResult;
  }[];
}

export interface ProtocolRun {
  readonly side: string;
  readonly protocol: Protocol;
  readonly repeat: number;
  readonly capacity: Capacity;
  readonly spikes: readonly SpikeResult[];
  readonly twoClients: TwoClientResult | undefined;
}

interface Call {
  /** HTTP status; gRPC as 200 (OK), 503 (UNAVAILABLE), 429 (RESOURCE_EXHAUSTED); 0: no answer; -1: another gRPC status. */
  readonly code: number;
  /** The gRPC status's name, when code is -1. */
  readonly status?: string;
  readonly latencyMs: number;
  readonly retryAfter: boolean;
}

const PROBE_EVERY_MS = 100;
const PROBE_TIMEOUT_MS = 5_000;
const RECOVERY_SLICES = 10;
const PAUSE_MS = 2_000;
const CLOSED_CONNECTIONS = 32;
/** The client timeout: a call without an answer by then counts as unanswered. */
const CLIENT_TIMEOUT_S = 12;

// ---------------------------------------------------------------- children

/** Runs a child pinned to the load core; resolves with its stdout when it exits 0. */
function run(argv: readonly string[]): Promise<string> {
  const lines: string[] = [];
  return runLines(argv, (line) => lines.push(line)).then(() => lines.join("\n"));
}

/** Runs a child pinned to the load core, handing each line of its stdout to `onLine`. */
function runLines(argv: readonly string[], onLine: (line: string) => void): Promise<void> {
  const [command, ...args] = pinned(LOAD_CORE, argv);
  const child: ChildProcess = spawn(command ?? argv[0] ?? "", args, {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr?.on("data", (c: Buffer) => {
    err = (err + c.toString("utf8")).slice(-4000);
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  lines.on("line", onLine);
  const closed = new Promise<void>((resolve) => lines.once("close", resolve));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => {
      void closed.then(() =>
        code === 0 ? resolve() : reject(new Error(`${argv[0]} failed (${code}): ${err}`)),
      );
    });
  });
}

/** CPU time of some processes over a window, their core's, and the window's wall time. */
class CpuMeter {
  private startCpu: number[] = [];
  private startWall = 0;
  private startCore = { busy: 0, steal: 0 };
  private endCpu: number[] = [];
  private endWall = 0;
  private endCore = { busy: 0, steal: 0 };

  constructor(private readonly pids: readonly (number | undefined)[]) {}

  private read(): number[] {
    return this.pids.map((pid) => {
      if (pid === undefined) return 0;
      try {
        return cpuMs(pid);
      } catch {
        return Number.NaN; // gone (Ctrl-C stops every child mid-run)
      }
    });
  }

  start(): void {
    this.startCpu = this.read();
    this.startCore = coreMs(SERVER_CORE);
    this.startWall = performance.now();
  }

  stop(): void {
    this.endCpu = this.read();
    this.endCore = coreMs(SERVER_CORE);
    this.endWall = performance.now();
  }

  /**
   * The share of the window the servers' core ran something other than
   * these processes (another tenant of the machine), and the share the
   * hypervisor stole.
   */
  get others(): { busy: number; steal: number } {
    const ours = this.ms.reduce((a, b) => a + b, 0);
    return {
      busy: Math.max(0, this.endCore.busy - this.startCore.busy - ours) / this.wallMs,
      steal: (this.endCore.steal - this.startCore.steal) / this.wallMs,
    };
  }

  /** Each process's CPU over the window, ms. */
  get ms(): number[] {
    return this.endCpu.map((end, i) => end - (this.startCpu[i] ?? Number.NaN));
  }

  get wallMs(): number {
    return this.endWall - this.startWall;
  }
}

// ---------------------------------------------------------------- load, per protocol

/** How one protocol's load is driven against a server. */
interface Driver {
  readonly protocol: Protocol;
  /** Closed loop, 32 calls in flight: answers, of which not OK, and the run's seconds. */
  closed(server: Server, seconds: number): Promise<{ calls: number; notOk: number; s: number }>;
  /**
   * A fixed arrival rate for `seconds`, from the bench's client or the
   * flooding one; `meter` brackets the load itself. Resolves when the load
   * has ended; its results are read afterwards, when asked for (after the
   * recovery, which starts at once).
   */
  open(
    server: Server,
    rate: number,
    seconds: number,
    label: string,
    client: "quiet" | "flood",
    meter?: CpuMeter,
  ): Promise<Attack>;
}

/** A load that has ended: its calls, read when asked for. */
interface Attack {
  calls(): Promise<Call[]>;
}

/** Runs a load and reads its calls. */
async function callsOf(attack: Promise<Attack>): Promise<Call[]> {
  return (await attack).calls();
}

/** HTTP/1.1: wrk closed loop, vegeta open loop. */
export function httpDriver(
  tools: OverloadTools,
  quiet: OverloadCall,
  flood: OverloadCall,
  maxWorkers: number,
): Driver {
  const script = wrkScript(tools.dir, "overload", quiet);
  return {
    protocol: "http",
    async closed(server, seconds) {
      const out = await run([
        tools.wrk,
        "-t1",
        `-c${CLOSED_CONNECTIONS}`,
        `-d${seconds}s`,
        `--script=${script}`,
        `${server.url}${quiet.path}`,
      ]);
      const line = out.split("\n").find((l) => l.startsWith("{"));
      const r = JSON.parse(line ?? "{}") as { requests: number; bad: number; s: number };
      return { calls: r.requests, notOk: r.bad, s: r.s };
    },
    async open(server, rate, seconds, label, client, meter) {
      const file = targets(tools.dir, label, server.url, client === "quiet" ? quiet : flood);
      const output = join(tools.dir, `${label}.bin`);
      meter?.start();
      await run([
        tools.vegeta,
        "attack",
        `-rate=${Math.max(1, Math.round(rate))}/s`,
        `-duration=${seconds}s`,
        `-timeout=${CLIENT_TIMEOUT_S}s`,
        `-max-workers=${maxWorkers}`,
        `-targets=${file}`,
        `-output=${output}`,
      ]);
      meter?.stop();
      return {
        async calls() {
          const calls: Call[] = [];
          await runLines([tools.vegeta, "encode", "--to", "json", output], (line) => {
            if (!line) return;
            const r = JSON.parse(line) as {
              code: number;
              latency: number;
              headers?: Record<string, string[]>;
            };
            calls.push({
              code: r.code,
              latencyMs: r.latency / 1e6,
              retryAfter: Object.keys(r.headers ?? {}).some(
                (h) => h.toLowerCase() === "retry-after",
              ),
            });
          });
          return calls;
        },
      };
    },
  };
}

/** gRPC: ghz, closed loop with 32 in flight, open loop with --rps --async. */
export function grpcDriver(
  tools: OverloadTools,
  method: string,
  quiet: string,
  flood: string,
): Driver | undefined {
  const { ghz, ghzFiles } = tools;
  if (!ghz || !ghzFiles) return undefined;
  const target = (server: Server) => new URL(server.url).host;
  return {
    protocol: "grpc",
    async closed(server, seconds) {
      const out = await run(
        ghzArgs(ghz, ghzFiles, target(server), method, quiet, CLOSED_CONNECTIONS, seconds),
      );
      const report = JSON.parse(out) as {
        count: number;
        total: number;
        statusCodeDistribution?: Record<string, number>;
      };
      return {
        calls: report.count,
        notOk: report.count - (report.statusCodeDistribution?.OK ?? 0),
        s: report.total / 1e9,
      };
    },
    async open(server, rate, seconds, _label, client, meter) {
      const args = ghzArgs(
        ghz,
        ghzFiles,
        target(server),
        method,
        client === "quiet" ? quiet : flood,
        400,
        seconds,
      )
        .filter((a) => !a.startsWith("--connections="))
        .concat([
          `--rps=${Math.max(1, Math.round(rate))}`,
          "--async",
          "--connections=16",
          `--timeout=${CLIENT_TIMEOUT_S}s`,
        ]);
      meter?.start();
      const out = await run(args);
      meter?.stop();
      return {
        async calls() {
          const report = JSON.parse(out) as { details?: GhzDetail[] };
          return (report.details ?? []).map((d) => {
            const code = grpcCode(d);
            return {
              code,
              ...(code === -1 ? { status: d.status } : {}),
              latencyMs: d.latency / 1e6,
              retryAfter: true,
            };
          });
        },
      };
    },
  };
}

interface GhzDetail {
  latency: number;
  status: string;
  error?: string;
}

/**
 * ghz's status names as the HTTP-like codes the summary counts (OK 200,
 * refusals 503/429, none 0: the 12 s client deadline passed, or the client
 * gave up).
 */
const GRPC_CODES: Readonly<Record<string, number>> = {
  OK: 200,
  Unavailable: 503,
  ResourceExhausted: 429,
  DeadlineExceeded: 0,
  Canceled: 0,
};

/** UNAVAILABLE that the client made itself (a connection that failed or closed) is no answer. */
function grpcCode(d: GhzDetail): number {
  if (d.status === "Unavailable" && /transport|connection|EOF|closing/i.test(d.error ?? "")) {
    return 0;
  }
  return GRPC_CODES[d.status] ?? -1;
}

/** wrk's Lua script of a call (GET with headers); `done` prints answers, non-2xx answers and seconds. */
function wrkScript(dir: string, name: string, call: OverloadCall): string {
  const lines = ['wrk.method = "GET"'];
  for (const [header, value] of Object.entries(call.headers)) {
    lines.push(`wrk.headers[${JSON.stringify(header)}] = ${JSON.stringify(value)}`);
  }
  lines.push(
    "function done(summary, latency, requests)",
    '  io.write(string.format(\'{"requests":%d,"bad":%d,"s":%.6f}\\n\', summary.requests, summary.errors.status, summary.duration / 1e6))',
    "end",
  );
  const file = join(dir, `${name}.lua`);
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

/** vegeta's targets file for a call at `base`. */
function targets(dir: string, name: string, base: string, call: OverloadCall): string {
  const lines = [`GET ${base}${call.path}`];
  for (const [header, value] of Object.entries(call.headers)) lines.push(`${header}: ${value}`);
  const file = join(dir, `${name}.targets`);
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

// ---------------------------------------------------------------- watching

/** /readyz on a new connection every 100 ms (as an orchestrator probes) until `stop`. */
function probeHealth(url: string): { stop(): Promise<{ ms: number[]; failures: number }> } {
  const ms: number[] = [];
  let failures = 0;
  let stopped = false;
  const out = new Set<Promise<void>>();
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
      const probe = once();
      out.add(probe);
      void probe.then(() => out.delete(probe));
      await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      // Probes still out finish within their timeout.
      await Promise.all(out);
      return { ms, failures };
    },
  };
}

/** The highest RSS of `pid`, sampled every 200 ms until `stop`. */
function watchRss(pid: number): { stop(): number } {
  let max = rssMb(pid);
  const timer = setInterval(() => {
    try {
      max = Math.max(max, rssMb(pid));
    } catch {
      // gone: its largest size so far stands
    }
  }, 200);
  return {
    stop() {
      clearInterval(timer);
      return max;
    },
  };
}

const pause = (ms = PAUSE_MS) => new Promise((r) => setTimeout(r, ms));

const sorted = (values: readonly number[]) => [...values].sort((a, b) => a - b);

// ---------------------------------------------------------------- one protocol, one server

/** c: closed loop for the warm-up, then measured with the core's CPU. */
async function measureCapacity(
  driver: Driver,
  target: Target,
  options: OverloadOptions,
): Promise<Capacity> {
  if (options.capacityWarmupSeconds > 0) {
    await driver.closed(target.server, options.capacityWarmupSeconds);
  }
  const meter = new CpuMeter([target.server.pid, target.dbPid]);
  meter.start();
  const { calls, notOk, s } = await driver.closed(target.server, options.capacitySeconds);
  meter.stop();
  const [serverMs = Number.NaN, dbMs = Number.NaN] = meter.ms;
  const n = Math.max(1, calls);
  return {
    callsPerS: calls / s,
    calls,
    notOk,
    coreUsPerCall: ((serverMs + dbMs) * 1000) / n,
    serverUsPerCall: (serverMs * 1000) / n,
    dbUsPerCall: (dbMs * 1000) / n,
    coreBusy: (serverMs + dbMs) / meter.wallMs,
    othersBusy: meter.others.busy,
    steal: meter.others.steal,
  };
}

/** r at one rate: the bare refuser's CPU per answer under the same open-loop flood. */
async function bareCost(
  driver: Driver,
  bare: Server,
  rate: number,
  seconds: number,
  label: string,
): Promise<BareCost> {
  const meter = new CpuMeter([bare.pid]);
  const calls = await callsOf(driver.open(bare, rate, seconds, label, "quiet", meter));
  const answered = calls.filter((c) => c.code !== 0).length;
  const [ms = Number.NaN] = meter.ms;
  return {
    usPerAnswer: (ms * 1000) / Math.max(1, answered),
    unanswered: calls.length - answered,
    sentPerS: calls.length / seconds,
  };
}

interface BareCost {
  readonly usPerAnswer: number;
  readonly unanswered: number;
  readonly sentPerS: number;
}

export function bound(multiplier: number, r: number, c: number): number {
  return (1 - (multiplier * r) / c) / (1 - r / c);
}

/** Calls counted by code ("0": no answer; a gRPC status of its own by name). */
function codesOf(calls: readonly Call[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of calls) {
    const key = c.code === -1 ? (c.status ?? "-1") : String(c.code);
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

function clientResult(calls: readonly Call[]): ClientResult {
  const ok = sorted(calls.filter((c) => c.code === 200).map((c) => c.latencyMs));
  const answered = sorted(calls.filter((c) => c.code !== 0).map((c) => c.latencyMs));
  const byCode = codesOf(calls.filter((c) => c.code !== 200));
  return {
    calls: calls.length,
    okShare: ok.length / Math.max(1, calls.length),
    okP99Ms: percentile(ok, 0.99),
    p99Ms: percentile(answered, 0.99),
    unanswered: calls.filter((c) => c.code === 0).length,
    byCode,
  };
}

/**
 * One protocol against one server: capacity and c, then per multiple r, the
 * spike and the recovery, then the two clients.
 */
export async function protocolRun(
  driver: Driver,
  target: Target,
  bare: Server | undefined,
  options: OverloadOptions,
  repeat: number,
): Promise<ProtocolRun> {
  const { side, server } = target;
  const protocol = driver.protocol;
  const capacity = await measureCapacity(driver, target, options);
  const C = capacity.callsPerS;
  console.log(
    `  ${side} ${protocol}: capacity ${fmt(C, 0)} calls/s (closed loop, ${CLOSED_CONNECTIONS} in flight${capacity.notOk > 0 ? `; ${capacity.notOk} not OK` : ""}); c = ${fmt(capacity.coreUsPerCall, 0)} µs of the core per call (server ${fmt(capacity.serverUsPerCall, 0)} + database ${fmt(capacity.dbUsPerCall, 0)}); core ${SERVER_CORE}: ours ${fmt(capacity.coreBusy * 100, 0)} %, others ${fmt(capacity.othersBusy * 100, 0)} %, stolen ${fmt(capacity.steal * 100, 0)} %`,
  );
  if (capacity.othersBusy > 0.05) {
    console.log(
      `  !! other processes ran on core ${SERVER_CORE} while capacity was measured: capacity, and every figure relative to it, is understated`,
    );
  }
  const spikes: SpikeResult[] = [];
  for (const m of options.multipliers) {
    const label = `${side}-${protocol}-${repeat}-${m}x`;
    const r = bare
      ? await bareCost(driver, bare, C * m, options.bareSeconds, `${label}-bare`)
      : { usPerAnswer: Number.NaN, unanswered: 0, sentPerS: Number.NaN };
    await pause();
    const probes = probeHealth(server.url);
    const rss = watchRss(server.pid);
    const meter = new CpuMeter([server.pid, target.dbPid]);
    const tcpBefore = tcpCounters();
    const logBefore = server.logProblems();
    const attack = await driver.open(server, C * m, options.seconds, label, "quiet", meter);
    // The spike is over: what it left, then how long until throughput is back, then its calls.
    const tcpAfter = tcpCounters();
    const logAfter = server.logProblems();
    const probing = probes.stop();
    const rssMax = rss.stop();
    const back = await recovery(driver, server, C);
    const probed = await probing;
    const calls = await attack.calls();
    const [serverMs = Number.NaN, dbMs = Number.NaN] = meter.ms;
    const spike = summarizeSpike({
      side,
      protocol,
      repeat,
      multiplier: m,
      capacity,
      seconds: options.seconds,
      calls,
      probes: probed,
      rssMaxMb: rssMax,
      recoveryS: back,
      r,
      coreMs: serverMs + dbMs,
      wallMs: meter.wallMs,
      others: meter.others,
      tcp: {
        listenOverflows: tcpAfter.listenOverflows - tcpBefore.listenOverflows,
        synRetransmits: tcpAfter.synRetransmits - tcpBefore.synRetransmits,
      },
      log: {
        warnings: logAfter.warn - logBefore.warn,
        errors: logAfter.error - logBefore.error,
        firstErrors: logAfter.firstErrors.slice(logBefore.firstErrors.length),
      },
    });
    spikes.push(spike);
    printSpike(spike);
  }
  let twoClients: TwoClientResult | undefined;
  if (options.floodMultipliers.length > 0) {
    twoClients = await twoClientRun(driver, target, capacity, options, repeat);
  }
  return { side, protocol, repeat, capacity, spikes, twoClients };
}

/** Seconds until one second of closed-loop load reaches 90 % of capacity (NaN: not within 10). */
async function recovery(driver: Driver, server: Server, capacity: number): Promise<number> {
  for (let s = 1; s <= RECOVERY_SLICES; s++) {
    const { calls, notOk, s: took } = await driver.closed(server, 1);
    if ((calls - notOk) / took >= 0.9 * capacity) return s;
  }
  return Number.NaN;
}

function summarizeSpike(x: {
  side: string;
  protocol: Protocol;
  repeat: number;
  multiplier: number;
  capacity: Capacity;
  seconds: number;
  calls: readonly Call[];
  probes: { ms: number[]; failures: number };
  rssMaxMb: number;
  recoveryS: number;
  r: BareCost;
  coreMs: number;
  wallMs: number;
  others: { busy: number; steal: number };
  tcp: { listenOverflows: number; synRetransmits: number };
  log: { warnings: number; errors: number; firstErrors: readonly string[] };
}): SpikeResult {
  const { calls, capacity } = x;
  const C = capacity.callsPerS;
  const c = capacity.coreUsPerCall;
  const ok = sorted(calls.filter((k) => k.code === 200).map((k) => k.latencyMs));
  const refusedCalls = calls.filter((k) => k.code === 429 || k.code === 503);
  const refused = sorted(refusedCalls.map((k) => k.latencyMs));
  const unanswered = calls.filter((k) => k.code === 0).length;
  const probeMs = sorted(x.probes.ms);
  const goodput = ok.length / x.seconds / C;
  const b = bound(x.multiplier, x.r.usPerAnswer, c);
  return {
    side: x.side,
    protocol: x.protocol,
    repeat: x.repeat,
    multiplier: x.multiplier,
    capacity: C,
    offeredPerS: C * x.multiplier,
    sentPerS: calls.length / x.seconds,
    calls: calls.length,
    goodput,
    bareUsPerAnswer: x.r.usPerAnswer,
    bareUnanswered: x.r.unanswered,
    bareSentPerS: x.r.sentPerS,
    coreUsPerCall: c,
    bound: b,
    goodputOverBound: b > 0 ? goodput / b : Number.NaN,
    answered: (calls.length - unanswered) / Math.max(1, calls.length),
    unanswered,
    ok: ok.length,
    okP50Ms: percentile(ok, 0.5),
    okP99Ms: percentile(ok, 0.99),
    refused: refused.length,
    refusedP99Ms: percentile(refused, 0.99),
    refusedWithoutRetryAfter: refusedCalls.filter((k) => !k.retryAfter).length,
    otherErrors: calls.length - ok.length - refused.length - unanswered,
    otherByCode: codesOf(
      calls.filter((k) => k.code !== 200 && k.code !== 429 && k.code !== 503 && k.code !== 0),
    ),
    coreBusy: x.coreMs / x.wallMs,
    othersBusy: x.others.busy,
    steal: x.others.steal,
    listenOverflows: x.tcp.listenOverflows,
    synRetransmits: x.tcp.synRetransmits,
    logWarnings: x.log.warnings,
    logErrors: x.log.errors,
    firstLogErrors: x.log.firstErrors,
    usPerRefusal:
      refused.length > 0 ? (x.coreMs * 1000 - ok.length * c) / refused.length : Number.NaN,
    probes: probeMs.length,
    probeFailures: x.probes.failures,
    probeP99Ms: percentile(probeMs, 0.99),
    rssMaxMb: x.rssMaxMb,
    recoveryS: x.recoveryS,
  };
}

/** The quiet client alone, then beside each flood from the second API client. */
async function twoClientRun(
  driver: Driver,
  target: Target,
  capacity: Capacity,
  options: OverloadOptions,
  repeat: number,
): Promise<TwoClientResult> {
  const { side, server } = target;
  const C = capacity.callsPerS;
  const quietRate = C * options.quietShare;
  const label = `${side}-${driver.protocol}-${repeat}`;
  await pause();
  const alone = clientResult(
    await callsOf(driver.open(server, quietRate, options.seconds, `${label}-alone`, "quiet")),
  );
  const result: TwoClientResult = {
    side,
    protocol: driver.protocol,
    repeat,
    capacity: C,
    quietPerS: quietRate,
    alone,
    beside: [],
  };
  console.log(
    `  ${side} ${driver.protocol} two clients: the quiet one (${options.quietShare}x = ${fmt(quietRate, 0)}/s) alone: ${pct(alone.okShare)} 200 (${alone.calls} calls), p99 of 200s ${ms(alone.okP99Ms)}, other ${JSON.stringify(alone.byCode)}`,
  );
  const beside: TwoClientResult["beside"][number][] = [];
  for (const fm of options.floodMultipliers) {
    await pause();
    const [quiet, flood] = await Promise.all([
      callsOf(driver.open(server, quietRate, options.seconds, `${label}-quiet-${fm}x`, "quiet")),
      callsOf(driver.open(server, C * fm, options.seconds, `${label}-flood-${fm}x`, "flood")),
    ]);
    const row = { floodMultiplier: fm, quiet: clientResult(quiet), flood: clientResult(flood) };
    beside.push(row);
    const floodSent = row.flood.calls / options.seconds;
    if (floodSent < 0.95 * C * fm) {
      console.log(
        `    !! the flood sent ${fmt(floodSent, 0)}/s of the ${fmt(C * fm, 0)}/s offered: its calls in flight were all waiting for answers`,
      );
    }
    console.log(
      `    beside a ${fm}x flood: the quiet client ${pct(row.quiet.okShare)} 200 (${row.quiet.calls} calls), p99 of 200s ${ms(row.quiet.okP99Ms)}, of all ${ms(row.quiet.p99Ms)}, other ${JSON.stringify(row.quiet.byCode)}; the flood (${fmt(floodSent, 0)}/s sent) ${pct(row.flood.okShare)} 200, other ${JSON.stringify(row.flood.byCode)}`,
    );
  }
  return { ...result, beside };
}

// ---------------------------------------------------------------- printing

export const fmt = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : "-");
const pct = (share: number) => `${fmt(share * 100, 1)} %`;
const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(0)} ms` : "-");
const times = (v: number) => `${fmt(v, 2)}x`;

export function printSpike(r: SpikeResult): void {
  const head = `  ${r.side} ${r.protocol} ${r.multiplier}x`;
  const indent = " ".repeat(6);
  if (r.sentPerS < 0.95 * r.offeredPerS) {
    console.log(
      `  !! the generator sent ${fmt(r.sentPerS, 0)}/s of the ${fmt(r.offeredPerS, 0)}/s offered: the generator's calls in flight were all waiting for answers (vegeta --max-workers; ghz: 16 connections' streams), so this spike was closer to a closed loop`,
    );
  }
  console.log(
    `${head}: offered ${fmt(r.offeredPerS, 0)}/s (sent ${fmt(r.sentPerS, 0)}/s)  goodput ${times(r.goodput)}  bound ${times(r.bound)} (r ${fmt(r.bareUsPerAnswer, 1)} µs at ${fmt(r.bareSentPerS, 0)}/s${r.bareUnanswered > 0 ? `, ${r.bareUnanswered} unanswered by the bare refuser` : ""}, c ${fmt(r.coreUsPerCall, 0)} µs)  goodput/bound ${fmt(r.goodputOverBound, 2)}`,
  );
  console.log(
    `${indent}answered ${pct(r.answered)} (unanswered ${r.unanswered})  200s ${r.ok}, p50/p99 ${ms(r.okP50Ms)}/${ms(r.okP99Ms)}  refused ${r.refused}, p99 ${ms(r.refusedP99Ms)} (no Retry-After: ${r.refusedWithoutRetryAfter})  other ${r.otherErrors}${r.otherErrors > 0 ? ` ${JSON.stringify(r.otherByCode)}` : ""}`,
  );
  console.log(
    `${indent}/readyz 200 ${r.probes - r.probeFailures}/${r.probes}, p99 ${ms(r.probeP99Ms)}  RSS peak ${fmt(r.rssMaxMb, 0)} MB  back to 0.9x capacity in ${Number.isFinite(r.recoveryS) ? `${r.recoveryS} s` : "> 10 s"}`,
  );
  console.log(
    `${indent}core ${SERVER_CORE}: ours ${fmt(r.coreBusy * 100, 0)} %, others ${fmt(r.othersBusy * 100, 0)} %; ≈ ${fmt(r.usPerRefusal, 0)} µs per refusal if each 200 cost c  TCP: listen queue overflows ${fmt(r.listenOverflows, 0)}, SYNs sent again ${fmt(r.synRetransmits, 0)}  log: ${r.logWarnings} warn, ${r.logErrors} error lines`,
  );
  for (const line of r.firstLogErrors) console.log(`${indent}  ${line}`);
}

const range = (values: readonly number[], digits: number) => {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return "-";
  const lo = Math.min(...finite);
  const hi = Math.max(...finite);
  return finite.length === 1 || lo === hi
    ? fmt(lo, digits)
    : `${fmt(lo, digits)}–${fmt(hi, digits)}`;
};

const spread = (values: readonly number[]) => {
  const finite = values.filter(Number.isFinite);
  return finite.length === 0 ? Number.NaN : Math.max(...finite) - Math.min(...finite);
};

/** One table of every spike, then the spread across repeats, then the two clients. */
export function printSummary(runs: readonly ProtocolRun[]): void {
  const spikes = runs.flatMap((r) => r.spikes);
  console.log("\nevery spike:");
  const cols = [
    ["side", 8],
    ["proto", 5],
    ["run", 3],
    ["mult", 4],
    ["capacity", 8],
    ["goodput", 7],
    ["bound", 6],
    ["/bound", 6],
    ["unans.", 6],
    ["ok p99", 7],
    ["ref p99", 7],
    ["readyz", 9],
    ["rz p99", 7],
    ["back", 5],
    ["RSS", 4],
  ] as const;
  const line = (cells: string[]) =>
    console.log(
      `  ${cells.map((c, i) => (i < 2 ? c.padEnd(cols[i]?.[1] ?? 6) : c.padStart(cols[i]?.[1] ?? 6))).join(" ")}`,
    );
  line(cols.map(([name]) => name));
  for (const s of spikes) {
    line([
      s.side,
      s.protocol,
      String(s.repeat),
      `${s.multiplier}x`,
      fmt(s.capacity, 0),
      fmt(s.goodput, 2),
      fmt(s.bound, 2),
      fmt(s.goodputOverBound, 2),
      String(s.unanswered),
      fmt(s.okP99Ms, 0),
      fmt(s.refusedP99Ms, 0),
      `${s.probes - s.probeFailures}/${s.probes}`,
      fmt(s.probeP99Ms, 0),
      Number.isFinite(s.recoveryS) ? `${s.recoveryS}s` : ">10s",
      fmt(s.rssMaxMb, 0),
    ]);
  }
  const repeats = new Set(spikes.map((s) => s.repeat));
  const groups = new Map<string, SpikeResult[]>();
  for (const s of spikes) {
    const key = `${s.side} ${s.protocol} ${s.multiplier}x`;
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  console.log(
    `\nspread across ${repeats.size} run${repeats.size === 1 ? "" : "s"} (min–max; spread = max − min):`,
  );
  for (const [key, group] of groups) {
    const g = group.map((s) => s.goodput);
    console.log(
      `  ${key.padEnd(20)} goodput ${range(g, 2).padEnd(10)} (spread ${fmt(spread(g), 2)})  bound ${range(
        group.map((s) => s.bound),
        2,
      ).padEnd(10)} goodput/bound ${range(
        group.map((s) => s.goodputOverBound),
        2,
      ).padEnd(10)} capacity ${range(
        group.map((s) => s.capacity),
        0,
      )}/s  r ${range(
        group.map((s) => s.bareUsPerAnswer),
        1,
      )} µs  c ${range(
        group.map((s) => s.coreUsPerCall),
        0,
      )} µs`,
    );
  }
  const two = runs.flatMap((r) => (r.twoClients ? [r.twoClients] : []));
  if (two.length > 0) {
    console.log(
      "\ntwo clients, the quiet one at 0.2x capacity (its share of 200s, p99 of its 200s):",
    );
    const byKey = new Map<string, { share: number[]; p99: number[] }>();
    for (const t of two) {
      const rows = [
        { key: `${t.side} ${t.protocol} alone`, r: t.alone },
        ...t.beside.map((b) => ({
          key: `${t.side} ${t.protocol} beside ${b.floodMultiplier}x`,
          r: b.quiet,
        })),
      ];
      for (const { key, r } of rows) {
        const entry = byKey.get(key) ?? { share: [], p99: [] };
        entry.share.push(r.okShare * 100);
        entry.p99.push(r.okP99Ms);
        byKey.set(key, entry);
      }
    }
    for (const [key, { share, p99 }] of byKey) {
      console.log(
        `  ${key.padEnd(28)} 200s ${range(share, 1)} %  p99 ${range(p99, 0)} ms  (runs: ${share.map((s) => fmt(s, 1)).join(", ")} %)`,
      );
    }
  }
}

/** Issue 41's goals ("Done when"), each with every run's value: met when every run meets it. */
export function overloadGoals(runs: readonly ProtocolRun[], side = "service"): string[] {
  const lines: string[] = [];
  const ours = runs.filter((r) => r.side === side);
  const check = (
    what: string,
    values: readonly number[],
    ok: (v: number) => boolean,
    show: (v: number) => string,
  ) => {
    if (values.length === 0) return;
    const met = values.filter(ok).length;
    lines.push(
      `${met === values.length ? "met   " : "MISSED"} ${what}: ${values.map(show).join(", ")}${values.length > 1 ? ` (${met}/${values.length} runs)` : ""}`,
    );
  };
  const x2 = (v: number) => fmt(v, 2);
  const msOf = (v: number) => (Number.isFinite(v) ? `${v.toFixed(0)} ms` : "-");
  const protocols = [...new Set(ours.map((r) => r.protocol))];
  for (const protocol of protocols) {
    const spikes = ours.filter((r) => r.protocol === protocol).flatMap((r) => r.spikes);
    for (const m of [...new Set(spikes.map((s) => s.multiplier))].filter((v) => v >= 2)) {
      const at = spikes.filter((s) => s.multiplier === m);
      const tag = `${protocol} ${m}x`;
      const get = (f: (s: SpikeResult) => number) => at.map(f);
      check(
        `${tag}: goodput ≥ 0.85 × bound`,
        get((s) => s.goodputOverBound),
        (v) => v >= 0.85,
        x2,
      );
      if (m === 2 || m === 5) {
        const goal = m === 2 ? 0.85 : 0.6;
        check(
          `${tag}: goodput ≥ ${goal}× capacity`,
          get((s) => s.goodput),
          (v) => v >= goal,
          x2,
        );
      }
      check(
        `${tag}: every call answered`,
        get((s) => s.unanswered),
        (v) => v === 0,
        String,
      );
      check(
        `${tag}: success p99 ≤ 500 ms`,
        get((s) => s.okP99Ms),
        (v) => v <= 500,
        msOf,
      );
      check(
        `${tag}: refusal p99 ≤ 100 ms`,
        get((s) => s.refusedP99Ms),
        (v) => !(v > 100),
        msOf,
      );
      check(
        `${tag}: /readyz 200 throughout`,
        get((s) => s.probeFailures),
        (v) => v === 0,
        (v) => `${v} not 200`,
      );
      check(
        `${tag}: /readyz p99 ≤ 250 ms`,
        get((s) => s.probeP99Ms),
        (v) => v <= 250,
        msOf,
      );
      check(
        `${tag}: throughput ≥ 0.9× capacity within 5 s after`,
        get((s) => s.recoveryS),
        (v) => v <= 5,
        (v) => (Number.isFinite(v) ? `${v} s` : "> 10 s"),
      );
      check(
        `${tag}: RSS < 300 MB`,
        get((s) => s.rssMaxMb),
        (v) => v < 300,
        (v) => `${fmt(v, 0)} MB`,
      );
      if (at.length > 1) {
        const g = get((s) => s.goodput);
        check(`${tag}: goodput varies by ≤ 0.1× across runs`, [spread(g)], (v) => v <= 0.1, x2);
      }
    }
    const two = ours
      .filter((r) => r.protocol === protocol)
      .flatMap((r) => (r.twoClients ? r.twoClients.beside : []));
    for (const fm of [...new Set(two.map((b) => b.floodMultiplier))]) {
      const at = two.filter((b) => b.floodMultiplier === fm);
      check(
        `${protocol} quiet client beside a ${fm}x flood: ≥ 95 % answered 200`,
        at.map((b) => b.quiet.okShare * 100),
        (v) => v >= 95,
        (v) => `${fmt(v, 1)} %`,
      );
      check(
        `${protocol} quiet client beside a ${fm}x flood: p99 ≤ 250 ms`,
        at.map((b) => b.quiet.okP99Ms),
        (v) => v <= 250,
        msOf,
      );
    }
  }
  return lines;
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

/**
 * About how long the mode takes, in seconds: per protocol and run, the
 * capacity, then per multiple the bare flood, a pause, the spike, its
 * results read and the recovery, then the two clients.
 */
export function estimateSeconds(
  options: OverloadOptions,
  protocols: number,
  runs: number,
  baselineRuns: number,
): number {
  const start = 5;
  const capacity = options.capacityWarmupSeconds + options.capacitySeconds + 2;
  const spike = options.bareSeconds + 2 + PAUSE_MS / 1000 + options.seconds + 3 + 2;
  const two = (PAUSE_MS / 1000 + options.seconds + 1) * (1 + options.floodMultipliers.length) + 2;
  const perServer = start + capacity + options.multipliers.length * spike + two;
  const perBaseline = perServer - options.multipliers.length * (options.bareSeconds + 2);
  return protocols * (runs * perServer + baselineRuns * perBaseline);
}
