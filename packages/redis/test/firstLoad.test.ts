/**
 * A breaker's first load (`make` reads the stored verdict) on a blackholed Redis: a redis-server
 * that is SIGSTOP'd after the store connected, so the load is sent and never answered. `make`
 * returns at the breaker's store deadline (250 ms) without waiting for the load, the breaker
 * decides locally meanwhile, and once the server answers again it adopts the stored verdict.
 * Real time: the connections' timers are real; the bounds are four times the deadlines.
 */
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { RedisBreakerStore } from "@circuitry/redis"
import { assert, describe, it, result } from "@circuitry/testkit"
import { Effect, Layer } from "effect"
import { eventually, startServer, uniquePrefix } from "./utils/server.js"

const options = { name: "payments", policy: Policy.consecutiveFailures(1), openFor: "5 minutes" } as const

const elapsed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const start = performance.now()
    const a = yield* effect
    return [a, performance.now() - start] as const
  })

const tagOf = (breaker: CircuitBreaker.CircuitBreaker) => Effect.map(breaker.state, (s) => s._tag)

describe("the first load on a blackholed Redis", () => {
  it.live(
    "make returns at the store deadline, the breaker works locally, and adopts the stored verdict once Redis answers",
    () =>
      Effect.gen(function* () {
        const server = yield* startServer
        const prefix = uniquePrefix("first-load")
        // b opens the circuit for the fleet: the verdict is stored
        const b = yield* CircuitBreaker.make(options).pipe(
          Effect.provide(yield* Layer.build(RedisBreakerStore.layer({ url: server.url, prefix })))
        )
        yield* result(CircuitBreaker.withBreaker(Effect.fail("boom"), b))
        const stored = Effect.promise(() => server.admin.hget(`${prefix}{payments}:circuit`, "state"))
        assert.isTrue(yield* eventually(Effect.map(stored, (state) => state === "Open")))

        // a's store is connected, then the server stops answering: a's first load is sent and lost
        const storeA = yield* Layer.build(RedisBreakerStore.layer({ url: server.url, prefix }))
        yield* server.pause
        const [a, makeMillis] = yield* elapsed(CircuitBreaker.make(options).pipe(Effect.provide(storeA)))
        // it waited for the load (the deadline, 250 ms), and no longer
        assert.isAtLeast(makeMillis, 200, `make took ${makeMillis} ms`)
        assert.isBelow(makeMillis, 1_000, `make took ${makeMillis} ms`)
        assert.strictEqual(yield* tagOf(a), "Closed")
        assert.deepStrictEqual((yield* a.snapshot).store, { connected: false })

        // locally, the breaker works while Redis is stopped (that a call never waits on the store
        // is pinned in virtual time: packages/breaker/test/firstLoad.test.ts)
        const [answer, callMillis] = yield* elapsed(CircuitBreaker.withBreaker(Effect.succeed("ok"), a))
        assert.strictEqual(answer, "ok")
        assert.isBelow(callMillis, 1_000, `a call took ${callMillis} ms`)

        // Redis answers again after 2 s (past its call deadline of 1 s, before its liveness of 5 s,
        // so no reconnect and no resync): the breaker's own reload (1 s after make, then 2 s and
        // 4 s later) reads the verdict. The outage's length is the fault itself, on the live Clock.
        yield* Effect.sleep("1750 millis")
        yield* server.resume
        assert.isTrue(
          yield* eventually(
            Effect.map(tagOf(a), (tag) => tag === "Open"),
            10_000,
            20
          ),
          `a is ${yield* tagOf(a)}`
        )
        // The verdict may come first by the store's resync (a connection that was still connecting
        // when Redis stopped becomes ready after it), which is not a request of the breaker's: the
        // breaker says the store answers once its own reload is answered.
        assert.isTrue(
          yield* eventually(
            Effect.map(a.snapshot, (s) => s.store?.connected === true),
            10_000,
            20
          )
        )
      }).pipe(Effect.scoped),
    30_000
  )
})
