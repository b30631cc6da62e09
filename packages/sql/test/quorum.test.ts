import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { SqlBreakerStore } from "@circuitry/sql"
import { assert, describe, it, result } from "@circuitry/testkit"
import { Context, Effect, Option } from "effect"
import type { StoreContext } from "./backends.js"
import { backends, eventually, instance, row } from "./backends.js"

const OPEN_FOR = 10_000

const memberIn = (ctx: StoreContext) =>
  CircuitBreaker.make({
    name: "payments",
    policy: Policy.consecutiveFailures(2),
    openFor: OPEN_FOR,
    sharing: { quorum: 2 }
  }).pipe(Effect.provide(ctx))

const trip = (breaker: CircuitBreaker.CircuitBreaker) =>
  Effect.gen(function* () {
    for (let i = 0; i < 2; i++) yield* result(breaker.execute(Effect.fail("boom")))
    assert.strictEqual((yield* breaker.state)._tag, "Open")
  })

for (const [backend, fresh] of backends) {
  describe(`sharing.quorum on SqlBreakerStore (${backend})`, () => {
    it.scoped("quorum 2 of 3: one trip opens its member alone; the second opens the fleet", () =>
      Effect.gen(function* () {
        const db = yield* fresh
        const contexts = yield* Effect.all([1, 2, 3].map(() => instance(db)))
        const members = yield* Effect.forEach(contexts, memberIn)
        const store = Context.get(contexts[0]!, SqlBreakerStore.SqlBreakerStore)
        yield* trip(members[0]!)
        // the trip reaches the members table, and no verdict the circuits table
        const trips = db.sql<{ n: unknown }>`SELECT COUNT(*) AS n FROM ${db.sql(`${db.table}_members`)}
          WHERE name = 'payments' AND trip_at IS NOT NULL`.pipe(
          Effect.map((rows) => Number(rows[0]!.n)),
          Effect.orDie
        )
        yield* eventually(trips, (n) => n === 1)
        yield* store.poll
        // (failure counts may have made the row: it holds no verdict)
        assert.strictEqual(Option.getOrNull(yield* row(db, "payments"))?.state ?? null, null)
        assert.strictEqual((yield* members[1]!.state)._tag, "Closed")
        assert.strictEqual((yield* members[2]!.state)._tag, "Closed")
        yield* trip(members[1]!)
        const stored = yield* eventually(row(db, "payments"), (r) => Option.isSome(r) && r.value.state === "Open")
        // dated by the database: made at its now, open for OPEN_FOR past it
        const { open_until, verdict_at } = Option.getOrThrow(stored)
        assert.strictEqual(Number(open_until) - Number(verdict_at), OPEN_FOR)
        // every member hears it at the next poll of its store, as durations from the database's now
        // (real time passed since the save: a little less time left on the members' TestClock)
        for (const ctx of contexts) yield* Context.get(ctx, SqlBreakerStore.SqlBreakerStore).poll
        for (const m of members) {
          const state = yield* eventually(m.state, (s) => s._tag === "Open")
          assert.strictEqual(state._tag, "Open")
          if (state._tag === "Open") {
            assert.isAtMost(state.until, OPEN_FOR)
            assert.isAbove(state.until, OPEN_FOR - 5_000)
          }
        }
      })
    )

    it.scoped("a database made before the members table gets it from migration 2", () =>
      Effect.gen(function* () {
        const db = yield* fresh
        yield* instance(db)
        const members = db.sql(`${db.table}_members`)
        // as a database migrated by an earlier version: migration 1 only, no members table (nor
        // migration 3's verdict_by)
        yield* db.sql`DROP TABLE ${members}`.pipe(Effect.orDie)
        yield* db.sql`ALTER TABLE ${db.sql(db.table)} DROP COLUMN verdict_by`.pipe(Effect.orDie)
        yield* db.sql`DELETE FROM ${db.sql(`${db.table}_migrations`)} WHERE migration_id >= 2`.pipe(Effect.orDie)
        const ctx = yield* instance(db)
        const breaker = yield* memberIn(ctx)
        // the member's heartbeat lands in the table the migration made
        const beats = db.sql<{ n: unknown }>`SELECT COUNT(*) AS n FROM ${members} WHERE beat_at IS NOT NULL`.pipe(
          Effect.map((rows) => Number(rows[0]!.n)),
          Effect.orDie
        )
        yield* eventually(beats, (n) => n === 1)
        assert.strictEqual((yield* breaker.state)._tag, "Closed")
      })
    )
  })
}
