import { BreakerStore } from "@circuitry/breaker"
import { storeSuite } from "@circuitry/testkit/conformance/breakerStore"

// The reference backend; Redis, SQLite and PostgreSQL run the same suite in their packages.
storeSuite([["memory", BreakerStore.layerMemory]])
