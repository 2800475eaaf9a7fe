/** SPEC §9, as a newcomer meets it: `npm start` (node + tsx), its banner, env checks, graceful shutdown. */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import http from "node:http";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { DEMO } from "../src/fixtures/demo";

const exec = promisify(execFile);

interface Started {
  child: ChildProcess;
  baseUrl: string;
  stderr: () => string;
  stdout: () => string;
  exited: Promise<number | null>;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
});

function start(env: Record<string, string> = {}): Promise<Started> {
  const { MONGODB_URI: _, ...base } = process.env;
  const child = spawn("node", ["--import", "tsx", "src/main.ts"], {
    env: { ...base, PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  let err = "";
  child.stdout?.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => resolve(code)),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner:\n${err}\n${out}`)), 30_000);
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve({ child, baseUrl: m[1], stderr: () => err, stdout: () => out, exited });
      }
    };
    child.stderr?.on("data", check);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve({ child, baseUrl: "", stderr: () => err, stdout: () => out, exited });
    });
  });
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("npm start with no configuration", () => {
  it("says loudly that nothing is kept, and its demo curl commands work", async () => {
    const s = await start();
    expect(s.stderr()).toMatch(/embedded, in-memory: NOTHING IS KEPT/);
    const curls = s
      .stderr()
      .split("\n")
      .filter((l) => l.startsWith("curl ") && !l.includes("protoc"));
    const subscriptionCalls = curls.filter((l) => l.includes("Subscriptions"));
    expect(subscriptionCalls.length).toBe(3);
    for (const command of subscriptionCalls) {
      const { stdout } = await exec("bash", ["-c", `${command} -w '\\n%{http_code}'`]);
      const [body, status] = [
        stdout.slice(0, stdout.lastIndexOf("\n")),
        stdout.slice(stdout.lastIndexOf("\n") + 1),
      ];
      expect(status, command).toBe("200");
      expect(JSON.parse(body).Subscriptions).toHaveLength(10);
    }
    // Restore, Delete, then the documented 403, in the banner's order.
    const markCalls = curls.filter((l) => l.includes("/Restore?") || l.includes("/Delete?"));
    const statuses: string[] = [];
    for (const command of markCalls) {
      const { stdout } = await exec("bash", ["-c", command]);
      statuses.push(stdout.split(" ")[1] ?? "");
      if (statuses.length === 1) expect(stdout).toMatch(/content-length: 0/i);
    }
    expect(statuses).toEqual(["200", "200", "403"]);
    const listing = curls.find((l) => l.includes("/GetCounteragentsFromGroup?")) ?? "";
    const { stdout: page } = await exec("bash", ["-c", listing]);
    expect(JSON.parse(page)).toMatchObject({ TotalCount: 6 });
    expect(JSON.parse(page).CounteragentBoxId).toHaveLength(4);
    const proto =
      s
        .stderr()
        .split("\n")
        .find((l) => l.startsWith("curl ") && l.includes("protoc")) ?? "";
    const { stdout } = await exec("bash", [
      "-c",
      `${proto.replace(/ \| protoc.*$/, "")} | od -An -tx1 | head -1`,
    ]);
    expect(stdout.trim().startsWith("0a")).toBe(true);
    s.child.kill("SIGTERM");
    expect(await s.exited).toBe(0);
  });
});

describe("configuration is checked at start-up", () => {
  it("each bad variable gets its own clear message and the exit code is 2", async () => {
    const s = await start({
      PORT: "eighty",
      MONGODB_DB: "bad name!",
      LOG_LEVEL: "loud",
      SEED_FILE: "/nope.json",
    });
    expect(await s.exited).toBe(2);
    expect(s.stderr()).toMatch(/PORT must be an integer from 0 to 65535 \(got "eighty"\)/);
    expect(s.stderr()).toMatch(/MONGODB_DB must be/);
    expect(s.stderr()).toMatch(/LOG_LEVEL must be one of/);
    expect(s.stderr()).toMatch(/SEED_FILE names a file that does not exist/);
  });
});

describe("graceful shutdown on SIGTERM", () => {
  it("finishes the request in flight, stops the embedded database, exits 0", async () => {
    const s = await start();
    const pid = Number(/"embeddedPid":(\d+)/.exec(s.stdout())?.[1]);
    expect(isAlive(pid)).toBe(true);
    const url = new URL(
      `/UpdateSubscriptions?boxId=${DEMO.boxId}&userId=${DEMO.clerk.userId}`,
      s.baseUrl,
    );
    const body = Buffer.from('{"Subscriptions":[{"Id":"News","IsSubscribed":"true"}]}');
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(
        url,
        {
          method: "POST",
          headers: {
            authorization: `ServiceAuth svcauth_api_client_id=${DEMO.apiKey}, svcauth_token=${DEMO.admin.token}`,
            accept: "application/json",
            "content-type": "application/json",
            "content-length": String(body.length),
          },
        },
        (res) => {
          let text = "";
          res.on("data", (c: Buffer) => (text += c.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on("error", reject);
      // Half the body now, the signal, then the rest: the request is in flight when SIGTERM arrives.
      req.write(body.subarray(0, 10));
      setTimeout(() => {
        s.child.kill("SIGTERM");
        setTimeout(() => req.end(body.subarray(10)), 300);
      }, 200);
    });
    const res = await response;
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).Subscriptions).toContainEqual({ Id: "News", IsSubscribed: "true" });
    expect(await s.exited).toBe(0);
    expect(s.stdout()).toMatch(/"msg":"stopped"/);
    expect(isAlive(pid)).toBe(false);
  });

  it("a signal during start-up still stops the embedded database and exits 0", async () => {
    const { MONGODB_URI: _, ...base } = process.env;
    const child = spawn("node", ["--import", "tsx", "src/main.ts"], {
      env: { ...base, PORT: "0" },
      stdio: ["ignore", "pipe", "ignore"],
    });
    children.push(child);
    const exited = new Promise<number | null>((resolve) =>
      child.once("exit", (code) => resolve(code)),
    );
    // The database is up (its PID is logged) while the demo data is still loading.
    const pid = await new Promise<number>((resolve) => {
      let out = "";
      child.stdout?.on("data", (c: Buffer) => {
        out += c.toString();
        const m = /"embeddedPid":(\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
    });
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(isAlive(pid)).toBe(false);
  });

  it("refuses new connections once stopping", async () => {
    const s = await start();
    s.child.kill("SIGTERM");
    expect(await s.exited).toBe(0);
    await expect(fetch(`${s.baseUrl}/healthz`)).rejects.toThrow();
  });
});
