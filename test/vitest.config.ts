/** Test runner settings (kept under test/ so the top level stays lean). */
import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: fileURLToPath(new URL("..", import.meta.url)),
    // A Stryker sandbox left behind by an interrupted mutation run is a copy of test/.
    exclude: [...configDefaults.exclude, "test-results/**"],
    setupFiles: ["./test/support/leak-check.ts"],
    globalSetup: ["./test/support/process-check.ts"],
    // Three files at a time whatever the core count (vitest's default is one
    // fewer than the cores: one worker on a two-core machine). Most of the
    // suite waits on sockets, timers and child processes, not on the CPU:
    // on the 2-core machine three workers took the suite from about 106 s
    // to about 87 s (docs/testing.md), every time bound still met.
    maxWorkers: 3,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ["default", "./test/support/summary-reporter.ts"],
  },
});
