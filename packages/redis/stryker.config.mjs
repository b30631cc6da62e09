// Mutation testing of the core modules of @circuitry/redis (`pnpm mutate` here, or from the root).
// In place (no sandbox copy): the vitest config reaches the workspace's shared config and sources.
// Low concurrency: the machine is small and the tests use real servers.
/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "vitest.config.ts" },
  mutate: ["src/internal/breakerStore.ts"],
  coverageAnalysis: "perTest",
  inPlace: true,
  concurrency: 1,
  timeoutMS: 20000,
  reporters: ["clear-text", "json"],
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
  // Nothing is type-checked during the run (vitest strips types), so no file needs a @ts-nocheck.
  disableTypeChecks: false
}
