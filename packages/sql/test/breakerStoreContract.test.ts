import { Effect, Layer } from "effect"
import { storeSuite } from "../../breaker/test/storeSuite.js"
import { backends } from "./backends.js"

// The breaker-store conformance suite, against SQLite (a temporary file) and PostgreSQL (a schema
// of its own), each removed afterwards.
storeSuite(backends.map(([name, db]) => [name, Layer.unwrapScoped(Effect.map(db, (db) => db.store()))] as const))
