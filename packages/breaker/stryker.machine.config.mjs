// @ts-nocheck
// machine.ts against its direct tests (test/machine.test.ts): `npx stryker run stryker.machine.config.mjs`
// here. Figures in test/MUTANTS.md.
import base from "./stryker.config.mjs"

export default {
  ...base,
  mutate: ["src/internal/machine.ts"],
  vitest: { configFile: "vitest.machine.config.ts" },
  concurrency: 1,
  incremental: false,
  reporters: ["clear-text", "progress", "json"],
  jsonReporter: { fileName: "reports/mutation-machine.json" }
}
