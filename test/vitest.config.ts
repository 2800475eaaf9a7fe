/** Test runner settings (kept under test/ so the top level stays lean). */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: fileURLToPath(new URL("..", import.meta.url)),
    setupFiles: ["./test/support/leak-check.ts"],
    globalSetup: ["./test/support/process-check.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ["default", "./test/support/summary-reporter.ts"],
  },
});
