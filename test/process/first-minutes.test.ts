/**
 * The first minutes of a newcomer, as processes: the banner's pointers,
 * start-up failures that name what to change, a fixture larger than one
 * round trip's limit, and `--help` on every tool without its work.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, readdir, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { DEMO } from "../../src/fixtures/demo";
import { startService, useServiceProcesses } from "../support/service-process";

const run = promisify(execFile);
/** tsx by absolute URL: the tools run from another directory. */
const TSX = import.meta.resolve("tsx");
useServiceProcesses();

/** The JSON log lines of stdout. */
const logLines = (stdout: string) =>
  stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("the banner", () => {
  it("names the API page, the OpenAPI document and readiness, and / leads to the page", async () => {
    const s = await startService();
    expect(s.stderr()).toContain(`API page: ${s.baseUrl}/docs`);
    expect(s.stderr()).toContain(`OpenAPI document: ${s.baseUrl}/openapi.json`);
    const root = await fetch(`${s.baseUrl}/`, { redirect: "manual" });
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("/docs");
    const page = await fetch(`${s.baseUrl}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("demo data");
  });

  it("every demo token the docs name signs in (each reads its own subscriptions)", async () => {
    const s = await startService();
    for (const who of [DEMO.admin, DEMO.clerk, DEMO.manager, DEMO.auditor]) {
      const res = await fetch(
        `${s.baseUrl}/GetSubscriptions?boxId=${DEMO.boxId}&userId=${who.userId}`,
        {
          headers: {
            authorization: `ServiceAuth svcauth_api_client_id=${DEMO.apiKey}, svcauth_token=${who.token}`,
            accept: "application/json",
          },
        },
      );
      expect(res.status, who.token).toBe(200);
    }
  });
});

describe("start-up failures name the component and the variable to change", () => {
  it("MongoDB unreachable at MONGODB_URI: exit 1, on stderr and in the JSON log, no password", async () => {
    const s = await startService({
      MONGODB_URI: "mongodb://app:s3cret@127.0.0.1:1/x",
      MONGODB_TIMEOUT_MS: "300",
    });
    expect(await s.exited).toBe(1);
    expect(s.stderr()).toMatch(
      /^docflow-api failed to start: MongoDB unreachable at MONGODB_URI="mongodb:\/\/app:\*\*\*@127\.0\.0\.1:1\/x" within 300 ms/m,
    );
    expect(s.stderr()).toContain("unset MONGODB_URI to use the embedded database");
    const failed = logLines(s.stdout()).find((l) => l.msg === "start-up failed");
    expect(failed).toMatchObject({ level: "error", component: "mongodb", variable: "MONGODB_URI" });
    expect(s.stdout() + s.stderr()).not.toContain("s3cret");
    expect(s.stderr()).not.toMatch(/\n\s+at /);
  });

  it("the port in use: exit 1, naming PORT; the embedded database is stopped", async () => {
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    const port = (busy.address() as net.AddressInfo).port;
    try {
      const s = await startService({ PORT: String(port) });
      expect(await s.exited).toBe(1);
      expect(s.stderr()).toContain(
        `docflow-api failed to start: port ${port} on 127.0.0.1 is in use: stop what listens there, or set PORT to a free port`,
      );
      const failed = logLines(s.stdout()).find((l) => l.msg === "start-up failed");
      expect(failed).toMatchObject({ component: "http", variable: "PORT" });
      const embedded = logLines(s.stdout()).find((l) => typeof l.embeddedPid === "number");
      expect(() => process.kill(embedded?.embeddedPid as number, 0)).toThrow();
    } finally {
      busy.close();
    }
  });

  it("an invalid value is echoed for every variable", async () => {
    const s = await startService({ LOG_LEVEL: "verbose", METRICS_ENABLED: "yes" });
    expect(await s.exited).toBe(2);
    expect(s.stderr()).toContain(
      'LOG_LEVEL must be one of debug, info, warn, error, silent (got "verbose")',
    );
    expect(s.stderr()).toContain('METRICS_ENABLED must be "true" or "false" (got "yes")');
  });
});

describe("a fixture loads whatever one round trip's limit", () => {
  it("600 counteragents (two batches, each longer than 100 ms on the embedded engine) with MONGODB_TIMEOUT_MS=100: loaded, served, timed in the log", async () => {
    const dir = await mkdtemp(join(tmpdir(), "big-start-"));
    const file = join(dir, "big.json");
    await run("node", [
      "--import",
      "tsx",
      "scripts/big-fixture.ts",
      "--members",
      "600",
      "--out",
      file,
    ]);
    const s = await startService({ SEED_FILE: file, MONGODB_TIMEOUT_MS: "100" });
    expect(s.baseUrl, s.stderr()).not.toBe("");
    await s.waitFor("stdout", /"fixture loaded"/);
    const loaded = logLines(s.stdout()).find((l) => l.msg === "fixture loaded");
    expect(loaded).toMatchObject({ file });
    expect(typeof loaded?.ms).toBe("number");
    s.child.kill("SIGTERM");
    expect(await s.exited).toBe(0);
  });
});

describe("every tool answers --help without doing its work", () => {
  const tools = [
    ["bench", "bench/main.ts", "usage: npm run bench"],
    ["bench:paging", "bench/paging.ts", "usage: npm run bench:paging"],
    ["openapi", "scripts/openapi.ts", "usage: npm run openapi"],
    ["seed", "scripts/seed.ts", "usage: npm run seed"],
    ["backfill:listing-keys", "scripts/backfill-listing-keys.ts", "usage: npm run backfill"],
    ["fixture:big", "scripts/big-fixture.ts", "usage: npm run fixture:big"],
  ] as const;

  it.each(tools)(
    "%s --help: the usage on stdout, exit 0, no file written",
    async (_name, file, usage) => {
      const dir = await mkdtemp(join(tmpdir(), "help-"));
      const cwd = process.cwd();
      const { stdout } = await run("node", ["--import", TSX, join(cwd, file), "--help"], {
        cwd: dir,
        env: { ...process.env, MONGODB_URI: "mongodb://127.0.0.1:1/never" },
        timeout: 30_000,
      });
      expect(stdout.startsWith(usage), stdout).toBe(true);
      expect(await readdir(dir)).toEqual([]);
    },
  );

  it("an unknown option is refused (exit 2), not taken for a file name", async () => {
    const dir = await mkdtemp(join(tmpdir(), "help-"));
    const error = await run(
      "node",
      ["--import", TSX, join(process.cwd(), "scripts/openapi.ts"), "--hlep"],
      { cwd: dir },
    ).catch((e: { code: number; stderr: string }) => e);
    expect(error).toMatchObject({ code: 2 });
    expect((error as { stderr: string }).stderr).toContain('unknown option "--hlep"');
    expect(existsSync(join(dir, "--hlep"))).toBe(false);
  });

  it("npm run openapi still writes the document, with the server URL asked for", async () => {
    const dir = await mkdtemp(join(tmpdir(), "openapi-"));
    const out = join(dir, "doc.json");
    await run("node", [
      "--import",
      "tsx",
      "scripts/openapi.ts",
      out,
      "--server-url",
      "https://api.example.com",
    ]);
    const { readFile } = await import("node:fs/promises");
    const doc = JSON.parse(await readFile(out, "utf8"));
    expect(doc.servers).toEqual([{ url: "https://api.example.com" }]);
    await writeFile(join(dir, "done"), "");
  });
});

describe("every npm script answers --help", () => {
  const scripts = (
    JSON.parse(readFileSync(join(process.cwd(), "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  // The tools above print their own usage; these hand --help to the tool they run
  // (vitest, tsc, buf, esbuild, Maven, Stryker), which prints its usage and does nothing
  // else (docs/development.md says so).
  const handed = new Set([
    "test",
    "test:slow",
    "test:browser",
    "typecheck",
    "generate",
    "build",
    "test:interop:java",
    "test:mutation",
    "test:mutation:ci",
  ]);
  const tools = new Set([
    "bench",
    "bench:paging",
    "openapi",
    "seed",
    "backfill:listing-keys",
    "fixture:big",
  ]);
  const bashScripts = Object.entries(scripts).flatMap(([name, command]) => {
    const file = /^bash (\S+\.sh)$/.exec(command)?.[1];
    return file ? [[name, file] as const] : [];
  });

  it("every script is one of: a tool with its usage, a bash script with its usage, start, or one that hands --help on", () => {
    const unclassified = Object.keys(scripts).filter(
      (name) =>
        name !== "start" &&
        !handed.has(name) &&
        !tools.has(name) &&
        !bashScripts.some(([n]) => n === name),
    );
    expect(unclassified).toEqual([]);
    expect(bashScripts.length).toBeGreaterThan(10);
  });

  it("each bash script prints its usage (its header), exit 0, before any work", async () => {
    for (const [name, file] of bashScripts) {
      const before = await run("git", ["status", "--porcelain"]);
      const { stdout } = await run("bash", [file, "--help"], { timeout: 10_000 });
      expect(stdout.startsWith(`npm run ${name}`), `${name}: ${stdout}`).toBe(true);
      expect((await run("git", ["status", "--porcelain"])).stdout, name).toBe(before.stdout);
    }
  });

  it("npm start -- --help prints the usage and starts nothing; an argument is refused (exit 2)", async () => {
    const { stdout } = await run("npm", ["start", "-s", "--", "--help"], { timeout: 60_000 });
    expect(stdout).toMatch(/^usage: npm start/);
    expect(stdout).toContain("docs/configuration.md");
    expect(stdout).not.toContain("listening");
    const error = await run("npm", ["start", "-s", "--", "--port", "9000"], {
      timeout: 60_000,
    }).catch((e: { code: number; stderr: string }) => e);
    expect(error).toMatchObject({ code: 2 });
    expect((error as { stderr: string }).stderr).toContain("takes no arguments");
  });
});

describe("the README's Try it block", () => {
  it("runs as pasted, twice in a row, every call answered (a group of its own each time)", async () => {
    const s = await startService();
    const readme = readFileSync(join(process.cwd(), "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Try it"));
    const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
    expect(block).toContain("CreateCounteragentGroup");
    const script = `set -e\n${block.replaceAll("http://127.0.0.1:8080", s.baseUrl)}\necho "GROUP=$GROUP"`;
    const groups: string[] = [];
    for (const _run of [1, 2]) {
      const { stdout, stderr } = await run("bash", ["-c", script], { timeout: 120_000 });
      expect(stderr).not.toMatch(/curl: \(\d+\)|no group was created/);
      expect(stdout).not.toMatch(/DuplicateName|"status":\s*40[04]/);
      const id = /^GROUP=([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/m.exec(
        stdout,
      )?.[1];
      expect(id, stdout.slice(-300)).toBeDefined();
      expect(groups).not.toContain(id);
      groups.push(id as string);
    }
  }, 300_000);
});
