/**
 * A PostgreSQL that accepts connections and never answers (a proxy that forwards nothing) must
 * never hold a call past the breaker's store deadlines (250 ms for the load and the lease): the
 * driver's cancel (`pg_cancel_backend` on Effect 3, a CancelRequest on 4: up to 5 s against a
 * blackhole) finishes in the background. Nor may it hold the store's release, as an application
 * shutting down while its database is unreachable: `layerPg` waits at most CLOSE_DEADLINE (1 s)
 * for its client, and nothing of the store's own waits on the network.
 *
 * Real time, since the driver's own timers are real. The calls' bound (1 s) is four times the
 * deadline and a fifth of the cancel they must not wait for. The release's bound is CLOSE_DEADLINE
 * plus the time the same store took to be built, healthy, in the same test (the machine's load
 * as this test meets it), plus 500 ms; without the fix it took 5-6 s (the driver's cancel of the
 * poll interrupted, and 4.x's pool waiting for it), or for good on Effect 3 after a flap (the
 * listen connection 0.x opens with no deadline, which its client's release waited for).
 */
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import * as Edition from "@circuitry/core/Edition"
import { SqlBreakerStore } from "@circuitry/sql"
import { assert, describe, it, result, Result } from "@circuitry/testkit"
import { Context, Duration, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { tcpProxy } from "../../../test-support/proxy.js"
import { CLOSE_DEADLINE } from "../src/internal/release.js"
import { backends, eventually, pgConfig } from "./backends.js"

const pg = backends.find(([name]) => name === "pg")![1]

/** The stores' checks of their LISTEN connection: losing it takes two of them. */
const LISTEN_INTERVAL = 100

const elapsed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const start = performance.now()
    const a = yield* effect
    return [a, performance.now() - start] as const
  })

/**
 * A store through a proxy of its own, built in a scope this test closes, and a breaker on it in
 * a scope closed before (the breaker's own release, its flush deadline, is not what is pinned).
 */
const setup = Effect.gen(function* () {
  const db = yield* pg
  const hole = yield* tcpProxy(pgConfig.port)
  const scope = yield* Scope.make()
  const [ctx, builtMillis] = yield* elapsed(
    Layer.buildWithScope(
      SqlBreakerStore.layerPg(
        { ...pgConfig, port: hole.port },
        { table: db.table, pollInterval: "1 hour", listenInterval: LISTEN_INTERVAL }
      ),
      scope
    )
  )
  const breakers = yield* Scope.make()
  const make = CircuitBreaker.make({ name: "ledger", policy: Policy.consecutiveFailures(1), openFor: 50 }).pipe(
    Effect.provide(ctx),
    Effect.provideService(Scope.Scope, breakers)
  )
  const store = Context.get(ctx, SqlBreakerStore.SqlBreakerStore)
  yield* eventually(store.listening, (on) => on)
  const breaker = yield* make
  yield* result(breaker.execute(Effect.fail("boom")))
  assert.strictEqual((yield* breaker.state)._tag, "Open")
  /** The store's release, timed; one that lasts past twice its bound is given up on (and fails). */
  const release = Effect.gen(function* () {
    yield* Scope.close(breakers, Exit.void)
    const bound = Duration.toMillis(CLOSE_DEADLINE) + builtMillis + 500
    const closing = yield* Edition.forkDetach(Scope.close(scope, Exit.void))
    const [closed, releaseMillis] = yield* elapsed(Effect.timeoutOption(Fiber.join(closing), 2 * bound))
    assert.isTrue(closed._tag === "Some", `the store's release still runs after ${releaseMillis} ms`)
    assert.isBelow(releaseMillis, bound, `the store's release took ${releaseMillis} ms (built in ${builtMillis} ms)`)
  })
  return { hole, make, breaker, store, release }
})

describe("a blackholed PostgreSQL never holds a call past the store deadlines", () => {
  it.live(
    "making a breaker and a half-open call each answer within 1 s (deadline 250 ms, driver cancel 5 s); the store's release within its close deadline",
    () =>
      Effect.gen(function* () {
        const { breaker, hole, make, release, store } = yield* setup
        yield* hole.blackhole

        const [made, makeMillis] = yield* elapsed(make)
        assert.isBelow(makeMillis, 1_000, `make took ${makeMillis} ms`)

        yield* Effect.sleep(100) // past openFor: the next call is a half-open probe
        const [probe, probeMillis] = yield* elapsed(result(breaker.execute(Effect.succeed(1))))
        assert.isBelow(probeMillis, 1_000, `half-open call took ${probeMillis} ms`)
        assert.isTrue(Result.isSuccess(probe) || Result.isFailure(probe))
        assert.strictEqual((yield* made.state)._tag, "Closed")

        // The LISTEN connection lost wakes the poll, whose read the blackhole never answers: the
        // release interrupts it, and the driver's cancel of it must not be waited for.
        yield* eventually(store.listening, (on) => !on)
        yield* release
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "after a flap into a blackhole (the network cut, then answering nothing), the store's release within its close deadline",
    () =>
      Effect.gen(function* () {
        const { hole, release, store } = yield* setup
        // Cut, the LISTEN connection dies at once; back as a blackhole, the next one is opened
        // into it and never answered.
        yield* hole.cut
        yield* hole.blackhole
        yield* hole.restore
        yield* eventually(store.listening, (on) => !on)
        // The listener opens its next connection one check interval after the loss: give it ten.
        yield* Effect.sleep(10 * LISTEN_INTERVAL)
        yield* release
      }).pipe(Effect.scoped),
    30_000
  )
})
