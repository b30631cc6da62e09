// @ts-nocheck
// Mutation testing of the Redis breaker store (`pnpm mutate` here, or from the root), against the
// tests that target it (vitest.mutate.config.ts) on the real Redis at 127.0.0.1:6379. Figures in
// test/MUTANTS.md.
import { strykerConfig } from "../../stryker.shared.mjs"

export default strykerConfig({
  mutate: [
    "src/internal/breakerStore.ts",
    "src/internal/verdictChannel.ts",
    "src/internal/sharedCounts.ts",
    "src/internal/probeLeases.ts",
    "src/internal/fleetMembership.ts"
  ],
  vitest: { configFile: "vitest.mutate.config.ts" },
  reporters: ["clear-text", "progress", "json"]
})
