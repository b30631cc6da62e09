// @ts-nocheck
// Mutation testing of the core modules of @circuitry/redis (`pnpm mutate` here, or from the root).
import { strykerConfig } from "../../stryker.shared.mjs"

export default strykerConfig({
  mutate: [
    "src/internal/breakerStore.ts",
    "src/internal/verdictChannel.ts",
    "src/internal/sharedCounts.ts",
    "src/internal/probeLeases.ts",
    "src/internal/fleetMembership.ts"
  ]
})
