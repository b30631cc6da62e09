// @ts-nocheck
// tracker.ts against its direct tests (test/tracker.test.ts): `npx stryker run stryker.tracker.config.mjs`
// here. The full suite (`stryker.config.mjs`) runs most tracker mutants as static ones (code run between
// tests), each against every breaker test: hours on a loaded machine. Figures in test/MUTANTS.md.
import base from "./stryker.config.mjs"

export default {
  ...base,
  mutate: ["src/internal/tracker.ts"],
  vitest: { configFile: "vitest.tracker.config.ts" },
  concurrency: 1,
  incremental: false,
  reporters: ["clear-text", "progress", "json"],
  jsonReporter: { fileName: "reports/mutation-tracker.json" }
}
