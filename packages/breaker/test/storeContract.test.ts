import { BreakerStore } from "@circuitry/breaker"
import { storeSuite } from "@circuitry/testkit/conformance/breakerStore"
import { Effect, Layer } from "effect"
import { offering } from "./utils.js"

// The reference backend; Redis, Redis Cluster, SQLite and PostgreSQL run the same suites in their
// packages. A backend that offers only the verdict channel runs that suite alone (and the check that
// it offers nothing more).
storeSuite([
  ["memory", BreakerStore.layerMemory],
  [
    "memory, the verdict channel only",
    Layer.effect(
      BreakerStore.BreakerStore,
      Effect.map(BreakerStore.makeMemory, (memory) => offering(memory, []))
    ),
    { offers: [] }
  ]
])
