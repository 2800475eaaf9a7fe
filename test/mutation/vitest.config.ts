/** The fast tiers only (unit and in-memory), for mutation testing: no server port, no process. */
import { defineConfig, mergeConfig } from "vitest/config";
import base from "../vitest.config";

export default mergeConfig(
  base,
  defineConfig({
    test: {
      include: ["test/unit/**/*.test.ts", "test/in-memory/**/*.test.ts"],
      // Stryker reports; the run's own summary line is for npm test.
      reporters: ["default"],
    },
  }),
);
