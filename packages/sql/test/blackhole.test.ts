/**
 * A PostgreSQL that accepts connections and never answers (a proxy that forwards nothing) must
 * never hold a call past the breaker's store deadlines (250 ms for the load and the lease): the
 * driver's cancel (`pg_cancel_backend`, up to 5 s against a blackhole) finishes in the background.
 * Real time, since the driver's own timers are real: the bound (1 s) is four times the deadline and
 * a fifth of the cancel it must not wait for.
 */
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { SqlBreakerStore } from "@circuitry/sql"
import { assert, describe, it, result, Result } from "@circuitry/testkit"
import { Effect, Layer } from "effect"
import { tcpProxy } from "../../../test-support/proxy.js"
import { backends, pgConfig } from "./backends.js"

const pg = backends.find(([name]) => name === "pg")![1]

const elapsed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const start = performance.now()
    const a = yield* effect
    return [a, performance.now() - start] as const
  })

describe("a blackholed PostgreSQL never holds a call past the store deadlines", () => {
  it.live(
    "making a breaker and a half-open call each answer within 1 s (deadline 250 ms, driver cancel 5 s)",
    () =>
      Effect.gen(function* () {
        const db = yield* pg
        const hole = yield* tcpProxy(pgConfig.port)
        const ctx = yield* Layer.build(
          SqlBreakerStore.layerPg({ ...pgConfig, port: hole.port }, { table: db.table, pollInterval: "1 hour" })
        )
        const make = CircuitBreaker.make({ name: "ledger", policy: Policy.consecutiveFailures(1), openFor: 50 }).pipe(
          Effect.provide(ctx)
        )
        const breaker = yield* make
        yield* result(breaker.execute(Effect.fail("boom")))
        assert.strictEqual((yield* breaker.state)._tag, "Open")
        yield* hole.blackhole

        const [made, makeMillis] = yield* elapsed(make)
        assert.isBelow(makeMillis, 1_000, `make took ${makeMillis} ms`)

        yield* Effect.sleep(100) // past openFor: the next call is a half-open probe
        const [probe, probeMillis] = yield* elapsed(result(breaker.execute(Effect.succeed(1))))
        assert.isBelow(probeMillis, 1_000, `half-open call took ${probeMillis} ms`)
        assert.isTrue(Result.isSuccess(probe) || Result.isFailure(probe))
        assert.strictEqual((yield* made.state)._tag, "Closed")
        // The network then fails outright, before the scope closes. What this test pins is the
        // calls above; the stores' release while the blackhole lasts is not bounded here: on Effect 3
        // it took 3-8 s in six runs alone and over 20 s once in a whole run (2026-12-06), not yet
        // explained (on Effect 4 ~10 s, the driver's cancel timers).
        yield* hole.cut
      }).pipe(Effect.scoped),
    20_000
  )
})
