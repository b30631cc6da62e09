/**
 * The breaker's `timeout` on real PostgreSQL: a row locked by another connection, read with
 * `SELECT ... FOR UPDATE` through the breaker, is answered at the deadline, and counts a failure.
 */
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Edition from "@circuitry/core/Edition"
import { assert, describe, it } from "@circuitry/testkit"
import { Context, Deferred, Effect, Exit, Layer, Option } from "effect"
import { SqlClient } from "#sql"
import { pgConfig } from "./backends.js"

const client = Effect.map(Layer.build(PgClient.layer({ ...pgConfig, maxConnections: 2 })), (context) =>
  Context.get(context, SqlClient.SqlClient)
)

describe("CircuitBreaker timeout on PostgreSQL", () => {
  it.scopedLive(
    "a locked row is answered at the deadline, not when the lock is let go",
    () =>
      Effect.gen(function* () {
        const admin = yield* client
        const schema = `circuitry_timeout_${process.pid}_${Date.now().toString(36)}`
        yield* Effect.acquireRelease(admin.unsafe(`CREATE SCHEMA ${schema}`), () =>
          Effect.orDie(admin.unsafe(`DROP SCHEMA ${schema} CASCADE`))
        )
        yield* admin.unsafe(`CREATE TABLE ${schema}.accounts (id int PRIMARY KEY, balance int)`)
        yield* admin.unsafe(`INSERT INTO ${schema}.accounts VALUES (1, 100)`)
        // another connection holds the row until the test ends
        const locked = yield* Deferred.make<void>()
        const letGo = yield* Deferred.make<void>()
        yield* admin
          .withTransaction(
            admin
              .unsafe(`SELECT balance FROM ${schema}.accounts WHERE id = 1 FOR UPDATE`)
              .pipe(Effect.andThen(Deferred.succeed(locked, undefined)), Effect.andThen(Deferred.await(letGo)))
          )
          .pipe(Effect.forkScoped)
        yield* Effect.addFinalizer(() => Deferred.succeed(letGo, undefined))
        yield* Deferred.await(locked)

        const sql = yield* client
        const breaker = yield* CircuitBreaker.make({
          name: "accounts",
          policy: Policy.consecutiveFailures(5),
          timeout: "300 millis"
        })
        const read = sql.unsafe(`SELECT balance FROM ${schema}.accounts WHERE id = 1 FOR UPDATE`)
        // How late a 300 ms timer wakes on this machine now: the deadline's own timer is as late.
        const timerStarted = performance.now()
        yield* Effect.sleep("300 millis")
        const timer = performance.now() - timerStarted
        const started = performance.now()
        const exit = yield* Effect.exit(CircuitBreaker.withBreaker(read, breaker))
        const elapsed = performance.now() - started
        assert.isTrue(Exit.isFailure(exit))
        const error = Exit.isFailure(exit) ? Option.getOrUndefined(Edition.findError(exit.cause)) : undefined
        assert.isTrue(CircuitBreaker.isBreakerTimeoutError(error), String(error))
        // at the deadline (300 ms, as late as a timer of 300 ms wakes), with room for a loaded
        // machine, and far from the lock's end (never)
        assert.isAtLeast(elapsed, 290)
        assert.isBelow(elapsed, timer + 700, `answered after ${elapsed} ms (a 300 ms timer: ${timer} ms)`)
        assert.strictEqual((yield* breaker.snapshot).counts.consecutiveFailures, 1)
      }),
    20_000
  )
})
