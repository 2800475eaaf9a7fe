/**
 * What the benchmark measures and how: the load generators' result line,
 * percentiles, and a process's own CPU time and resident memory read from
 * /proc (Linux only).
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** The one JSON line a load generator prints when it is done. */
export interface LoadResult {
  readonly generator: string;
  /** Responses received (any status). */
  readonly requests: number;
  /** Non-2xx responses, failed calls, errors and timeouts. */
  readonly failed: number;
  /** Successful answers (2xx; gRPC OK): goodput's count. */
  readonly ok: number;
  readonly durationS: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** A load generator prints this line when the first request is about to go out. */
export const START_LINE = "BENCH-LOAD-START";

export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] ?? Number.NaN)
    : ((sorted[mid - 1] ?? Number.NaN) + (sorted[mid] ?? Number.NaN)) / 2;
}

/** Latencies collected in milliseconds; sorted once at the end. */
export class Latencies {
  private values = new Float64Array(1 << 16);
  private size = 0;

  record(ms: number): void {
    if (this.size === this.values.length) {
      const bigger = new Float64Array(this.values.length * 2);
      bigger.set(this.values);
      this.values = bigger;
    }
    this.values[this.size++] = ms;
  }

  get count(): number {
    return this.size;
  }

  percentiles(): { p50Ms: number; p99Ms: number } {
    const sorted = this.values.slice(0, this.size).sort();
    return { p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99) };
  }
}

let clockTicks: number | undefined;

/** Clock ticks per second (getconf CLK_TCK; 100 when it cannot be asked). */
export function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** User + system CPU time the process has used so far (all its threads), in ms. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) may hold spaces; the fields after it are fixed.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / ticksPerSecond();
}

/**
 * A process's CPU time so far (ms) by thread: the main thread (JavaScript,
 * the event loop, and the parts of garbage collection it runs itself) and
 * V8's helper threads ("V8Worker": parallel scavenges, concurrent marking,
 * sweeping, compiling). Threads that ended before the call are not counted.
 */
export function cpuByThreadMs(pid: number): { main: number; helpers: number } {
  let main = 0;
  let helpers = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    let comm: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8");
    } catch {
      continue; // the thread ended in between
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond();
    if (tid === String(pid)) main += ms;
    else if (comm.startsWith("V8Worker")) helpers += ms;
  }
  return { main, helpers };
}

/** Resident set size in MB (VmRSS). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  return match?.[1] ? Number(match[1]) / 1024 : Number.NaN;
}

/**
 * One core's time so far, in ms, from /proc/stat: busy (user, nice, system,
 * irq, softirq: whoever ran there) and stolen by the hypervisor. Beside the
 * CPU of the processes under test it tells whether something else ran on
 * their core.
 */
export function coreMs(core: number): { busy: number; steal: number } {
  const line = readFileSync("/proc/stat", "utf8")
    .split("\n")
    .find((l) => l.startsWith(`cpu${core} `));
  if (!line) return { busy: Number.NaN, steal: Number.NaN };
  const [user, nice, system, , , irq, softirq, steal] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const ms = (ticks: number) => (ticks * 1000) / ticksPerSecond();
  return {
    busy: ms((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0)),
    steal: ms(steal ?? 0),
  };
}

/**
 * The kernel's TCP counters that tell of connections refused before any
 * process saw them (/proc/net/netstat, the whole machine): SYNs dropped
 * because a listen queue was full, and SYNs a client had to send again.
 */
export function tcpCounters(): { listenOverflows: number; synRetransmits: number } {
  let keys: string[] | undefined;
  let values: string[] = [];
  try {
    for (const line of readFileSync("/proc/net/netstat", "utf8").split("\n")) {
      if (!line.startsWith("TcpExt:")) continue;
      if (keys === undefined) keys = line.split(/\s+/);
      else values = line.split(/\s+/);
    }
  } catch {
    return { listenOverflows: Number.NaN, synRetransmits: Number.NaN };
  }
  const of = (name: string) => Number(values[keys?.indexOf(name) ?? -1] ?? Number.NaN);
  return { listenOverflows: of("ListenOverflows"), synRetransmits: of("TCPSynRetrans") };
}
