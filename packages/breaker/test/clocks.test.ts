import { BreakerStore } from "@circuitry/breaker"
import { Effect } from "effect"
import { clocksSuite } from "@circuitry/testkit/conformance/clocks"

// The memory store's one clock is the TestClock: verdicts reach members in the instant they are
// saved, so members on offset clocks agree on the half-open moment exactly. Redis, SQLite and
// PostgreSQL run the same suite in their packages.
clocksSuite([
  {
    name: "memory",
    fleet: Effect.map(BreakerStore.makeMemory, (store) => ({
      join: Effect.succeed({ store, nudge: Effect.void })
    })),
    boundMillis: 0,
    realTime: false
  }
])
