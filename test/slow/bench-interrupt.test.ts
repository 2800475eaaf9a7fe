/**
 * Ctrl-C reaches a long tool through npm: SIGINT to `npm run bench` stops
 * the bench and every process it started (about 9 s; the bench rarely
 * changes, so it runs in `npm run test:slow`, not in `npm test`).
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("Ctrl-C reaches a long tool through npm", () => {
  it("SIGINT to `npm run bench` stops the bench and every process it started", async () => {
    const npm = spawn("npm", ["run", "bench"], {
      env: { ...process.env, BENCH_SCENARIOS: "get-subscriptions", BENCH_ROUNDS: "1" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let out = "";
    npm.stdout?.on("data", (c: Buffer) => (out += c.toString()));
    npm.stderr?.on("data", (c: Buffer) => (out += c.toString()));
    // "close": after the exit and the last output (an "exit" may come before the last lines).
    const exited = new Promise<number | null>((resolve) => npm.once("close", resolve));
    try {
      // Servers, database and floor are up once the answers are compared.
      await new Promise<void>((resolve, reject) => {
        const check = () => (/identical/.test(out) ? resolve() : undefined);
        npm.stdout?.on("data", check);
        void exited.then(() => reject(new Error(`the bench exited early:\n${out}`)));
      });
      process.kill(npm.pid as number, "SIGINT");
      expect(await exited, out).toBe(130);
      expect(out).toContain("SIGINT: stopping every child process");
      // Nothing of its process group is left (an exited child may take a moment to be reaped).
      const alive = () => {
        try {
          process.kill(-(npm.pid as number), 0);
          return true;
        } catch {
          return false;
        }
      };
      for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 100));
      expect(alive(), "a process of the bench outlived it").toBe(false);
    } finally {
      try {
        process.kill(-(npm.pid as number), "SIGKILL");
      } catch {
        // gone, as it should be
      }
    }
  }, 120_000);
});
