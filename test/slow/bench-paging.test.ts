/**
 * `npm run bench:paging` end to end (about 30 s: it loads large groups and
 * times them). Slow and rarely changed, so it runs in `npm run test:slow`
 * (.ci/run), not in `npm test`.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

describe("npm run bench:paging", () => {
  it("loads its groups whatever one round trip's limit, and prints the comparison", async () => {
    const { stdout } = await run("node", ["--import", "tsx", "bench/paging.ts"], {
      env: { ...process.env, BENCH_ITERATIONS: "3" },
      timeout: 240_000,
    });
    expect(stdout).toMatch(/loaded \d+ counteragents/);
    expect(stdout).toMatch(/service\/floor/);
    expect(stdout.match(/^engine: /gm)).toHaveLength(1);
  }, 300_000);
});
