// @ts-check
/**
 * Mutation testing (npm run test:mutation): StrykerJS changes the pure and
 * domain modules one small edit at a time and runs the fast tiers (unit and
 * in-memory) against each change; a change no test notices is a surviving
 * mutant. docs/testing.md, "Mutation testing" gives the score and how to read the report.
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: "vitest",
  vitest: { configFile: "test/mutation/vitest.config.ts", related: false },
  plugins: ["@stryker-mutator/vitest-runner"],
  mutate: [
    "src/domain/**/*.ts",
    "!src/domain/model.ts",
    "!src/domain/ports.ts",
    "src/legacy/decode.ts",
    "src/legacy/legacy-json.ts",
    "src/rpc/field-plan.ts",
    "src/rpc/required-fields.ts",
    "src/legacy/query.ts",
    "src/legacy/http-rules.ts",
    "src/storage/listing-key.ts",
    "src/wire/errors.ts",
    "src/config.ts",
    "src/env.ts",
    "src/transcoder/template.ts",
    "src/transcoder/route-table.ts",
  ],
  // Stryker copies the project into a sandbox: not what other steps of
  // .ci/run leave behind (the Python venv has a lib64 symlink Stryker cannot
  // copy; the interop builds are thousands of files the fast tiers never read).
  ignorePatterns: [
    "/.venv",
    "/dist",
    "/test-results",
    "/test/interop",
    "/test/browser",
    "/test/fuzz",
    "__pycache__",
  ],
  coverageAnalysis: "perTest",
  checkers: [],
  concurrency: 2,
  timeoutMS: 20_000,
  tempDirName: "test-results/stryker-tmp",
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: "test-results/mutation/index.html" },
  jsonReporter: { fileName: "test-results/mutation/mutation.json" },
  thresholds: { high: 90, low: 80, break: 80 },
  cleanTempDir: "always",
};
