import { BreakerStore } from "@circuitry/breaker"
import { assert, describe, it } from "@circuitry/testkit"
import { Context, Effect, Option } from "effect"
import { Migrator, SqlClient } from "#sql"
import { backends, instance, row } from "./backends.js"

/**
 * The tables as migration 1 made them (before verdict_by), with their migration recorded as run;
 * with `members`, migration 2's members table too (a database of the version before verdict_by).
 */
const schemaOne = (sql: SqlClient.SqlClient, table: string, members = false) =>
  Migrator.make({})({
    table: `${table}_migrations`,
    loader: Migrator.fromRecord({
      ...(members
        ? {
            "2_create_members": sql`CREATE TABLE ${sql(`${table}_members`)} (
  name TEXT NOT NULL, member TEXT NOT NULL, beat_at BIGINT, trip_at BIGINT, PRIMARY KEY (name, member)
)`
          }
        : {}),
      "1_create_circuits": Effect.andThen(
        sql`CREATE TABLE ${sql(table)} (
  name TEXT NOT NULL PRIMARY KEY,
  state TEXT,
  open_until BIGINT NOT NULL DEFAULT 0,
  verdict_at BIGINT NOT NULL DEFAULT 0,
  origin TEXT NOT NULL DEFAULT '',
  consecutive_failures BIGINT NOT NULL DEFAULT 0,
  last_failure_at BIGINT,
  updated_at BIGINT NOT NULL
)`,
        sql`CREATE TABLE ${sql(`${table}_probes`)} (
  name TEXT NOT NULL, slot INTEGER NOT NULL, token TEXT NOT NULL, expires_at BIGINT NOT NULL, PRIMARY KEY (name, slot)
)`
      )
    })
  }).pipe(Effect.provideService(SqlClient.SqlClient, sql))

for (const [backend, fresh] of backends) {
  describe(`SqlBreakerStore schema (${backend})`, () => {
    for (const [made, members] of [
      ["migration 1", false],
      ["migrations 1 and 2", true]
    ] as const) {
      it.scoped(
        `tables of ${made} are upgraded in place: their verdicts stay, and who asked is kept from then on`,
        () =>
          Effect.gen(function* () {
            const db = yield* fresh
            yield* Effect.orDie(schemaOne(db.sql, db.table, members))
            // a verdict stored by a schema-1 store, on the database's clock: open for a minute from now
            yield* db.sql`INSERT INTO ${db.sql(db.table)} (name, state, open_until, verdict_at, origin, updated_at)
          VALUES ('kept', 'Open', ${Date.now() + 60_000}, ${Date.now()}, 'old-member', 0)`.pipe(Effect.orDie)
            const store = Context.get(yield* instance(db), BreakerStore.BreakerStore)
            const kept = yield* store.connect("kept")
            const loaded = Option.getOrThrow(yield* kept.verdict.load)
            assert.deepStrictEqual([loaded.state, loaded.origin, loaded.by], ["Open", "old-member", undefined])
            assert.isAbove(loaded.remainingMillis, 50_000)
            // the new column: a verdict's `by` is stored and read back
            yield* kept.verdict.save({
              state: "Isolated",
              remainingMillis: 0,
              ageMillis: 0,
              origin: "new-member",
              by: "ops"
            })
            assert.strictEqual(Option.getOrThrow(yield* kept.verdict.load).by, "ops")
            const stored = yield* db.sql<{ verdict_by: unknown }>`SELECT verdict_by FROM ${db.sql(db.table)}
          WHERE name = 'kept'`.pipe(Effect.orDie)
            assert.strictEqual(stored[0]!.verdict_by, "ops")
            assert.strictEqual(Option.getOrThrow(yield* row(db, "kept")).state, "Isolated")
            // every migration is recorded, in order, so the next store runs nothing again
            const ids = yield* db.sql<{
              migration_id: unknown
            }>`SELECT migration_id FROM ${db.sql(`${db.table}_migrations`)}
          ORDER BY migration_id`.pipe(Effect.orDie)
            assert.deepStrictEqual(
              ids.map((r) => Number(r.migration_id)),
              [1, 2, 3]
            )
            // the members table (migration 2) is there and usable
            const circuit = yield* store.connect("kept")
            assert.strictEqual(yield* circuit.fleet!.heartbeat({ member: "m", now: 1_000, since: 0 }), 1)
            yield* instance(db)
          })
      )
    }
  })
}
