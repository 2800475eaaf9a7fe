// @ts-check
/**
 * The mutation run of `.ci/run` (npm run test:mutation:ci): a fixed sample of
 * the full run (stryker.config.mjs) — the pure modules the unit tier covers,
 * about a third of the mutants, a few minutes on two cores — with the same
 * threshold. The full run stays `npm run test:mutation` (docs/testing.md).
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
import base from "./stryker.config.mjs";

export default {
  ...base,
  mutate: [
    "src/legacy/legacy-json.ts",
    "src/rpc/field-plan.ts",
    "src/rpc/required-fields.ts",
    "src/legacy/query.ts",
    "src/legacy/http-rules.ts",
    "src/storage/listing-key.ts",
    "src/wire/errors.ts",
    "src/domain/index-key.ts",
    "src/domain/validate.ts",
    "src/domain/bearer.ts",
    "src/domain/failure-budget.ts",
    "src/transcoder/template.ts",
    "src/transcoder/route-table.ts",
  ],
  reporters: ["clear-text", "progress", "json"],
  jsonReporter: { fileName: "test-results/mutation/mutation-ci.json" },
};
