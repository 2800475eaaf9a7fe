/**
 * The benchmark's child processes: servers pinned to one core and load
 * generators to the other (taskset, when the machine has it), every child
 * tracked so that all of them are stopped on exit, on error and on SIGINT.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { accessSync, appendFileSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

export const SERVER_CORE = 0;
export const LOAD_CORE = 1;

const children = new Set<ChildProcess>();

/** Finds an executable on PATH, like `which`. */
export function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

export const hasTaskset = onPath("taskset") !== undefined;

/** The command line that runs `argv` on one core (or anywhere without taskset). */
export function pinned(core: number, argv: readonly string[]): string[] {
  return hasTaskset ? ["taskset", "-c", String(core), ...argv] : [...argv];
}

/** Moves a running process, all its threads, to one core. */
export function pinProcess(pid: number, core: number): void {
  if (hasTaskset) {
    execFileSync("taskset", ["-a", "-p", "-c", String(core), String(pid)], { stdio: "ignore" });
  }
}

export interface Server {
  readonly name: string;
  /** The server's own process (taskset execs it, so no wrapper in between). */
  readonly pid: number;
  /** http://host:port, as the server printed it. */
  readonly url: string;
  /** Lines the server wrote on stdout (the service: one log line per request). */
  stdoutLines(): number;
  /** The service's warn and error log lines so far, and the first few error lines themselves. */
  logProblems(): { warn: number; error: number; firstErrors: readonly string[] };
  /**
   * Where a floor tells how many database commands it has sent ("commands on
   * http://…", printed before "listening on"); the service tells it on /metrics.
   */
  readonly commandsUrl: string | undefined;
  /** The inspector's WebSocket, when the server runs with --inspect (the bench's --profile). */
  readonly inspectorUrl: string | undefined;
}

const WARN = Buffer.from('"level":"warn"');
const ERROR = Buffer.from('"level":"error"');

/** How many times `needle` occurs in `haystack`. */
function count(haystack: Buffer, needle: Buffer): number {
  let n = 0;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + 1)) n++;
  return n;
}

const LISTENING = /listening on (http:\/\/\S+)/;
const COMMANDS = /commands on (http:\/\/\S+)/;
const INSPECTOR = /Debugger listening on (ws:\/\/\S+)/;
const START_TIMEOUT_MS = 60_000;

/** Starts a server and waits for its "listening on http://…" line on stderr. */
export function startServer(
  name: string,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<Server> {
  const [command, ...args] = pinned(SERVER_CORE, argv);
  const child = spawn(command ?? "node", args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  child.once("exit", () => children.delete(child));
  let lines = 0;
  const problems = { warn: 0, error: 0, firstErrors: [] as string[] };
  let partial: Buffer = Buffer.alloc(0);
  // Read and dropped, as a log collector would; counted to show logging was on, and its
  // warn and error lines counted (structured JSON lines, src/log.ts).
  child.stdout?.on("data", (chunk: Buffer) => {
    let end = -1;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) {
      lines++;
      end = i;
    }
    const text = partial.length > 0 ? Buffer.concat([partial, chunk]) : chunk;
    const whole = end === -1 ? 0 : partial.length + end + 1;
    partial = Buffer.from(text.subarray(whole).subarray(-65_536));
    if (whole === 0) return;
    const done = text.subarray(0, whole);
    if (done.includes(WARN)) {
      problems.warn += count(done, WARN);
      // BENCH_WARN_LOG=file: the warn lines themselves, appended (admission's refusal summaries).
      const file = process.env.BENCH_WARN_LOG;
      if (file) {
        const warns = done
          .toString("utf8")
          .split("\n")
          .filter((line) => line.includes('"level":"warn"'));
        appendFileSync(file, warns.map((line) => `${line}\n`).join(""));
      }
    }
    if (!done.includes(ERROR)) return;
    for (const line of done.toString("utf8").split("\n")) {
      if (!line.includes('"level":"error"')) continue;
      problems.error++;
      if (problems.firstErrors.length < 5) problems.firstErrors.push(line.slice(0, 600));
    }
  });
  return new Promise((resolve, reject) => {
    let stderr = "";
    let found = false;
    const timer = setTimeout(
      () => fail(new Error(`${name} did not start in time`)),
      START_TIMEOUT_MS,
    );
    const fail = (error: Error) => {
      clearTimeout(timer);
      reject(new Error(`${error.message}\n--- ${name} stderr ---\n${stderr.slice(-4000)}`));
    };
    child.stderr?.on("data", (chunk: Buffer) => {
      if (found) return;
      stderr += chunk.toString("utf8");
      const match = LISTENING.exec(stderr);
      if (match?.[1] && child.pid !== undefined) {
        found = true;
        clearTimeout(timer);
        resolve({
          name,
          pid: child.pid,
          url: match[1],
          stdoutLines: () => lines,
          logProblems: () => ({ ...problems, firstErrors: [...problems.firstErrors] }),
          commandsUrl: COMMANDS.exec(stderr)?.[1],
          inspectorUrl: INSPECTOR.exec(stderr)?.[1],
        });
      }
    });
    child.once("error", (error) => fail(error));
    child.once("exit", (code, signal) => {
      if (!found) fail(new Error(`${name} exited during start-up (${signal ?? code})`));
    });
  });
}

export interface LoadHooks<T> {
  /** Printed by the generator when its load begins; undefined: it begins at spawn. */
  readonly startLine: string | undefined;
  /** Called when the load begins. */
  readonly onStart: () => void;
  /** Called when the result starts to arrive (the first "{" after the start). */
  readonly onEnd: () => void;
  /** Reads the generator's whole stdout once it has exited. */
  readonly parse: (stdout: string) => T;
}

/** Runs a load generator, pinned to the load core, to its end. */
export function runLoadGenerator<T>(
  argv: readonly string[],
  cwd: string,
  hooks: LoadHooks<T>,
): Promise<T> {
  const { startLine, onStart, onEnd, parse } = hooks;
  const [command, ...args] = pinned(LOAD_CORE, argv);
  const child = spawn(command ?? "node", args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  let stdout = "";
  let stderr = "";
  let started = startLine === undefined;
  let ended = false;
  if (started) onStart();
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
    if (!started && startLine !== undefined && stdout.includes(`${startLine}\n`)) {
      started = true;
      onStart();
    }
    const after = startLine === undefined ? stdout : stdout.split(`${startLine}\n`)[1];
    if (started && !ended && after?.includes("{")) {
      ended = true;
      onEnd();
    }
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      children.delete(child);
      if (!ended) onEnd();
      if (code !== 0) {
        reject(
          new Error(`load generator ${argv.join(" ")} failed (${signal ?? code}):\n${stderr}`),
        );
        return;
      }
      try {
        resolve(parse(stdout));
      } catch (error) {
        reject(
          new Error(
            `load generator output unreadable (${error instanceof Error ? error.message : error}):\n${stdout.slice(-2000)}\n${stderr}`,
          ),
        );
      }
    });
  });
}

/** SIGTERM to one server, SIGKILL if it is still there after a while. */
export function stopServer(server: Server, timeoutMs = 5_000): Promise<void> {
  return stopAll(timeoutMs, server.pid);
}

/** SIGTERM to every child still running (or only to `pid`), SIGKILL to those still there after a while. */
export async function stopAll(timeoutMs = 5_000, pid?: number): Promise<void> {
  const running = [...children].filter(
    (c) => c.exitCode === null && c.signalCode === null && (pid === undefined || c.pid === pid),
  );
  await Promise.all(
    running.map(
      (child) =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
          child.once("exit", () => {
            clearTimeout(timer);
            children.delete(child);
            resolve();
          });
          child.kill("SIGTERM");
        }),
    ),
  );
}

/** Last resort when the bench exits without cleaning up: nothing may outlive it. */
export function killAllNow(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}
