// @ts-nocheck
// What every package's mutation run shares (`pnpm mutate` in a package, or from the root, one package
// at a time). In place (no sandbox copy): the vitest config reaches the workspace's shared config and
// sources. Low concurrency: the machine is small and the tests use real servers.
/** @returns {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export const strykerConfig = (options) => ({
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "vitest.config.ts" },
  coverageAnalysis: "perTest",
  inPlace: true,
  concurrency: 1,
  timeoutMS: 20000,
  reporters: ["clear-text", "json"],
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
  // Nothing is type-checked during the run (vitest strips types), so no file needs a @ts-nocheck.
  disableTypeChecks: false,
  ...options
})
