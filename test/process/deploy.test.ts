/**
 * The production path as the image runs it (Docker cannot run here): the
 * Dockerfile's own install command in a clean directory, then its CMD, against
 * a MongoDB URI (an embedded server started by this test stands in for it).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadFixture } from "../../src/fixtures/load";
import { openDatabase } from "../../src/storage/database";
import { type EmbeddedServer, startEmbeddedServer } from "../../src/storage/embedded-server";
import { authHeader, BOX, baseFixture, USERS } from "../support/fixture";

const ROOT = new URL("../..", import.meta.url).pathname;
const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
/** The production install command of the Dockerfile's last stage. */
const INSTALL = [...dockerfile.matchAll(/^RUN (npm ci --omit=dev[^\\\n]*)/gm)].at(-1)?.[1] ?? "";
/** The image's CMD, exec form. */
const CMD = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)?.[1] ?? "[]") as string[];

let dir: string;
let db: EmbeddedServer;
const children: ChildProcess[] = [];

beforeAll(async () => {
  execFileSync("npm", ["run", "-s", "build"], { cwd: ROOT });
  dir = mkdtempSync(join(tmpdir(), "docflow-image-"));
  for (const name of ["package.json", "package-lock.json", "dist"]) {
    cpSync(join(ROOT, name), join(dir, name), { recursive: true });
  }
  const [npm = "npm", ...args] = INSTALL.split(/\s+/);
  // From npm's cache only (filled by the `npm ci` before the tests): npm test needs no network.
  execFileSync(npm, [...args, "--offline"], { cwd: dir, stdio: "ignore" });
  db = await startEmbeddedServer("image");
  const database = await openDatabase({ uri: db.uri, name: "docflow", operationTimeoutMs: 2_000 });
  await loadFixture(database.db, baseFixture());
  await database.close();
}, 180_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  await db?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function run(env: Record<string, string>) {
  const [, ...args] = CMD;
  const { MONGODB_URI: _, NODE_ENV: __, ...base } = process.env;
  const child = spawn(process.execPath, args, {
    cwd: dir,
    env: { ...base, PORT: "0", SHUTDOWN_DRAIN_MS: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  let err = "";
  child.stdout?.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const listening = new Promise<string>((resolve) => {
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m?.[1]) resolve(m[1]);
    };
    child.stderr?.on("data", check);
    child.once("exit", () => resolve(""));
  });
  return { child, exited, listening, stdout: () => out, stderr: () => err };
}

describe("the image's install and command", () => {
  it("installs production dependencies only: no dev tooling, no embedded engine", () => {
    expect(INSTALL).toMatch(/--omit=dev --omit=optional/);
    for (const name of [
      "tsx",
      "esbuild",
      "vitest",
      "node",
      "@jongodb/memory-server-bin-linux-x64-gnu",
    ]) {
      expect(existsSync(join(dir, "node_modules", name)), name).toBe(false);
    }
    expect(existsSync(join(dir, "node_modules", "mongodb"))).toBe(true);
  });

  it("runs the CMD against MONGODB_URI in production mode and serves", async () => {
    const s = run({ NODE_ENV: "production", MONGODB_URI: db.uri, MONGODB_DB: "docflow" });
    const base = await s.listening;
    expect(base, s.stderr()).not.toBe("");
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const res = await fetch(`${base}/GetSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`, {
      headers: { authorization: authHeader("admin"), accept: "application/json" },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { Subscriptions: unknown[] }).Subscriptions).toHaveLength(10);
    s.child.kill("SIGTERM");
    expect(await s.exited).toBe(0);
    expect(s.stdout()).toMatch(/"msg":"stopped"/);
  });

  it("without MONGODB_URI it says the embedded engine is not installed, exit 2", async () => {
    const s = run({});
    expect(await s.exited).toBe(2);
    expect(s.stderr()).toMatch(/the embedded database is not installed .*set MONGODB_URI/);
  });
});
