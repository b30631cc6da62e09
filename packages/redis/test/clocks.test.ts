import { BreakerStore } from "@circuitry/breaker"
import { RedisBreakerStore } from "@circuitry/redis"
import { Context, Effect, Layer } from "effect"
import { Redis } from "ioredis"
import { clocksSuite } from "@circuitry/testkit/conformance/clocks"
import { cleanup, uniquePrefix } from "./utils/server.js"

const URL = "redis://127.0.0.1:6379"

// Members on clocks ±5 s apart, each with connections of its own to the shared Redis (a prefix per
// test). The server's TIME dates the verdicts; a verdict reaches the others by pub/sub with the
// time left as the save script computed it, so they agree on the half-open moment exactly (the
// TestClock does not move while a verdict is in flight), unless a member reads it back (the resync
// after its subscriber's ready, on a loaded machine), aged by the server's real time meanwhile.
const fleet = Effect.gen(function* () {
  const prefix = uniquePrefix("fleet")
  yield* Effect.acquireRelease(
    Effect.sync(() => new Redis(URL)),
    (client) => Effect.promise(() => cleanup(client, prefix).finally(() => client.disconnect()))
  )
  const join = Effect.map(Layer.build(RedisBreakerStore.layer({ url: URL, prefix })), (context) => ({
    store: Context.get(context, BreakerStore.BreakerStore),
    nudge: Effect.void
  }))
  return { join }
})

clocksSuite([
  { name: "Redis", fleet, boundMillis: 0, realTime: false, readBackAges: true },
  // Members' clocks running in real time as the server's does: the transit of the save and of the
  // publication (ms on loopback; 1 s allows for a busy machine) is the whole disagreement.
  { name: "Redis, clocks in real time", fleet, boundMillis: 1_000, realTime: true }
])
