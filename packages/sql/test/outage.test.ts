import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { SqlBreakerStore } from "@circuitry/sql"
import { assert, describe, expect, it, result, Result, take, TestClock } from "@circuitry/testkit"
import { Context, Effect, Layer, Option } from "effect"
import type { StoreContext } from "./backends.js"
import { backends, eventually, pgConfig, row } from "./backends.js"
import { tcpProxy } from "../../../test-support/proxy.js"

const OPEN_FOR = 10_000

const breakerIn = (ctx: StoreContext, name: string) =>
  CircuitBreaker.make({ name, policy: Policy.consecutiveFailures(3), openFor: OPEN_FOR }).pipe(Effect.provide(ctx))

const sqlite = backends.find(([name]) => name === "sqlite")![1]
const pg = backends.find(([name]) => name === "pg")![1]

describe("an unreachable database never blocks or fails a call", () => {
  it.scoped("pg: calls carry on with local state, and the store catches up when it is back", () =>
    Effect.gen(function* () {
      const db = yield* pg
      const link = yield* tcpProxy(pgConfig.port)
      const ctx = yield* Layer.build(SqlBreakerStore.layerPg({ ...pgConfig, port: link.port }, { table: db.table }))
      const problems = yield* Context.get(ctx, SqlBreakerStore.SqlBreakerStore).subscribeProblems
      const breaker = yield* breakerIn(ctx, "payments")
      yield* link.cut

      // A breaker made now starts from its local state.
      const late = yield* breakerIn(ctx, "payments")
      assert.deepStrictEqual(yield* result(late.execute(Effect.succeed(1))), Result.succeed(1))
      // Calls run and are judged locally.
      assert.deepStrictEqual(yield* result(breaker.execute(Effect.succeed(1))), Result.succeed(1))
      for (let i = 0; i < 3; i++) yield* result(breaker.execute(Effect.fail("boom")))
      assert.deepStrictEqual(yield* breaker.state, CircuitBreaker.State.Open({ until: OPEN_FOR }))
      const rejected = yield* Effect.flip(breaker.execute(Effect.succeed(1)))
      assert.strictEqual(rejected._tag, "BreakerOpenError")
      // The background poll reports the outage once: within 250 ms (pollInterval), or within 1 s
      // (listenInterval) if the store was listening for NOTIFY when the link was cut.
      yield* TestClock.adjust(1_000)
      const problem = yield* take(problems)
      assert.strictEqual(problem.operation, "poll")
      expect(yield* row(db, "payments")).toStrictEqual(Option.none())

      // Back: the writer retries (every second) and the verdict reaches the database.
      yield* link.restore
      yield* TestClock.adjust(1_000)
      const stored = yield* eventually(
        Effect.tap(row(db, "payments"), () => TestClock.adjust(1_000)),
        (r) => Option.isSome(r) && r.value.state === "Open"
      )
      // Dated by the database, as old as it is: sent seconds after the trip (by the Clock the retries
      // ran on) with that much less time left, so still open OPEN_FOR from when it was made.
      const saved = Option.getOrThrow(stored)
      assert.strictEqual(saved.open_until - saved.verdict_at, OPEN_FOR)
    })
  )

  it.scoped("sqlite: another process holding the write lock delays the store, never a call", () =>
    Effect.gen(function* () {
      const db = yield* sqlite
      const ctx = yield* Layer.build(
        SqlBreakerStore.layerSqlite({ filename: db.filename, busyTimeout: "5 millis" }, { table: db.table })
      )
      const breaker = yield* breakerIn(ctx, "mail")
      // Another connection takes the write lock and keeps it.
      yield* db.sql.unsafe("BEGIN EXCLUSIVE").pipe(Effect.orDie)
      for (let i = 0; i < 3; i++) yield* result(breaker.execute(Effect.fail("boom")))
      assert.strictEqual((yield* breaker.state)._tag, "Open")
      assert.isTrue(Result.isFailure(yield* result(breaker.execute(Effect.succeed(1)))))
      yield* TestClock.adjust(1_000)
      expect(yield* row(db, "mail")).toStrictEqual(Option.none())
      yield* db.sql.unsafe("COMMIT").pipe(Effect.orDie)
      const stored = yield* eventually(
        Effect.tap(row(db, "mail"), () => TestClock.adjust(1_000)),
        (r) => Option.isSome(r) && r.value.state === "Open"
      )
      const saved = Option.getOrThrow(stored)
      assert.strictEqual(saved.open_until - saved.verdict_at, OPEN_FOR)
    })
  )
})
