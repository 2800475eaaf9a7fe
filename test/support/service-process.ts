/**
 * The service as a real process (`node --import tsx src/main.ts` by default,
 * or e.g. `npm start`), in a process group of its own, with its output kept.
 * `useServiceProcesses()` kills whatever a test started, group and all.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { afterEach } from "vitest";

export interface Started {
  readonly child: ChildProcess;
  /** "" when the service exited before listening. */
  readonly baseUrl: string;
  stderr(): string;
  stdout(): string;
  readonly exited: Promise<number | null>;
  /** Resolves once the output matches `pattern` (a causal wait: no sleep); rejects if the process exits first. */
  waitFor(output: "stdout" | "stderr", pattern: RegExp): Promise<void>;
}

export const DIRECT = ["node", "--import", "tsx", "src/main.ts"];

const children: ChildProcess[] = [];

/** Adds a process started by hand to the ones killed after each test. */
export function track(child: ChildProcess): void {
  children.push(child);
}

/** Kills every service a test of this file started, after each test. */
export function useServiceProcesses(): void {
  afterEach(() => {
    for (const c of children.splice(0)) {
      if (c.exitCode === null && c.pid !== undefined) {
        try {
          process.kill(-c.pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    }
  });
}

/** Starts it on a free port with no MONGODB_URI, NODE_ENV or OTEL_* of the caller's, and no drain. */
export function startService(
  env: Record<string, string> = {},
  command: readonly string[] = DIRECT,
): Promise<Started> {
  const { MONGODB_URI: _, NODE_ENV: __, ...base } = process.env;
  for (const name of Object.keys(base)) if (name.startsWith("OTEL_")) delete base[name];
  const [file = "node", ...args] = command;
  const child = spawn(file, args, {
    env: { ...base, PORT: "0", SHUTDOWN_DRAIN_MS: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  children.push(child);
  let out = "";
  let err = "";
  child.stdout?.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => resolve(code)),
  );
  const waitFor = (output: "stdout" | "stderr", pattern: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const stream = output === "stdout" ? child.stdout : child.stderr;
      const text = () => (output === "stdout" ? out : err);
      const check = () => {
        if (!pattern.test(text())) return;
        stream?.off("data", check);
        child.off("exit", onExit);
        resolve();
      };
      const onExit = () => {
        // The last output may arrive with the exit.
        setImmediate(() =>
          pattern.test(text())
            ? resolve()
            : reject(new Error(`exited before ${output} matched ${pattern}:\n${err}\n${out}`)),
        );
      };
      stream?.on("data", check);
      child.once("exit", onExit);
      check();
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner:\n${err}\n${out}`)), 30_000);
    const check = () => {
      const m = /listening on (https?:\/\/\S+)/.exec(err);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve({
          child,
          baseUrl: m[1],
          stderr: () => err,
          stdout: () => out,
          exited,
          waitFor,
        });
      }
    };
    child.stderr?.on("data", check);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve({ child, baseUrl: "", stderr: () => err, stdout: () => out, exited, waitFor });
    });
  });
}
