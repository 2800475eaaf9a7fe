/**
 * `npm run bench [-- --json file]`: throughput, latency, CPU per request and
 * memory of the service against floors doing the same database work — a
 * plain node:http server (legacy and Connect paths) and a plain grpc-js
 * server (gRPC) — on the embedded database, or on MONGODB_URI when set (a
 * fresh database, dropped at the end). Every server is a child process pinned
 * to core 0, alone; the embedded database and the load generators (wrk if on
 * PATH, else autocannon; ghz if on PATH, else a grpc-js generator) run pinned
 * to core 1. Answers are checked byte for byte before anything is timed.
 * Runs are interleaved service, floor, service, floor… per scenario and
 * connection count.
 *
 * Environment: BENCH_ROUNDS (3), BENCH_SECONDS (5), BENCH_WARMUP_SECONDS (2),
 * BENCH_CONNECTIONS ("32,256"), BENCH_SCENARIOS (comma list, default all),
 * BENCH_DATABASE_CORE ("load", or "server": the database on the servers' core).
 *
 * `npm run bench -- --observability` (or BENCH_OBSERVABILITY=1) compares the
 * service with itself instead, interleaved: metrics off, metrics on, metrics
 * with tracing configured but off (OTEL_SDK_DISABLED=true), and metrics with
 * tracing at 100 % sampling to a local receiver that discards every export.
 *
 * BENCH_NODE_FLAGS="flags|flags|…" (two sets or more) compares the service
 * with itself under those node flag sets instead (they replace the start
 * script's flags; NAME=value words set the environment of that variant),
 * e.g. "--max-semi-space-size=4|--max-semi-space-size=16 MALLOC_ARENA_MAX=2".
 *
 * `npm run bench -- --against REV` compares the service with itself at
 * another commit (built in a git worktree of its own, sharing node_modules),
 * interleaved, after checking that both give the same answers.
 *
 * `npm run bench -- --variant NAME=value` compares the service with the same
 * build started with that environment difference, interleaved (e.g.
 * `--variant ADMISSION_ENABLED=false --rounds 10`): CPU per call, goodput and
 * refusals per scenario, median and spread of the rounds, and their ratios.
 * `--closed` is that comparison for admission: ADMISSION_ENABLED=true against
 * false, closed loop, every scenario at 32 and 256 connections.
 *
 * `npm run bench -- --overload` drives open-loop spikes instead
 * (bench/overload.ts), repeated `--repeat` times (3).
 *
 * BENCH_HTTP_GENERATOR=autocannon or wrk chooses the HTTP load generator
 * (default: wrk when it is on PATH): a second, independent measure of the
 * same calls.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import { commandLine } from "../scripts/cli";
import { DEFAULT_TIMEOUTS } from "../src/config";
import { loadFixture } from "../src/fixtures/load";
import { type Database, openDatabase } from "../src/storage/database";
import { type EmbeddedServer, startEmbeddedServer } from "../src/storage/embedded-server";
import { closedGoals, compare, costGoals, printComparisons } from "./compare";
import {
  AUTHORIZATION,
  BENCH,
  benchFixture,
  CONNECT_PATH,
  FLOOD_AUTHORIZATION,
  FLOOD_CALL,
  groupRequestBytes,
  type HttpCall,
  OVERLOAD_CALL,
  SCENARIOS,
  type Scenario,
} from "./fixture";
import { type GhzFiles, ghzArgs, parseGhz, prepareGhz } from "./ghz";
import { cpuByThreadMs, cpuMs, type LoadResult, median, rssMb, START_LINE } from "./measure";
import {
  estimateSeconds,
  goToolVersion,
  grpcDriver,
  httpDriver,
  type OverloadOptions,
  type OverloadTools,
  overloadGoals,
  type ProtocolRun,
  printSummary,
  protocolRun,
} from "./overload";
import {
  hasTaskset,
  killAllNow,
  LOAD_CORE,
  onPath,
  pinProcess,
  runLoadGenerator,
  SERVER_CORE,
  type Server,
  startServer,
  stopAll,
  stopServer,
} from "./processes";
import { allocationsByPlace, type ProfileSummary, summarizeProfile } from "./profile";
import { prepareWrk, wrkArgs } from "./wrk";

const USAGE = `usage: npm run bench [-- --json [file]] [-- --against REV] [-- --observability]
                 [-- --profile [dir]] [-- --variant NAME=value …] [-- --closed]
                 [-- --overload [--repeat N] [--multiples LIST] [--flood-multiples LIST]
                             [--protocols LIST] [--no-tight] [--max-workers N]]
                 [-- --rounds N] [-- --seconds S]

Throughput, latency, server CPU per request, database commands per request and
memory of the service against two baselines: "tight", a plain node:http server
(a plain grpc-js server for gRPC) that makes exactly the service's database
calls with the same caching, and "uncached", the calls an uncached service
made. Interleaved, servers pinned to one core, alone, and the database and
the load generators to the other; answers are checked byte for byte before
anything is timed. About 12 minutes with the defaults. Ctrl-C stops every
child process.

  --json [file]      also write the results as JSON (default bench-results.json)
  --against REV      compare with the service at another commit instead
  --observability    compare metrics and tracing settings of the service instead
  --variant WORDS    compare the service with the same build started with an
                     environment difference (NAME=value words, one variant per
                     flag; e.g. --variant ADMISSION_ENABLED=false), interleaved:
                     per scenario and connection count, CPU per call and goodput,
                     median and min–max of the rounds, refusals, and the ratios
                     service ÷ variant (of the medians, and of each round's pair)
  --closed           closed-loop check of admission: every scenario at 32 and 256
                     connections with ADMISSION_ENABLED=true against false (same
                     build), interleaved; refusals and goodput on ÷ off, with the
                     goals "nothing refused" and "goodput >= 1.0x off"
  --fresh            with --variant or --closed: every side started anew for each
                     round (and warmed up again), so that a process's luck (its
                     JIT's choices, its heap's layout) averages over the rounds
                     instead of biasing all of them: an A/A run (both sides
                     alike) measured one side 3-13 % above the other for its
                     whole life (docs/performance.md)
  --rounds N         interleaved rounds (default 3; BENCH_ROUNDS)
  --seconds S        seconds per step: each round (default 5; BENCH_SECONDS), or
                     with --overload each spike, bare flood and two-client run
                     (default 30; BENCH_OVERLOAD_SECONDS)
  --overload         open-loop overload instead (vegeta, ghz --rps): the service,
                     with its embedded database on core 0, over HTTP/1.1 (legacy
                     GetSubscriptions JSON) and gRPC: capacity (closed loop) and c,
                     its CPU per call; per multiple, r (a bare refuser's CPU per
                     answer at the same rate: node:http answering 503, h2c
                     answering trailers-only UNAVAILABLE) and the spike: goodput
                     ÷ capacity, the bound (1 − m·r/c) ÷ (1 − r/c), goodput ÷ bound,
                     calls unanswered, success and refusal p99, /readyz 200s and
                     p99, RSS peak, recovery; then a quiet client at 0.2x beside a
                     second client's flood; all of it --repeat times, with the
                     spread; the tight baseline once, in the first run
  --repeat N         with --overload: runs of the whole mode (default 3)
  --multiples LIST   with --overload: spike multiples (default 1,2,5,10;
                     BENCH_OVERLOAD_MULTIPLIERS)
  --flood-multiples LIST
                     with --overload: the flooding client's multiples (default 5,10)
  --protocols LIST   with --overload: http, grpc or both (default http,grpc)
  --no-tight         with --overload: leave the tight baseline out
  --max-workers N    with --overload: vegeta's calls in flight at most (default
                     4000); a spike whose calls all wait sends less than offered
  --profile [dir]    CPU profiles of the service under each scenario instead:
                     top frames by self time, costs by place, a flame graph
                     (SVG), the raw .cpuprofile and .heapprofile (default dir
                     bench-profiles)

Environment: BENCH_ROUNDS (3), BENCH_SECONDS (5), BENCH_WARMUP_SECONDS (2),
BENCH_CONNECTIONS ("32,256"), BENCH_SCENARIOS (comma list, default all),
BENCH_HTTP_GENERATOR (wrk if on PATH, else autocannon), BENCH_DATABASE_CORE
("load", or "server": the embedded database on the servers' core),
BENCH_NODE_FLAGS ("flags|flags"),
MONGODB_URI (a real MongoDB: a fresh database, dropped at the end).
See docs/performance.md.`;

// Before anything starts: --help does no work.
commandLine({
  text: USAGE,
  options: [
    "--json",
    "--against",
    "--observability",
    "--profile",
    "--overload",
    "--variant",
    "--closed",
    "--fresh",
    "--rounds",
    "--seconds",
    "--repeat",
    "--multiples",
    "--flood-multiples",
    "--protocols",
    "--no-tight",
    "--max-workers",
  ],
});

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const script = (name: string) => fileURLToPath(new URL(`./${name}`, import.meta.url));
const NODE_TS = [process.execPath, "--import", "tsx"];

/**
 * The service runs exactly as `npm start` runs it: the build, then the node
 * command after `exec` in package.json's start script (flags included, and
 * the environment `exec env NAME=value … node` sets).
 */
function serviceCommand(root = ROOT): { argv: string[]; env: Record<string, string> } {
  execFileSync("npm", ["run", "-s", "build"], { cwd: root, stdio: "inherit" });
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    scripts: Record<string, string>;
  };
  const start = /exec (?:env ((?:[A-Z_][A-Z0-9_]*=\S+\s+)+))?node (.+)$/.exec(
    pkg.scripts.start ?? "",
  );
  if (!start?.[2]) throw new Error('package.json\'s start script has no "exec [env …] node …"');
  const env = Object.fromEntries(
    (start[1] ?? "")
      .trim()
      .split(/\s+/)
      .filter((word) => word !== "")
      .map((word) => [word.slice(0, word.indexOf("=")), word.slice(word.indexOf("=") + 1)]),
  );
  const [script, ...flags] = start[2].trim().split(/\s+/).reverse();
  // BENCH_SERVICE_NODE_FLAGS="--cpu-prof --cpu-prof-dir=DIR": Node flags for the service
  // alone (NODE_OPTIONS refuses --cpu-prof, and would profile the bench and baselines too).
  const extra = (process.env.BENCH_SERVICE_NODE_FLAGS ?? "").split(/\s+/).filter(Boolean);
  return {
    argv: [process.execPath, ...flags.reverse(), ...extra, join(root, script ?? "dist/main.js")],
    env,
  };
}

/**
 * A floor runs as the service runs: the same node, the same flags and
 * environment of the start script (heap sizing, malloc arenas), so that the
 * comparison is of the code alone; its TypeScript is loaded through tsx.
 */
function floorCommand(service: { argv: readonly string[] }, protocol: "http" | "grpc"): string[] {
  const flags = service.argv.slice(1, -1);
  return [process.execPath, ...flags, "--import", "tsx", script(`floor-${protocol}.ts`)];
}

/**
 * `--against REV`: the service at another commit, checked out in a git
 * worktree under `dir` that shares this checkout's node_modules, built and
 * started as that commit's own start script says.
 */
function serviceAt(
  rev: string,
  dir: string,
): { argv: string[]; env: Record<string, string>; cwd: string } {
  const tree = join(dir, `service-${rev.replace(/[^A-Za-z0-9._-]/g, "_")}`);
  execFileSync("git", ["worktree", "add", "--detach", "--force", tree, rev], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "inherit"],
  });
  worktrees.push(tree);
  symlinkSync(join(ROOT, "node_modules"), join(tree, "node_modules"), "dir");
  return { ...serviceCommand(tree), cwd: tree };
}

/**
 * The baselines: "tight" makes exactly the service's database calls with its
 * caching (tight-store.ts); "uncached" those of an uncached service
 * (floor-store.ts). Each is a plain node:http server for HTTP scenarios and
 * a plain grpc-js server for gRPC.
 */
const FLOOR_KINDS = ["tight", "uncached"] as const;
type FloorKind = (typeof FLOOR_KINDS)[number];

type SideName =
  | "service"
  | FloorKind
  | "metrics-off"
  | "metrics-on"
  | "tracing-off"
  | "tracing-100"
  /** --against REV: the service at another commit. */
  | `service@${string}`
  /** BENCH_NODE_FLAGS: the service with other node flags. */
  | `node ${string}`
  /** --closed: the same build with ADMISSION_ENABLED=true and false. */
  | "admission-on"
  | "admission-off"
  /** --variant NAME=value: the same build with another environment. */
  | `service ${string}`;

/** A configuration of the service compared with others (--observability, BENCH_NODE_FLAGS). */
interface Variant {
  readonly name: SideName;
  readonly env: Record<string, string>;
  /** Replaces the node flags of the start script. */
  readonly nodeFlags?: readonly string[];
  /** Replaces the whole command (--against: another commit's build). */
  readonly command?: readonly string[];
  /** Where that command runs (--against: the other commit's worktree). */
  readonly cwd?: string;
}

/** The observability configurations, in the order they run. */
const OBSERVABILITY_SIDES: readonly Variant[] = [
  { name: "metrics-off", env: { METRICS_ENABLED: "false" } },
  { name: "metrics-on", env: { METRICS_ENABLED: "true" } },
  {
    name: "tracing-off",
    env: { METRICS_ENABLED: "true", OTEL_SDK_DISABLED: "true", OTEL_TRACES_EXPORTER: "otlp" },
  },
  {
    name: "tracing-100",
    env: {
      METRICS_ENABLED: "true",
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_TRACES_SAMPLER: "always_on",
    },
  },
];

interface Side {
  readonly name: SideName;
  server: Server;
  /** Stops its server and starts a new one (--fresh). */
  readonly restart?: () => Promise<void>;
}

interface RunResult {
  readonly reqPerS: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly cpuMsPerReq: number;
  /** Of cpuMsPerReq: V8's helper threads (parallel and concurrent garbage collection, compiling). */
  readonly helperCpuMsPerReq: number;
  /** The embedded engine's CPU per request; NaN on MONGODB_URI. */
  readonly dbCpuMsPerReq: number;
  readonly rssMaxMb: number;
  /** Database commands the server sent per response (command monitoring); NaN if it cannot tell. */
  readonly commandsPerReq: number;
  readonly requests: number;
  readonly failed: number;
  /** Successes (2xx, gRPC OK) per second: goodput. */
  readonly okPerS: number;
  /** Calls the server's admission refused (docflow_admission_refusals_total); NaN if it cannot tell. */
  readonly refused: number;
  readonly generator: string;
}

interface Row {
  readonly scenario: string;
  readonly connections: number;
  readonly side: SideName;
  readonly reqPerS: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly cpuMsPerReq: number;
  readonly helperCpuMsPerReq: number;
  readonly dbCpuMsPerReq: number;
  readonly rssMaxMb: number;
  readonly commandsPerReq: number;
  readonly failed: number;
  readonly rounds: readonly RunResult[];
}

interface Options {
  readonly rounds: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly connections: readonly number[];
  readonly scenarios: readonly Scenario[];
  readonly jsonFile: string | undefined;
  /** Compare the service's observability configurations instead of service vs floor. */
  readonly observability: boolean;
  /** BENCH_NODE_FLAGS ("flags|flags|…"): compare the service under node flag sets instead. */
  readonly nodeFlags: readonly (readonly string[])[];
  /** --against REV: compare the service with itself at another commit instead. */
  readonly against: string | undefined;
  /** BENCH_HTTP_GENERATOR: autocannon (default) or wrk. */
  readonly httpGenerator: "autocannon" | "wrk";
  /** --profile [dir]: CPU profiles of the service under load instead, written to dir. */
  readonly profileDir: string | undefined;
  /**
   * BENCH_DATABASE_CORE: where the embedded database runs, "load" (default:
   * beside the load generators, so that the server has a core of its own, as
   * a deployment's database is elsewhere) or "server" (beside the servers,
   * as one small host runs both: the engine's work then slows every server).
   */
  readonly databaseCore: number;
  /** --overload: open-loop overload of the service and the tight baseline instead. */
  readonly overload: boolean;
  /** --overload's settings: --repeat, --multiples, --flood-multiples, --protocols, --no-tight, --seconds. */
  readonly overloadRuns: number;
  readonly multiples: readonly number[];
  readonly floodMultiples: readonly number[];
  readonly protocols: readonly ("http" | "grpc")[];
  readonly tight: boolean;
  readonly overloadSeconds: number;
  /** --max-workers: vegeta's calls in flight at most (4000, as issue 41 measured). */
  readonly maxWorkers: number;
  /** --variant NAME=value …: the same build with these environment differences instead. */
  readonly variants: readonly Readonly<Record<string, string>>[];
  /** --closed: ADMISSION_ENABLED=true against false, closed loop, instead. */
  readonly closed: boolean;
  /** --fresh: with --variant or --closed, every side started anew for each round. */
  readonly fresh: boolean;
}

/** The value after a flag (`--rounds 10`), or undefined when the flag is absent. */
function flagValue(args: readonly string[], flag: string): string | undefined {
  const at = args.indexOf(flag);
  if (at === -1) return undefined;
  const value = args[at + 1];
  if (value === undefined || value.startsWith("--")) throw new Error(`${flag} needs a value`);
  return value;
}

/** Every value of a flag that may be given more than once (`--variant A=1 --variant B=2`). */
function flagValues(args: readonly string[], flag: string): string[] {
  const values: string[] = [];
  args.forEach((arg, i) => {
    if (arg !== flag) return;
    const value = args[i + 1];
    if (value === undefined || value.startsWith("--")) throw new Error(`${flag} needs a value`);
    values.push(value);
  });
  return values;
}

/** A positive number from a flag, else from the environment, else the default. */
function positive(
  flag: string | undefined,
  env: string | undefined,
  fallback: number,
  name: string,
  min: number,
): number {
  const raw = flag ?? (env?.trim() ? env : undefined);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number >= ${min}`);
  return n;
}

/** A comma list of positive numbers ("2,5,10"). */
function multiples(raw: string, name: string): number[] {
  const values = raw
    .split(",")
    .map((v) => v.trim())
    .filter((v) => v !== "")
    .map(Number);
  if (values.length === 0 || values.some((v) => !Number.isFinite(v) || v <= 0)) {
    throw new Error(`${name} must be a comma list of positive numbers (got "${raw}")`);
  }
  return values;
}

/** NAME=value words (space- or comma-separated) as an environment. */
function environmentWords(raw: string): Record<string, string> {
  const words = raw.split(/[\s,]+/).filter((w) => w !== "");
  const bad = words.filter((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w));
  if (words.length === 0 || bad.length > 0) {
    throw new Error(`--variant takes NAME=value words (got "${raw}")`);
  }
  return Object.fromEntries(
    words.map((w) => [w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1)]),
  );
}

function readOptions(): Options {
  const number = (name: string, fallback: number, min: number) => {
    const raw = process.env[name];
    if (raw === undefined || raw.trim() === "") return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number >= ${min}`);
    return n;
  };
  const list = (name: string) =>
    (process.env[name] ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "");
  const wanted = list("BENCH_SCENARIOS");
  const unknown = wanted.filter((w) => !SCENARIOS.some((s) => s.name === w));
  if (unknown.length > 0) {
    throw new Error(
      `BENCH_SCENARIOS: unknown ${unknown.join(", ")}; known: ${SCENARIOS.map((s) => s.name).join(", ")}`,
    );
  }
  const connections = list("BENCH_CONNECTIONS").map(Number);
  if (connections.some((c) => !Number.isInteger(c) || c < 1)) {
    throw new Error("BENCH_CONNECTIONS must be a comma list of positive integers");
  }
  const args = process.argv.slice(2);
  const jsonAt = args.indexOf("--json");
  const jsonArg = jsonAt === -1 ? undefined : args[jsonAt + 1];
  const profileAt = args.indexOf("--profile");
  const profileArg = profileAt === -1 ? undefined : args[profileAt + 1];
  const againstAt = args.indexOf("--against");
  const against = againstAt === -1 ? undefined : args[againstAt + 1];
  if (againstAt !== -1 && (against === undefined || against.startsWith("--"))) {
    throw new Error("--against needs a commit, e.g. --against af2a728");
  }
  // wrk (C, light on the load core it shares with the database) when installed.
  const httpGenerator =
    process.env.BENCH_HTTP_GENERATOR?.trim() || (onPath("wrk") ? "wrk" : "autocannon");
  if (httpGenerator !== "autocannon" && httpGenerator !== "wrk") {
    throw new Error("BENCH_HTTP_GENERATOR must be autocannon or wrk");
  }
  if (httpGenerator === "wrk" && onPath("wrk") === undefined) {
    throw new Error("BENCH_HTTP_GENERATOR=wrk, but wrk is not on PATH (apt-get install wrk)");
  }
  const databaseCore = process.env.BENCH_DATABASE_CORE?.trim() || "load";
  if (databaseCore !== "server" && databaseCore !== "load") {
    throw new Error("BENCH_DATABASE_CORE must be server or load");
  }
  return {
    against,
    httpGenerator,
    databaseCore: databaseCore === "load" ? LOAD_CORE : SERVER_CORE,
    profileDir:
      profileAt === -1
        ? undefined
        : profileArg && !profileArg.startsWith("--")
          ? profileArg
          : "bench-profiles",
    observability: args.includes("--observability") || process.env.BENCH_OBSERVABILITY === "1",
    overload: args.includes("--overload"),
    nodeFlags: (process.env.BENCH_NODE_FLAGS ?? "").includes("|")
      ? (process.env.BENCH_NODE_FLAGS ?? "").split("|").map((set) =>
          set
            .trim()
            .split(/\s+/)
            .filter((f) => f !== ""),
        )
      : [],
    rounds: Math.round(
      positive(flagValue(args, "--rounds"), process.env.BENCH_ROUNDS, 3, "--rounds", 1),
    ),
    seconds: positive(flagValue(args, "--seconds"), process.env.BENCH_SECONDS, 5, "--seconds", 1),
    overloadRuns: Math.round(positive(flagValue(args, "--repeat"), undefined, 3, "--repeat", 1)),
    overloadSeconds: positive(
      flagValue(args, "--seconds"),
      process.env.BENCH_OVERLOAD_SECONDS,
      30,
      "--seconds",
      1,
    ),
    multiples: multiples(
      flagValue(args, "--multiples") ?? (process.env.BENCH_OVERLOAD_MULTIPLIERS || "1,2,5,10"),
      "--multiples",
    ),
    floodMultiples: multiples(flagValue(args, "--flood-multiples") ?? "5,10", "--flood-multiples"),
    protocols: protocolList(flagValue(args, "--protocols") ?? "http,grpc"),
    tight: !args.includes("--no-tight"),
    maxWorkers: Math.round(
      positive(flagValue(args, "--max-workers"), undefined, 4000, "--max-workers", 1),
    ),
    variants: flagValues(args, "--variant").map(environmentWords),
    closed: args.includes("--closed"),
    fresh: args.includes("--fresh"),
    warmupSeconds: number("BENCH_WARMUP_SECONDS", 2, 0),
    connections: connections.length > 0 ? connections : [32, 256],
    scenarios: wanted.length > 0 ? SCENARIOS.filter((s) => wanted.includes(s.name)) : SCENARIOS,
    jsonFile:
      jsonAt === -1
        ? undefined
        : jsonArg && !jsonArg.startsWith("--")
          ? jsonArg
          : "bench-results.json",
  };
}

function protocolList(raw: string): ("http" | "grpc")[] {
  const words = raw.split(",").map((w) => w.trim());
  if (words.length === 0 || words.some((w) => w !== "http" && w !== "grpc")) {
    throw new Error(`--protocols must be http, grpc or http,grpc (got "${raw}")`);
  }
  return [...new Set(words as ("http" | "grpc")[])];
}

// ---------------------------------------------------------------- clean-up

let embedded: EmbeddedServer | undefined;
let database: Database | undefined;
let external = false;
let tempDir: string | undefined;
const worktrees: string[] = [];
let cleaning: Promise<void> | undefined;
let interrupted = false;

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await stopAll();
    if (database) {
      if (external) {
        await database.db.dropDatabase().catch((error: unknown) => {
          console.error(`could not drop ${database?.db.databaseName}: ${String(error)}`);
        });
      }
      await database.close().catch(() => undefined);
    }
    await embedded?.stop();
    for (const tree of worktrees) {
      try {
        execFileSync("git", ["worktree", "remove", "--force", tree], {
          cwd: ROOT,
          stdio: "ignore",
        });
      } catch {
        // removed with the temporary directory below; `git worktree prune` forgets it
      }
    }
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  })();
  return cleaning;
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${signal}: stopping every child process`);
    void cleanup().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  });
}
process.on("exit", killAllNow);

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const options = readOptions();
  const modes = [
    options.overload && "--overload",
    options.closed && "--closed",
    options.variants.length > 0 && "--variant",
    options.observability && "--observability",
    options.against !== undefined && "--against",
    options.profileDir !== undefined && "--profile",
    options.nodeFlags.length > 0 && "BENCH_NODE_FLAGS",
  ].filter((m) => m !== false);
  if (modes.length > 1) throw new Error(`choose one of ${modes.join(", ")}`);
  const started = Date.now();
  const uri = process.env.MONGODB_URI?.trim() || undefined;
  external = uri !== undefined;
  const dbName = `docflow_bench_${randomBytes(4).toString("hex")}`;
  // The bench itself (it reads the service's log pipe) stays off the servers' core.
  pinProcess(process.pid, LOAD_CORE);

  if (uri === undefined) {
    embedded = await startEmbeddedServer(dbName);
    // Overload: the service with its database on one core, as `npm start` runs it there.
    pinProcess(embedded.pid, options.overload ? SERVER_CORE : options.databaseCore);
  }
  const dbUri = uri ?? embedded?.uri ?? "";
  database = await openDatabase({
    uri: dbUri,
    name: dbName,
    operationTimeoutMs: DEFAULT_TIMEOUTS.databaseMs,
  });
  await loadFixture(database.db, benchFixture());

  const needsHttp = options.scenarios.some((s) => s.http !== undefined);
  const needsGrpc = options.scenarios.some((s) => s.http === undefined);
  const dir = mkdtempSync(join(os.tmpdir(), "docflow-bench-"));
  tempDir = dir;
  const ghz = needsGrpc ? onPath("ghz") : undefined;
  const wrk = options.httpGenerator === "wrk" ? onPath("wrk") : undefined;
  const tools: Tools = {
    ghz,
    ghzFiles: ghz ? prepareGhz(ROOT, dir, groupRequestBytes()) : undefined,
    wrk: wrk
      ? {
          path: wrk,
          scripts: new Map(
            options.scenarios.flatMap((s) =>
              s.http ? [[s.name, prepareWrk(dir, s.name, s.http)] as const] : [],
            ),
          ),
        }
      : undefined,
    dbPid: embedded?.pid,
  };

  const env = {
    ...process.env,
    MONGODB_URI: dbUri,
    MONGODB_DB: dbName,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "info",
  };
  if (
    options.observability ||
    options.nodeFlags.length > 0 ||
    options.against !== undefined ||
    options.closed ||
    options.variants.length > 0
  ) {
    const variants: Variant[] = options.observability
      ? [...OBSERVABILITY_SIDES]
      : options.against !== undefined
        ? againstVariants(options.against, dir)
        : options.closed || options.variants.length > 0
          ? environmentVariants(options)
          : options.nodeFlags.map((words) => {
              const isEnv = (w: string) => /^[A-Z_][A-Z0-9_]*=/.test(w);
              return {
                name: `node ${words.join(" ") || "(no flags)"}`,
                env: Object.fromEntries(
                  words
                    .filter(isEnv)
                    .map((w) => [w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1)]),
                ),
                nodeFlags: words.filter((w) => !isEnv(w)),
              };
            });
    await variantBench(options, variants, env, started, tools);
    return;
  }
  if (options.profileDir !== undefined) {
    await profileBench(options, options.profileDir, env, tools);
    return;
  }
  if (options.overload) {
    await overloadBench(options, env, dir, started, dbUri);
    return;
  }
  const command = serviceCommand();
  const service = await startServer("service", command.argv, { ...env, ...command.env }, ROOT);
  // The two baselines, each as an HTTP floor and a gRPC peer (tight-store.ts, floor-store.ts).
  const floor = async (kind: FloorKind, protocol: "http" | "grpc") =>
    startServer(
      `${kind}-${protocol}`,
      floorCommand(command, protocol),
      { ...env, ...command.env, FLOOR: kind },
      ROOT,
    );
  const floors = new Map<string, Server>();
  for (const kind of FLOOR_KINDS) {
    if (needsHttp) floors.set(`${kind} http`, await floor(kind, "http"));
    if (needsGrpc) floors.set(`${kind} grpc`, await floor(kind, "grpc"));
  }
  const floorFor = (kind: FloorKind, scenario: Scenario) =>
    required(floors.get(`${kind} ${scenario.http ? "http" : "grpc"}`));

  const { httpGenerator, grpcGenerator } = generatorNames(tools);
  printMachine(options, dbUri, { httpGenerator, grpcGenerator, needsHttp, needsGrpc });

  // Identical answers first: a floor that answers something else measures nothing.
  console.log("\nanswers, service vs each baseline:");
  for (const scenario of options.scenarios) {
    for (const kind of FLOOR_KINDS) {
      const other = floorFor(kind, scenario);
      const check = scenario.http
        ? await compareHttp(scenario.http, service, other)
        : await compareGrpc(service, other);
      console.log(`  ${scenario.name.padEnd(22)} ${kind.padEnd(9)} ${check}`);
    }
  }

  const rows: Row[] = [];
  const table = new Table();
  table.header();
  for (const scenario of options.scenarios) {
    const sides: Side[] = [
      { name: "service", server: service },
      ...FLOOR_KINDS.map((kind) => ({ name: kind, server: floorFor(kind, scenario) })),
    ];
    for (const connections of options.connections) {
      const group = await interleaved(sides, options, (side, seconds) =>
        runOnce(scenario, side, connections, seconds, tools),
      ).then((results) =>
        sides.map((side) =>
          summarize(scenario.name, connections, side.name, results.get(side.name) ?? []),
        ),
      );
      rows.push(...group);
      table.pair(group);
    }
  }
  table.footer();
  printGoals(rows);
  console.log(
    `\nservice log: ${service.stdoutLines()} JSON lines on stdout (LOG_LEVEL=info, one per request), read and dropped by the bench`,
  );
  console.log(`total time ${((Date.now() - started) / 1000).toFixed(0)} s`);

  writeResults(options, machineFacts(dbUri, options.databaseCore), rows, {
    generators: { http: httpGenerator, grpc: grpcGenerator },
  });
}

/** With --json FILE: the run's rows and settings, dated, with the machine's facts. */
function writeResults(
  options: { readonly jsonFile?: string; readonly scenarios: readonly { name: string }[] },
  machine: unknown,
  rows: unknown,
  extra: Record<string, unknown> = {},
): void {
  if (!options.jsonFile) return;
  const settings = { ...options, scenarios: options.scenarios.map((s) => s.name) };
  const results = { date: new Date().toISOString(), machine, ...extra, options: settings, rows };
  writeFileSync(options.jsonFile, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`results written to ${options.jsonFile}`);
}

/**
 * --overload (bench/overload.ts): per run and protocol the service, fresh,
 * with its embedded database on its core; beside it, idle until their turn,
 * the bare refusers that give r; the tight baseline goes through the same
 * once, in the first run. Then every spike, the spread across runs and
 * issue 41's goals.
 */
async function overloadBench(
  options: Options,
  env: NodeJS.ProcessEnv,
  dir: string,
  started: number,
  dbUri: string,
): Promise<void> {
  const vegeta = onPath("vegeta");
  const wrk = onPath("wrk");
  if (!vegeta || !wrk) {
    throw new Error(
      "--overload needs vegeta and wrk on PATH: go install github.com/tsenart/vegeta/v12@latest; apt-get install wrk",
    );
  }
  const ghz = onPath("ghz");
  const tools: OverloadTools = {
    vegeta,
    wrk,
    ghz,
    ghzFiles: ghz ? prepareGhz(ROOT, dir, groupRequestBytes()) : undefined,
    dir,
  };
  const seconds = options.overloadSeconds;
  const overload: OverloadOptions = {
    multipliers: options.multiples,
    seconds,
    capacityWarmupSeconds: Math.min(5, seconds),
    capacitySeconds: Math.min(10, seconds),
    bareSeconds: Math.min(10, seconds),
    floodMultipliers: options.floodMultiples,
    quietShare: 0.2,
    maxWorkers: options.maxWorkers,
  };
  const method = "docflow.api.v1.CounteragentService/GetCounteragentsFromGroup";
  const drivers = options.protocols.flatMap((protocol) => {
    if (protocol === "http") {
      return [httpDriver(tools, OVERLOAD_CALL, FLOOD_CALL, overload.maxWorkers)];
    }
    const driver = grpcDriver(tools, method, AUTHORIZATION, FLOOD_AUTHORIZATION);
    return driver ? [driver] : [];
  });
  if (drivers.length === 0) throw new Error("--overload: nothing to run (gRPC needs ghz on PATH)");
  const command = serviceCommand();
  const serviceEnv = { ...env, ...command.env };
  const runs = options.overloadRuns;
  const estimate = estimateSeconds(overload, drivers.length, runs, options.tight ? 1 : 0);
  const m = machineFacts(dbUri, SERVER_CORE);
  console.log("docflow-api bench --overload");
  console.log(
    `  node ${m.node}; ${m.cpu}; ${m.cores} cores; ${m.memoryGb} GB; load ${m.loadAverage.join(" ")}`,
  );
  console.log(
    `  ${goToolVersion(vegeta)} (-max-workers=${overload.maxWorkers}, a 12 s client timeout); wrk ${wrk}; ${ghz ? `${goToolVersion(ghz)} (--rps --async, 16 connections)` : "ghz not on PATH (gRPC skipped)"}`,
  );
  console.log(
    `  each server${external ? "" : " and the embedded database"} on core ${SERVER_CORE}, the load and the bench on core ${LOAD_CORE}${hasTaskset ? " (taskset)" : " (no taskset: not pinned)"}`,
  );
  console.log(
    `  ${runs} run${runs === 1 ? "" : "s"} of: ${drivers.map((d) => (d.protocol === "http" ? "HTTP/1.1 legacy GetSubscriptions JSON" : "gRPC GetCounteragentsFromGroup (pages of 100)")).join(", ")}; capacity ${overload.capacityWarmupSeconds} s warm-up + ${overload.capacitySeconds} s; spikes of ${seconds} s at ${options.multiples.join("x, ")}x, each after ${overload.bareSeconds} s of the same rate on the bare refuser; the quiet client at 0.2x beside a flood at ${options.floodMultiples.join("x, ")}x${options.tight ? "; the tight baseline once, in the first run" : ""}`,
  );
  console.log(`  about ${Math.round(estimate / 60)} minutes`);

  // The bare refusers, as the service runs: its node, its flags, its environment.
  const flags = command.argv.slice(1, -1);
  const bareArgv = [process.execPath, ...flags, "--import", "tsx", script("bare.ts")];
  const bare = new Map<string, Server>();
  for (const driver of drivers) {
    bare.set(
      driver.protocol,
      await startServer(
        `bare-${driver.protocol}`,
        bareArgv,
        { ...serviceEnv, BARE: driver.protocol },
        ROOT,
      ),
    );
  }
  const dbPid = embedded?.pid;
  const results: ProtocolRun[] = [];
  for (let run = 1; run <= runs; run++) {
    console.log(`\nrun ${run} of ${runs} (${((Date.now() - started) / 1000).toFixed(0)} s so far)`);
    const sides: {
      name: string;
      argv: (p: "http" | "grpc") => string[];
      env: NodeJS.ProcessEnv;
    }[] = [{ name: "service", argv: () => command.argv, env: serviceEnv }];
    if (options.tight && run === 1) {
      sides.push({
        name: "tight",
        argv: (protocol) => floorCommand(command, protocol),
        env: { ...serviceEnv, FLOOR: "tight" },
      });
    }
    for (const side of sides) {
      for (const driver of drivers) {
        const server = await startServer(
          `${side.name}-${driver.protocol}`,
          side.argv(driver.protocol),
          side.env,
          ROOT,
        );
        try {
          results.push(
            await protocolRun(
              driver,
              { side: side.name, server, dbPid },
              bare.get(driver.protocol),
              overload,
              run,
            ),
          );
        } finally {
          await stopServer(server);
        }
      }
    }
  }
  printSummary(results);
  console.log("\ngoals of issue 41 (the service; every run):");
  for (const line of overloadGoals(results)) console.log(`  ${line}`);
  console.log(
    `total time ${((Date.now() - started) / 1000).toFixed(0)} s (estimated ${estimate.toFixed(0)} s)`,
  );
  if (options.jsonFile) {
    writeFileSync(
      options.jsonFile,
      `${JSON.stringify(
        {
          date: new Date().toISOString(),
          machine: machineFacts(dbUri, SERVER_CORE),
          overload: { ...overload, runs, protocols: drivers.map((d) => d.protocol) },
          runs: results,
          goals: overloadGoals(results),
        },
        null,
        2,
      )}\n`,
    );
    console.log(`results written to ${options.jsonFile}`);
  }
}

/** The tools that drive the load, and the database process whose CPU is counted. */
interface Tools {
  readonly ghz: string | undefined;
  readonly ghzFiles: GhzFiles | undefined;
  /** BENCH_HTTP_GENERATOR=wrk: wrk's path and each HTTP scenario's Lua script. */
  readonly wrk:
    | { readonly path: string; readonly scripts: ReadonlyMap<string, string> }
    | undefined;
  readonly dbPid: number | undefined;
}

function generatorNames(tools: Tools): { httpGenerator: string; grpcGenerator: string } {
  return {
    httpGenerator: tools.wrk
      ? `wrk (${tools.wrk.path}), 1 thread, HTTP/1.1 keep-alive, 1 request in flight per connection`
      : `autocannon ${packageVersion("autocannon")} (HTTP/1.1, keep-alive, 1 request in flight per connection)`,
    grpcGenerator: tools.ghz
      ? `ghz (${tools.ghz}), concurrency = connections`
      : "grpc-js load-grpc.ts (1 call in flight per HTTP/2 connection)",
  };
}

/** --against REV: this checkout's service and the one at REV. */
function againstVariants(rev: string, dir: string): Variant[] {
  const here = serviceCommand();
  const there = serviceAt(rev, dir);
  return [
    { name: "service", env: here.env, command: here.argv },
    { name: `service@${rev}`, env: there.env, command: there.argv, cwd: there.cwd },
  ];
}

/**
 * --closed: the same build with admission on and off. --variant NAME=value:
 * the service as `npm start` runs it, then the same build with each
 * environment difference.
 */
function environmentVariants(options: Options): Variant[] {
  const here = serviceCommand();
  if (options.closed) {
    return [
      { name: "admission-on", env: { ...here.env, ADMISSION_ENABLED: "true" } },
      { name: "admission-off", env: { ...here.env, ADMISSION_ENABLED: "false" } },
    ];
  }
  return [
    { name: "service", env: here.env },
    ...options.variants.map((words): Variant => {
      const name = Object.entries(words)
        .map(([k, v]) => `${k}=${v}`)
        .join(" ");
      return { name: `service ${name}`, env: { ...here.env, ...words } };
    }),
  ];
}

/** A local OTLP receiver that reads and discards every export. */
async function discardingReceiver(): Promise<{ url: string; exports: () => number }> {
  let exports = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      exports++;
      res.writeHead(200, { "content-type": "application/x-protobuf", "content-length": "0" });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  server.unref();
  const { port } = server.address() as import("node:net").AddressInfo;
  return { url: `http://127.0.0.1:${port}`, exports: () => exports };
}

/**
 * Configurations of the service (the four observability ones, or node flag
 * sets), interleaved round by round.
 */
async function variantBench(
  options: Options,
  variants: readonly Variant[],
  env: NodeJS.ProcessEnv,
  started: number,
  tools: Tools,
): Promise<void> {
  const receiver = await discardingReceiver();
  const command = serviceCommand();
  const script = command.argv.at(-1) ?? "";
  const sides: Side[] = [];
  for (const side of variants) {
    const start = () =>
      startServer(
        side.name,
        side.command ??
          (side.nodeFlags ? [process.execPath, ...side.nodeFlags, script] : command.argv),
        // Only the observability variants send traces (to the discarding receiver); a
        // node flag variant runs with exactly the environment its words give.
        options.observability
          ? { ...env, ...command.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...side.env }
          : { ...env, ...side.env },
        side.cwd ?? ROOT,
      );
    const started: Side = {
      name: side.name,
      server: await start(),
      restart: async () => {
        await stopServer(started.server);
        started.server = await start();
      },
    };
    sides.push(started);
  }
  const { httpGenerator, grpcGenerator } = generatorNames(tools);
  console.log(
    `
compared: ${sides.map((s) => s.name).join(", ")}; interleaved, ${options.rounds} rounds of ${options.seconds} s; OTLP receiver ${receiver.url} (discards)
HTTP load: ${httpGenerator}; gRPC load: ${grpcGenerator}; load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  // Identical answers first: variants that answer differently measure different work.
  console.log("\nanswers, every side vs the first:");
  const [first, ...others] = sides;
  for (const scenario of options.scenarios) {
    for (const other of first ? others : []) {
      const check = scenario.http
        ? await compareHttp(scenario.http, first?.server ?? other.server, other.server)
        : await compareGrpc(first?.server ?? other.server, other.server);
      console.log(`  ${scenario.name.padEnd(22)} ${other.name}: ${check}`);
    }
  }
  const rows: Row[] = [];
  const table = new Table(Math.max(...sides.map((s) => s.name.length)));
  table.header();
  for (const scenario of options.scenarios) {
    for (const connections of options.connections) {
      const group = await interleaved(sides, options, (side, seconds) =>
        runOnce(scenario, side, connections, seconds, tools),
      ).then((results) =>
        sides.map((side) =>
          summarize(scenario.name, connections, side.name, results.get(side.name) ?? []),
        ),
      );
      rows.push(...group);
      table.pair(group);
    }
  }
  table.footer();
  const lines: string[] = [];
  const mark = (ok: boolean) => (ok ? "met " : "MISS");
  for (const scenario of options.observability ? options.scenarios : []) {
    for (const connections of options.connections) {
      const cpu = (side: SideName) =>
        rows.find(
          (r) => r.scenario === scenario.name && r.connections === connections && r.side === side,
        )?.cpuMsPerReq ?? Number.NaN;
      const goals: [string, number, number][] = [
        ["metrics on vs off", cpu("metrics-on") - cpu("metrics-off"), 0.1],
        ["tracing configured, off, vs metrics on", cpu("tracing-off") - cpu("metrics-on"), 0.05],
        ["tracing 100 % vs metrics on", cpu("tracing-100") - cpu("metrics-on"), 0.4],
      ];
      for (const [what, delta, goal] of goals) {
        lines.push(
          `  ${mark(delta <= goal)} ${scenario.name} @${connections}: ${what}: ${delta >= 0 ? "+" : ""}${fmt(delta, 3)} ms CPU/call (goal <= +${goal})`,
        );
      }
    }
  }
  if (options.observability) {
    console.log("\ngoals (medians of server CPU per call):");
    for (const line of lines) console.log(line);
    console.log(`OTLP exports received and discarded: ${receiver.exports()}`);
  }
  const environments = options.closed || options.variants.length > 0;
  const comparisons = environments ? compare(rows) : [];
  if (environments) {
    printComparisons(comparisons);
    console.log(
      options.closed
        ? "\ngoals of issue 41, closed loop (admission on against off, same build):"
        : "\nthe cost at normal load (issue 41: within 3 % per call):",
    );
    for (const line of options.closed ? closedGoals(comparisons) : costGoals(comparisons)) {
      console.log(`  ${line}`);
    }
  }
  console.log(`total time ${((Date.now() - started) / 1000).toFixed(0)} s`);
  writeResults(
    options,
    machineFacts(String(env.MONGODB_URI ?? ""), options.databaseCore),
    rows,
    environments ? { comparisons } : {},
  );
}

/**
 * --profile: the service (as `npm start` runs it) and the tight baseline,
 * each with --inspect on a local port, under each scenario's load at the
 * first connection count; a V8 CPU profile of each is taken over the
 * measured run only (through the inspector, after a warm-up). Written to
 * `dir` and printed: the service's top frames by self time, self time by
 * place on both sides (our files, packages, Node's modules, the garbage
 * collector) with the difference, flame graphs (SVG) and the raw profiles.
 */
async function profileBench(
  options: Options,
  dir: string,
  env: NodeJS.ProcessEnv,
  tools: Tools,
): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const command = serviceCommand();
  const [node, ...rest] = command.argv;
  const inspect = "--inspect=127.0.0.1:0";
  const service = await startServer(
    "service",
    [node ?? process.execPath, inspect, ...rest],
    { ...env, ...command.env },
    ROOT,
  );
  const tight = async (protocol: "http" | "grpc") => {
    const [tsNode, ...tsRest] = floorCommand(command, protocol);
    return startServer(
      `tight-${protocol}`,
      [tsNode ?? process.execPath, inspect, ...tsRest],
      { ...env, ...command.env, FLOOR: "tight" },
      ROOT,
    );
  };
  const tightHttp = options.scenarios.some((s) => s.http) ? await tight("http") : undefined;
  const tightGrpc = options.scenarios.some((s) => !s.http) ? await tight("grpc") : undefined;
  const connections = options.connections[0] ?? 32;
  const seconds = options.seconds * options.rounds;
  console.log(
    `CPU profiles of the service and the tight baseline: ${connections} connections, ${options.warmupSeconds} s warm-up, then ${seconds} s profiled (sampling every ${PROFILE_INTERVAL_US} µs); written to ${dir}/`,
  );
  const profiled = async (scenario: Scenario, side: Side) => {
    if (!side.server.inspectorUrl) throw new Error(`${side.name} printed no inspector URL`);
    const inspector = await openInspector(side.server.inspectorUrl);
    try {
      await inspector.send("Profiler.enable");
      await inspector.send("Profiler.setSamplingInterval", { interval: PROFILE_INTERVAL_US });
      if (options.warmupSeconds > 0) {
        await runOnce(scenario, side, connections, options.warmupSeconds, tools);
      }
      await inspector.send("Profiler.start");
      await inspector.send("HeapProfiler.startSampling", {
        samplingInterval: 16_384,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
      const run = await runOnce(scenario, side, connections, seconds, tools);
      const { profile } = (await inspector.send("Profiler.stop")) as { profile: unknown };
      const heap = (await inspector.send("HeapProfiler.stopSampling")) as {
        profile: Parameters<typeof allocationsByPlace>[0];
      };
      const allocations = allocationsByPlace(heap.profile, ROOT);
      const file = join(dir, `${scenario.name}.${side.name}.cpuprofile`);
      writeFileSync(file, JSON.stringify(profile));
      // Chrome DevTools' Memory tab reads it: allocations by stack, sampled.
      writeFileSync(
        join(dir, `${scenario.name}.${side.name}.heapprofile`),
        JSON.stringify(heap.profile),
      );
      const summary = summarizeProfile(
        file,
        ROOT,
        `${side.name}: ${scenario.description}, ${connections} connections: CPU by stack (idle left out)`,
      );
      writeFileSync(join(dir, `${scenario.name}.${side.name}.folded`), summary.folded);
      writeFileSync(join(dir, `${scenario.name}.${side.name}.svg`), summary.svg);
      return { run, summary, allocations };
    } finally {
      inspector.close();
    }
  };
  for (const scenario of options.scenarios) {
    const floor = required(scenario.http ? tightHttp : tightGrpc);
    const ours = await profiled(scenario, { name: "service", server: service });
    const theirs = await profiled(scenario, { name: "tight", server: floor });
    const usOurs = ours.run.cpuMsPerReq * 1000;
    const usTheirs = theirs.run.cpuMsPerReq * 1000;
    const places = [...ours.summary.byPlace.keys(), ...theirs.summary.byPlace.keys()];
    const rowsByPlace = [...new Set(places)]
      .map((place) => {
        const a = (ours.summary.byPlace.get(place) ?? 0) * usOurs;
        const b = (theirs.summary.byPlace.get(place) ?? 0) * usTheirs;
        return { place, a, b };
      })
      .sort((x, y) => y.a - y.b - (x.a - x.b));
    const lines = [
      `${scenario.name}: service ${fmt(ours.run.reqPerS, 0)} req/s, ${fmt(usOurs, 0)} µs CPU per call; tight ${fmt(theirs.run.reqPerS, 0)} req/s, ${fmt(usTheirs, 0)} µs CPU per call`,
      "  self time by place, µs of CPU per call (share of the profile x the process's CPU per call), largest difference first:",
      `    ${"service".padStart(8)} ${"tight".padStart(8)} ${"diff".padStart(8)}  place`,
      ...rowsByPlace
        .slice(0, 18)
        .map(
          (r) =>
            `    ${fmt(r.a, 1).padStart(8)} ${fmt(r.b, 1).padStart(8)} ${fmt(r.a - r.b, 1).padStart(8)}  ${r.place}`,
        ),
      "  allocations by place, bytes per call (sampled), largest difference first:",
      `    ${"service".padStart(8)} ${"tight".padStart(8)} ${"diff".padStart(8)}  place`,
      ...allocationRows(ours, theirs)
        .slice(0, 14)
        .map(
          (r) =>
            `    ${fmt(r.a, 0).padStart(8)} ${fmt(r.b, 0).padStart(8)} ${fmt(r.a - r.b, 0).padStart(8)}  ${r.place}`,
        ),
      `    ${fmt(total(ours), 0).padStart(8)} ${fmt(total(theirs), 0).padStart(8)} ${fmt(total(ours) - total(theirs), 0).padStart(8)}  (all)`,
      admissionLine(ours, usOurs),
      "  the service's top frames by self time:",
      ...ours.summary.topFrames.map(
        (f) =>
          `    ${fmt(f.share * 100, 1).padStart(5)} %  ${fmt(f.share * usOurs, 1).padStart(6)} µs/call  ${f.frame.name}  ${f.frame.where}`,
      ),
    ];
    writeFileSync(join(dir, `${scenario.name}.txt`), `${lines.join("\n")}\n`);
    console.log(`\n${lines.join("\n")}`);
  }
}

interface Profiled {
  readonly run: RunResult;
  readonly summary: ProfileSummary;
  readonly allocations: ReadonlyMap<string, number>;
}

/** Bytes allocated per call by place on both sides, largest difference first. */
function allocationRows(ours: Profiled, theirs: Profiled) {
  const perCall = (p: Profiled, place: string) =>
    (p.allocations.get(place) ?? 0) / Math.max(1, p.run.requests);
  return [...new Set([...ours.allocations.keys(), ...theirs.allocations.keys()])]
    .map((place) => ({ place, a: perCall(ours, place), b: perCall(theirs, place) }))
    .sort((x, y) => y.a - y.b - (x.a - x.b));
}

const total = (p: Profiled) =>
  [...p.allocations.values()].reduce((a, b) => a + b, 0) / Math.max(1, p.run.requests);

/** Admission's code: the gate and the controller (docs/performance.md, "What admission's own code costs"). */
const isAdmission = (place: string) =>
  place.startsWith("src/admission/") || place === "src/http/admission.ts";

/**
 * What admission's own code costs the service per call: its files' time with
 * what they call in packages and Node (the profile's owners), and the bytes
 * they allocate, which the garbage collector pays for.
 */
function admissionLine(p: Profiled, usPerCall: number): string {
  let share = 0;
  for (const [place, s] of p.summary.byOwner) if (isAdmission(place)) share += s;
  let bytes = 0;
  for (const [place, b] of p.allocations) if (isAdmission(place)) bytes += b;
  const perCall = bytes / Math.max(1, p.run.requests);
  return `  admission's own code (src/admission/, src/http/admission.ts, with what it calls in packages and Node): ${fmt(share * 100, 2)} % of the profile, ${fmt(share * usPerCall, 1)} µs per call; ${fmt(perCall, 0)} bytes allocated per call (${fmt((100 * perCall) / Math.max(1, total(p)), 2)} % of all)`;
}

/** Sampling interval of --profile, in microseconds (V8's default is 1000). */
const PROFILE_INTERVAL_US = 250;

/** A Chrome DevTools Protocol session over the inspector's WebSocket. */
async function openInspector(url: string): Promise<{
  send(method: string, params?: Record<string, unknown>): Promise<unknown>;
  close(): void;
}> {
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener("open", () => resolve(), { once: true });
    socket.addEventListener("error", () => reject(new Error(`no inspector at ${url}`)), {
      once: true,
    });
  });
  let next = 0;
  const pending = new Map<
    number,
    (message: { result?: unknown; error?: { message: string } }) => void
  >();
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as {
      id?: number;
      result?: unknown;
      error?: { message: string };
    };
    if (message.id !== undefined) pending.get(message.id)?.(message);
  });
  return {
    send: (method, params) =>
      new Promise((resolve, reject) => {
        const id = ++next;
        pending.set(id, (message) => {
          pending.delete(id);
          if (message.error) reject(new Error(`${method}: ${message.error.message}`));
          else resolve(message.result);
        });
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
}

function required<T>(value: T | undefined): T {
  if (value === undefined) throw new Error("a server the scenario needs was not started");
  return value;
}

// ---------------------------------------------------------------- one run

/**
 * A warm-up per side, then `rounds` rounds of every side, the order turned
 * by one each round (A B, B A, … ; A B C, B C A, C A B, …), so that no side
 * is always first: in a fixed order, admission on (always first in
 * `--closed`) measured 1.10–1.19× the CPU per call of off, and 0.99× in
 * another order (docs/performance.md). With `fresh` (--fresh), every side is
 * started anew and warmed up again before each round: a process's own luck
 * (its JIT's choices) lasts one round, not all of them. Each side's results.
 */
async function interleaved(
  sides: readonly Side[],
  options: Pick<Options, "warmupSeconds" | "rounds" | "seconds" | "fresh">,
  run: (side: Side, seconds: number) => Promise<RunResult>,
): Promise<Map<SideName, RunResult[]>> {
  const warmUp = async (order: readonly Side[]) => {
    if (options.warmupSeconds > 0) {
      for (const side of order) await run(side, options.warmupSeconds);
    }
  };
  // Only sides that can be started anew (--variant, --closed) are.
  const fresh = options.fresh && sides.every((side) => side.restart !== undefined);
  if (!fresh) await warmUp(sides);
  const results = new Map<SideName, RunResult[]>(sides.map((s) => [s.name, []]));
  for (let round = 0; round < options.rounds; round++) {
    const order = sides.map((_, i) => sides[(round + i) % sides.length] as Side);
    if (fresh) {
      // New processes, warmed up again: no process's luck lasts more than one round. The
      // warm-up in the round's order too: warmed always A then B, A measured 3-8 % above
      // an identical B in an A/A run (docs/performance.md).
      for (const side of order) await side.restart?.();
      await warmUp(order);
    }
    for (const side of order) results.get(side.name)?.push(await run(side, options.seconds));
  }
  return results;
}

async function runOnce(
  scenario: Scenario,
  side: Side,
  connections: number,
  seconds: number,
  tools: Tools,
): Promise<RunResult> {
  const { pid, url } = side.server;
  const target = new URL(url).host;
  let argv: string[];
  let startLine: string | undefined = START_LINE;
  let parse = lastJsonLine;
  const wrkScript = tools.wrk?.scripts.get(scenario.name);
  if (scenario.http && tools.wrk && wrkScript) {
    argv = wrkArgs(tools.wrk.path, wrkScript, `${url}${scenario.http.path}`, connections, seconds);
    startLine = undefined;
  } else if (scenario.http) {
    argv = [
      ...NODE_TS,
      script("load-http.ts"),
      JSON.stringify({
        url: `${url}${scenario.http.path}`,
        connections,
        seconds,
        method: scenario.http.method,
        headers: scenario.http.headers,
        bodyBase64: scenario.http.bodyBase64,
      }),
    ];
  } else if (tools.ghz && tools.ghzFiles) {
    argv = ghzArgs(
      tools.ghz,
      tools.ghzFiles,
      target,
      "docflow.api.v1.CounteragentService/GetCounteragentsFromGroup",
      AUTHORIZATION,
      connections,
      seconds,
    );
    startLine = undefined;
    parse = parseGhz;
  } else {
    argv = [
      ...NODE_TS,
      script("load-grpc.ts"),
      JSON.stringify({
        target,
        connections,
        seconds,
        path: CONNECT_PATH,
        requestBase64: Buffer.from(groupRequestBytes()).toString("base64"),
        authorization: AUTHORIZATION,
      }),
    ];
  }

  let cpuStart = 0;
  let cpuEnd = 0;
  let helpersStart = 0;
  let helpersEnd = 0;
  let dbStart = 0;
  let dbEnd = 0;
  let rssMax = 0;
  const sampleRss = () => {
    try {
      rssMax = Math.max(rssMax, rssMb(pid));
    } catch {
      // The server is gone (Ctrl-C stops every child): its largest size so far stands.
    }
  };
  const before = await serverCounts(side.server);
  const sampler = setInterval(sampleRss, 200);
  try {
    const result: LoadResult = await runLoadGenerator(argv, ROOT, {
      startLine,
      onStart: () => {
        cpuStart = cpuOf(pid);
        helpersStart = helpersCpuOf(pid);
        dbStart = tools.dbPid === undefined ? 0 : cpuOf(tools.dbPid);
        sampleRss();
      },
      onEnd: () => {
        cpuEnd = cpuOf(pid);
        helpersEnd = helpersCpuOf(pid);
        dbEnd = tools.dbPid === undefined ? 0 : cpuOf(tools.dbPid);
        sampleRss();
      },
      parse,
    });
    const requests = Math.max(1, result.requests);
    const after = await serverCounts(side.server);
    return {
      commandsPerReq: (after.commands - before.commands) / requests,
      reqPerS: result.requests / result.durationS,
      p50Ms: result.p50Ms,
      p99Ms: result.p99Ms,
      cpuMsPerReq: (cpuEnd - cpuStart) / requests,
      helperCpuMsPerReq: (helpersEnd - helpersStart) / requests,
      dbCpuMsPerReq: tools.dbPid === undefined ? Number.NaN : (dbEnd - dbStart) / requests,
      rssMaxMb: rssMax,
      requests: result.requests,
      failed: result.failed,
      okPerS: result.ok / result.durationS,
      refused: after.refused - before.refused,
      generator: result.generator,
    };
  } finally {
    clearInterval(sampler);
  }
}

/** A process's CPU time so far; NaN once it is gone (Ctrl-C stops every child mid-run). */
function cpuOf(pid: number): number {
  try {
    return cpuMs(pid);
  } catch {
    return Number.NaN;
  }
}

/** The CPU time so far of a process's V8 helper threads; NaN once it is gone. */
function helpersCpuOf(pid: number): number {
  try {
    return cpuByThreadMs(pid).helpers;
  } catch {
    return Number.NaN;
  }
}

function lastJsonLine(stdout: string): LoadResult {
  const line = stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .at(-1);
  if (line === undefined) throw new Error("no result line");
  return JSON.parse(line) as LoadResult;
}

function summarize(
  scenario: string,
  connections: number,
  side: SideName,
  rounds: readonly RunResult[],
): Row {
  return {
    scenario,
    connections,
    side,
    reqPerS: median(rounds.map((r) => r.reqPerS)),
    p50Ms: median(rounds.map((r) => r.p50Ms)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    cpuMsPerReq: median(rounds.map((r) => r.cpuMsPerReq)),
    helperCpuMsPerReq: median(rounds.map((r) => r.helperCpuMsPerReq)),
    dbCpuMsPerReq: median(rounds.map((r) => r.dbCpuMsPerReq)),
    rssMaxMb: Math.max(...rounds.map((r) => r.rssMaxMb)),
    commandsPerReq: median(rounds.map((r) => r.commandsPerReq)),
    failed: rounds.reduce((sum, r) => sum + r.failed, 0),
    rounds,
  };
}

/** Commands the driver's command monitoring did not count as a call's round trip. */
const HOUSEKEEPING = new Set(["hello", "ping", "endSessions", "_OTHER"]);

/**
 * Database commands a server has sent so far: a floor's own count, or the
 * service's db_client_operation_duration_seconds_count on /metrics summed
 * over every operation but the driver's housekeeping (a scrape's readiness
 * ping among them). NaN when the server cannot tell (metrics off, or a
 * build from before the database metrics). And the calls its admission has
 * refused so far (docflow_admission_refusals_total, every reason and
 * client): 0 for a floor, which admits everything; NaN when it cannot tell.
 */
async function serverCounts(server: Server): Promise<{ commands: number; refused: number }> {
  const response = await fetch(server.commandsUrl ?? `${server.url}/metrics`).catch(
    () => undefined,
  );
  if (!response?.ok) return { commands: Number.NaN, refused: Number.NaN };
  const text = await response.text();
  if (server.commandsUrl) return { commands: Number(text), refused: 0 };
  let commands = 0;
  let refused = 0;
  for (const line of text.split("\n")) {
    const match = /^db_client_operation_duration_seconds_count\{(.*)\} (\d+)$/.exec(line);
    const operation = match?.[1] && /db_operation_name="([^"]*)"/.exec(match[1])?.[1];
    if (match?.[2] && operation && !HOUSEKEEPING.has(operation)) commands += Number(match[2]);
    const refusal =
      /^docflow_admission_refusals_total(?:\{.*\})? (\d+(?:\.\d+)?(?:e\+?\d+)?)$/.exec(line);
    if (refusal?.[1]) refused += Number(refusal[1]);
  }
  return {
    // An older build has no database metrics.
    commands: text.includes("db_client_operation_duration_seconds") ? commands : Number.NaN,
    refused: text.includes("docflow_admission_refusals_total") ? refused : Number.NaN,
  };
}

// ---------------------------------------------------------------- identical answers

interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly body: Buffer;
}

function fetchOnce(base: string, call: HttpCall): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = call.bodyBase64 === undefined ? undefined : Buffer.from(call.bodyBase64, "base64");
    const req = http.request(
      `${base}${call.path}`,
      {
        method: call.method,
        headers: { ...call.headers, ...(body ? { "content-length": body.length } : {}) },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: res.headers["content-type"] ?? "",
            body: Buffer.concat(chunks),
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

function grpcOnce(server: Server): Promise<Buffer> {
  const client = new grpc.Client(new URL(server.url).host, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  metadata.set("authorization", AUTHORIZATION);
  const identity = (b: Buffer) => b;
  return new Promise<Buffer>((resolve, reject) => {
    client.makeUnaryRequest(
      CONNECT_PATH,
      identity,
      identity,
      Buffer.from(groupRequestBytes()),
      metadata,
      (error: grpc.ServiceError | null, value?: Buffer) => {
        if (error || !value)
          reject(new Error(`${server.name}: gRPC call failed: ${error?.message}`));
        else resolve(value);
      },
    );
  }).finally(() => client.close());
}

async function compareHttp(call: HttpCall, one: Server, other: Server): Promise<string> {
  const [a, b] = [await fetchOnce(one.url, call), await fetchOnce(other.url, call)];
  const problems: string[] = [];
  if (a.status !== 200 || b.status !== 200) {
    problems.push(`status ${one.name} ${a.status}, ${other.name} ${b.status}`);
  }
  if (a.contentType !== b.contentType) {
    problems.push(`content-type ${one.name} "${a.contentType}", ${other.name} "${b.contentType}"`);
  }
  if (!a.body.equals(b.body)) {
    problems.push(
      `bodies differ:\n    ${one.name} ${preview(a.body)}\n    ${other.name} ${preview(b.body)}`,
    );
  }
  if (problems.length > 0) {
    throw new Error(`${call.method} ${call.path}: ${problems.join("; ")}`);
  }
  return `identical: 200, ${a.contentType}, ${a.body.length} bytes`;
}

async function compareGrpc(one: Server, other: Server): Promise<string> {
  const [a, b] = [await grpcOnce(one), await grpcOnce(other)];
  if (!a.equals(b)) {
    throw new Error(
      `gRPC answers differ:\n    ${one.name} ${preview(a)}\n    ${other.name} ${preview(b)}`,
    );
  }
  return `identical: OK, ${a.length} bytes of CounteragentFromGroupResponse`;
}

function preview(body: Buffer): string {
  const text = body.toString("utf8");
  return /^[\x20-\x7e]*$/.test(text) ? text.slice(0, 300) : body.toString("hex").slice(0, 300);
}

// ---------------------------------------------------------------- output

function packageVersion(name: string): string {
  try {
    const pkg = JSON.parse(
      readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8"),
    ) as { version?: string };
    return pkg.version ?? "?";
  } catch {
    return "?";
  }
}

function machineFacts(dbUri: string, databaseCore: number) {
  const cpus = os.cpus();
  return {
    node: process.version,
    cpu: cpus[0]?.model ?? "unknown",
    cores: cpus.length,
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
    engine: external
      ? `MONGODB_URI (${dbUri.replace(/\/\/[^@/]*@/, "//***@")})`
      : "embedded (jongodb: every query is a full collection scan)",
    pinning: hasTaskset
      ? external || databaseCore === SERVER_CORE
        ? `servers${external ? "" : " + embedded database"} on core ${SERVER_CORE}, load generators + bench on core ${LOAD_CORE} (taskset)`
        : `servers on core ${SERVER_CORE}, embedded database + load generators + bench on core ${LOAD_CORE} (taskset)`
      : "none (taskset not found)",
  };
}

function printMachine(
  options: Options,
  dbUri: string,
  g: { httpGenerator: string; grpcGenerator: string; needsHttp: boolean; needsGrpc: boolean },
): void {
  const m = machineFacts(dbUri, options.databaseCore);
  console.log("docflow-api bench");
  console.log(
    `  node ${m.node}; ${m.cpu}; ${m.cores} cores; ${m.memoryGb} GB; load ${m.loadAverage.join(" ")}`,
  );
  console.log(`  database: ${m.engine}`);
  console.log(`  pinning: ${m.pinning}`);
  console.log(
    `  data: 1 box, group of ${BENCH.members} IsMyCounteragent members, page count=${BENCH.count}; service LOG_LEVEL=info`,
  );
  if (g.needsHttp) console.log(`  HTTP load: ${g.httpGenerator}`);
  if (g.needsGrpc) console.log(`  gRPC load: ${g.grpcGenerator}`);
  console.log(
    `  runs: ${options.warmupSeconds} s warm-up per side, then ${options.rounds} rounds of ${options.seconds} s, service and floor interleaved; connections ${options.connections.join(", ")}`,
  );
  console.log(
    "  req/s, p50, p99, CPU: median of rounds; CPU = the server process's own utime+stime / responses; DB = embedded engine's CPU / responses; RSS = max VmRSS",
  );
}

const fmt = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : "-");

class Table {
  private readonly widths: number[];

  /** `sideWidth`: the longest side's name (--variant names sides after their environment). */
  constructor(sideWidth = 16) {
    this.widths = [22, 6, Math.max(16, sideWidth), 9, 8, 8, 11, 10, 8, 9];
  }

  private line(cells: string[]): void {
    console.log(
      cells
        .map((c, i) =>
          i === 0 || i === 2 ? c.padEnd(this.widths[i] ?? 8) : c.padStart(this.widths[i] ?? 8),
        )
        .join(" "),
    );
  }

  header(): void {
    console.log("");
    this.line([
      "scenario",
      "conns",
      "side",
      "req/s",
      "p50 ms",
      "p99 ms",
      "CPU ms/req",
      "DB ms/req",
      "RSS MB",
      "cmds/req",
    ]);
    console.log("-".repeat(100 + (this.widths[2] ?? 16)));
  }

  /** One scenario at one connection count: every side, then the first side against each other. */
  pair(rows: readonly Row[]): void {
    for (const r of rows) {
      this.line([
        r.scenario,
        String(r.connections),
        r.side,
        fmt(r.reqPerS, 0),
        fmt(r.p50Ms, 1),
        fmt(r.p99Ms, 1),
        fmt(r.cpuMsPerReq, 3),
        fmt(r.dbCpuMsPerReq, 3),
        fmt(r.rssMaxMb, 0),
        fmt(r.commandsPerReq, 2),
      ]);
      if (r.failed > 0)
        console.log(`  !! ${r.side}: ${r.failed} failed calls in the measured rounds`);
    }
    const [first, ...others] = rows;
    for (const other of first ? others : []) {
      console.log(`${"".padEnd(31)}${first?.side}/${other.side}: ${ratios(first as Row, other)}`);
    }
  }

  footer(): void {
    console.log("-".repeat(100 + (this.widths[2] ?? 16)));
  }
}

function ratios(a: Row, b: Row): string {
  const main = (r: Row) => r.cpuMsPerReq - r.helperCpuMsPerReq;
  return `req/s x${fmt(a.reqPerS / b.reqPerS, 2)}, CPU/req x${fmt(a.cpuMsPerReq / b.cpuMsPerReq, 2)} (main thread ${fmt(main(a) * 1000, 0)} vs ${fmt(main(b) * 1000, 0)} µs, V8 helper threads ${fmt(a.helperCpuMsPerReq * 1000, 0)} vs ${fmt(b.helperCpuMsPerReq * 1000, 0)} µs), p50 x${fmt(a.p50Ms / b.p50Ms, 2)}, p99 x${fmt(a.p99Ms / b.p99Ms, 2)}`;
}

/**
 * Issue 28's goals against the tight baseline, on every scenario at every
 * connection count: server CPU per call at most 1.25x, throughput at least
 * 0.8x, p99 at most 1.1x; and the service's RSS under 200 MB at 256.
 */
function printGoals(rows: readonly Row[]): void {
  const find = (scenario: string, connections: number, side: SideName) =>
    rows.find((r) => r.scenario === scenario && r.connections === connections && r.side === side);
  const lines: string[] = [];
  const mark = (ok: boolean) => (ok ? "met " : "MISS");
  for (const scenario of new Set(rows.map((r) => r.scenario))) {
    for (const connections of new Set(rows.map((r) => r.connections))) {
      const s = find(scenario, connections, "service");
      const t = find(scenario, connections, "tight");
      if (!s || !t) continue;
      const cpu = s.cpuMsPerReq / t.cpuMsPerReq;
      const throughput = s.reqPerS / t.reqPerS;
      const p99 = s.p99Ms / t.p99Ms;
      const at = `${scenario} @${connections}`.padEnd(28);
      lines.push(
        `  ${mark(cpu <= 1.25)} ${at} CPU/call x${fmt(cpu, 2)} (<= 1.25)  ${mark(throughput >= 0.8)} req/s x${fmt(throughput, 2)} (>= 0.8)  ${mark(p99 <= 1.1)} p99 x${fmt(p99, 2)} (<= 1.1)  commands/call ${fmt(s.commandsPerReq, 2)} vs ${fmt(t.commandsPerReq, 2)}`,
      );
    }
  }
  const at256 = rows.filter((r) => r.side === "service" && r.connections === 256);
  if (at256.length > 0) {
    const rss = Math.max(...at256.map((r) => r.rssMaxMb));
    lines.push(`  ${mark(rss < 200)} service RSS @256: max ${fmt(rss, 0)} MB (goal < 200)`);
  }
  if (lines.length > 0) {
    console.log("\ngoals, service against the tight baseline (medians of rounds):");
    for (const line of lines) console.log(line);
  }
}

main()
  .catch((error: unknown) => {
    if (!interrupted) {
      console.error(`\nbench failed: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    }
  })
  .finally(() => {
    if (!interrupted) void cleanup().finally(() => process.exit());
  });
