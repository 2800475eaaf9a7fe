/**
 * `npm ci` on a clean copy of the package files: the install scripts the
 * project approves (package.json "allowScripts") run, the ones it refuses do
 * not, and an unreviewed one would fail the install (.npmrc
 * strict-allow-scripts). What it must yield: Node 24, buf and esbuild.
 */
import { execFile } from "node:child_process";
import { copyFile, mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = new URL("../../", import.meta.url).pathname;

describe("npm ci on a clean copy", () => {
  it("yields Node 24, buf and esbuild, runs no unreviewed or refused install script", async () => {
    const dir = await mkdtemp(join(tmpdir(), "npm-ci-"));
    for (const file of ["package.json", "package-lock.json", ".npmrc"]) {
      await copyFile(join(ROOT, file), join(dir, file));
    }
    const ci = await run("npm", ["ci", "--no-audit", "--no-fund", "--prefer-offline"], {
      cwd: dir,
      maxBuffer: 16 * 1024 * 1024,
      timeout: 240_000,
    });
    expect(ci.stdout + ci.stderr).not.toMatch(/not yet covered by allowScripts/);
    const bin = (name: string) => join(dir, "node_modules", ".bin", name);
    expect((await run(bin("node"), ["--version"])).stdout).toMatch(/^v24\./);
    const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8"));
    expect((await run(bin("buf"), ["--version"])).stdout.trim()).toBe(
      pkg.devDependencies["@bufbuild/buf"],
    );
    expect((await run(bin("esbuild"), ["--version"])).stdout.trim()).toBe(
      pkg.devDependencies.esbuild,
    );
    const pending = await run("npm", ["install-scripts", "ls"], { cwd: dir });
    expect(pending.stdout).toContain("No packages with unreviewed install scripts.");
    // The policy itself: exactly these approved, exactly these refused.
    expect(pkg.allowScripts).toEqual({
      node: true,
      esbuild: true,
      "@bufbuild/buf": true,
      "@scarf/scarf": false,
      protobufjs: false,
    });
  }, 300_000);
});
