import { BreakerStore } from "@circuitry/breaker"
import { storeSuite } from "./storeSuite.js"

// The reference backend; Redis, SQLite and PostgreSQL run the same suite in their packages.
storeSuite([["memory", BreakerStore.layerMemory]])
