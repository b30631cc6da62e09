// @ts-nocheck
// Mutation testing of the breaker's core (the state machine and the trackers): `pnpm mutate` here, or
// from the repository root (every package's `mutate` script, one at a time). The score and the
// survivors named as equivalent are in test/MUTANTS.md and docs/breaker.md.
import { strykerConfig } from "../../stryker.shared.mjs"

export default strykerConfig({
  mutate: ["src/internal/machine.ts", "src/internal/tracker.ts"],
  // The machine this runs on has 2 cores shared with other work.
  concurrency: 2,
  incremental: true,
  incrementalFile: "reports/stryker-incremental.json",
  reporters: ["clear-text", "progress", "json"],
  jsonReporter: { fileName: "reports/mutation.json" },
  thresholds: { high: 90, low: 80, break: null },
  timeoutMS: 60_000,
  cleanTempDir: true,
  disableTypeChecks: true
})
