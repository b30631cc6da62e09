// Mutation testing of the breaker's core (the state machine and the trackers): `pnpm mutate` from the
// repository root runs every package's stryker.config.mjs. The score and the survivors named as
// equivalent are in test/MUTANTS.md and docs/breaker.md.
/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "packages/breaker/vitest.config.ts", dir: "packages/breaker" },
  mutate: ["packages/breaker/src/internal/machine.ts", "packages/breaker/src/internal/tracker.ts"],
  // Only what the breaker's tests need is copied into Stryker's sandbox.
  ignorePatterns: ["/docs", "/packages/*", "!/packages/breaker"],
  coverageAnalysis: "perTest",
  // The machine this runs on has 2 cores shared with other work.
  concurrency: 2,
  incremental: true,
  incrementalFile: "packages/breaker/reports/stryker-incremental.json",
  reporters: ["clear-text", "progress", "json"],
  jsonReporter: { fileName: "packages/breaker/reports/mutation.json" },
  thresholds: { high: 90, low: 80, break: null },
  timeoutMS: 60_000,
  tempDirName: "packages/breaker/.stryker-tmp"
}
