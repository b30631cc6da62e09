import { BreakerStore } from "@circuitry/breaker"
import { SqlBreakerStore } from "@circuitry/sql"
import { Context, Effect } from "effect"
import { clocksSuite } from "@circuitry/testkit/conformance/clocks"
import { backends, instance } from "./backends.js"

// Members on clocks ±5 s apart, each a store of its own (its own connection) on one database. The
// database's clock dates the verdicts; a member learns one at its next poll (run by the test), with
// the time left as the database reads it then: earlier than the saver's by the real time between
// the save and the poll (a few ms; 1 s allows for a busy machine). No LISTEN on PostgreSQL here:
// its pings sleep on the members' TestClock, so moving that clock 30 s would send hundreds of
// them in real time and move the fleet's real-time clock with it. NOTIFY carries the same row and
// the database's now as a poll reads (test/notify.test.ts checks the payload's durations).
clocksSuite(
  backends.map(([name, fresh]) => ({
    name,
    fleet: Effect.map(fresh, (db) => ({
      join: Effect.map(instance(db, { listen: false }), (context) => ({
        store: Context.get(context, BreakerStore.BreakerStore),
        nudge: Effect.ignore(Context.get(context, SqlBreakerStore.SqlBreakerStore).poll)
      }))
    })),
    boundMillis: 1_000,
    realTime: true
  }))
)
