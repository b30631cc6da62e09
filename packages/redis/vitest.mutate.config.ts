// The tests Stryker runs against breakerStore.ts's mutants (`pnpm mutate`, stryker.config.mjs): the
// store's own tests, the breaker-store conformance suite on Redis, its edges and its clocks, on the
// real Redis at 127.0.0.1:6379 (not resync.test.ts: its real-time bound failed the dry run at load
// 13-15). See test/MUTANTS.md for why these, and the figures.
import { defineProject } from "vitest/config"
import shared from "../../vitest.shared.js"

export default defineProject({
  ...shared,
  test: {
    ...shared.test,
    include: [
      "test/RedisBreakerStore.test.ts",
      "test/breakerStoreContract.test.ts",
      "test/breakerStoreEdges.test.ts",
      "test/clocks.test.ts"
    ]
  }
})
