import { BreakerStore } from "@circuitry/breaker"
import { SqlBreakerStore } from "@circuitry/sql"
import { Context, Effect } from "effect"
import { fleetSuite } from "../../breaker/test/fleetSuite.js"
import { backends, instance } from "./backends.js"

// Members on clocks ±5 s apart, each a store of its own (its own connection) on one database. The
// database's clock dates the verdicts; a member learns one at its next poll (run by the test), with
// the time left as the database reads it then: earlier than the saver's by the real time between
// the save and the poll (a few ms; 1 s allows for a busy machine).
fleetSuite(
  backends.map(([name, fresh]) => ({
    name,
    fleet: Effect.map(fresh, (db) => ({
      join: Effect.map(instance(db), (context) => ({
        store: Context.get(context, BreakerStore.BreakerStore),
        nudge: Effect.ignore(Context.get(context, SqlBreakerStore.SqlBreakerStore).poll)
      }))
    })),
    boundMillis: 1_000,
    realTime: true
  }))
)
