/**
 * The embedded, in-memory MongoDB-compatible server (npm package
 * @jongodb/memory-server-bin-linux-x64-gnu), started as a child process and
 * stopped by PID: it outlives a parent killed with SIGKILL otherwise.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

export interface EmbeddedServer {
  readonly uri: string;
  readonly pid: number;
  stop(): Promise<void>;
}

const READY = /JONGODB_URI=(\S+)/;
const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 3_000;

const PACKAGE = "@jongodb/memory-server-bin-linux-x64-gnu";

/** The engine is an optional dependency (linux/x64/glibc only; left out by `npm ci --omit=optional`). */
export class EmbeddedEngineMissing extends Error {
  override readonly name = "EmbeddedEngineMissing";
  constructor() {
    super(
      `the embedded database is not installed (optional dependency ${PACKAGE}, linux x64 glibc only): set MONGODB_URI to a MongoDB server`,
    );
  }
}

function binaryPath(): string {
  const require = createRequire(import.meta.url);
  let pkg: string;
  try {
    pkg = require.resolve(`${PACKAGE}/package.json`);
  } catch {
    throw new EmbeddedEngineMissing();
  }
  return join(dirname(pkg), "bin", "jongodb");
}

export async function startEmbeddedServer(database: string): Promise<EmbeddedServer> {
  const child = spawn(binaryPath(), ["--host=127.0.0.1", "--port=0", `--database=${database}`], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const uri = await waitForUri(child);
  const { pid } = child;
  if (pid === undefined) {
    throw new Error("the embedded database did not start");
  }
  // The engine logs harmless I/O failures when clients drop; keep its output off our logs.
  child.stdout?.resume();
  child.stderr?.resume();
  return {
    uri,
    pid,
    async stop() {
      process.removeListener("exit", killOnExit);
      await stopChild(child);
    },
  };
}

function waitForUri(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error("the embedded database did not report ready in time"));
    }, START_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const match = READY.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        child.stdout?.off("data", onData);
        resolve(match[1]);
      }
    };
    child.stdout?.on("data", onData);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`the embedded database could not start: ${error.message}`));
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the embedded database exited during start-up (code ${code})`));
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}
