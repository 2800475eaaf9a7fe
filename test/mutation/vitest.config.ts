/** The fast tiers only (unit and in-memory), for mutation testing: no server port, no process. */
import { defineConfig, mergeConfig } from "vitest/config";
import base from "../vitest.config";

export default mergeConfig(
  base,
  defineConfig({
    test: {
      include: ["test/unit/**/*.test.ts", "test/in-memory/**/*.test.ts"],
      // No mutant touches the documentation, and Stryker's sandbox leaves out
      // files its links name (test/interop, see stryker.config.mjs).
      // docs-claims reads the repository's tracked files with git, which the sandbox is not.
      exclude: ["test/unit/docs-links.test.ts", "test/unit/docs-claims.test.ts"],
      // Stryker runs two of these at once (its concurrency) on two cores.
      maxWorkers: 1,
      // Stryker reports; the run's own summary line is for npm test.
      reporters: ["default"],
    },
  }),
);
