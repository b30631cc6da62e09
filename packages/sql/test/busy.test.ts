/**
 * The SQLite driver after a statement fails with SQLITE_BUSY (another connection holds the write
 * lock). libsql 0.5.29 leaves such a statement in progress, so the connection's later writes went
 * into a transaction that never committed: reported done, seen by no other connection, and the
 * write lock kept from everyone else. These fail on a driver that keeps using that connection
 * (`src/internal/libsql.ts`); `outage.test.ts` shows the same through the store.
 */
import { assert, describe, it, result, Result } from "@circuitry/testkit"
import { Context, Effect, Layer, Option } from "effect"
import Libsql from "libsql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { driverCause, SqlClient, type SqlError } from "#sql"
import * as SqliteClient from "#sqliteClient"

/** Two clients on one new file: `store` gives up on a lock at once, `other` holds it. */
const files = Effect.gen(function* () {
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "circuitry-busy-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )
  const filename = path.join(dir, "busy.db")
  const client = (busyTimeoutMillis: number) =>
    Layer.build(SqliteClient.layer(Libsql, { filename, busyTimeoutMillis, wal: true, prepareCacheSize: 200 })).pipe(
      Effect.map((context) => Context.get(context, SqlClient.SqlClient))
    )
  const store = yield* client(5)
  const other = yield* client(5_000)
  yield* store`CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)`
  const seenByOther = Effect.map(other<{ k: string }>`SELECT k FROM t ORDER BY k`, (rows) => rows.map((r) => r.k))
  return { store, other, seenByOther }
})

const busy = (outcome: Result<unknown, SqlError.SqlError>) => {
  assert.isTrue(Result.isFailure(outcome))
  const error = Option.getOrUndefined(Result.getFailure(outcome))
  if (error !== undefined) assert.match(String(driverCause(error)), /SQLITE_BUSY|locked/i)
}

describe("a statement that failed with SQLITE_BUSY leaves nothing behind", () => {
  it.scoped("outside a transaction: later writes are committed, and the lock is free for others", () =>
    Effect.gen(function* () {
      const { other, seenByOther, store } = yield* files
      yield* other.unsafe("BEGIN IMMEDIATE")
      busy(yield* result(store`INSERT INTO t VALUES ('lost', 1) RETURNING k`))
      busy(yield* result(store`INSERT INTO t VALUES ('lost', 1)`))
      yield* other.unsafe("COMMIT")

      yield* store`INSERT INTO t VALUES ('a', 1) ON CONFLICT (k) DO UPDATE SET v = excluded.v RETURNING k`
      yield* store`INSERT INTO t VALUES ('b', 2)`
      assert.deepStrictEqual(yield* seenByOther, ["a", "b"])
      // The other connection can take the write lock (the store's connection holds none).
      yield* other`INSERT INTO t VALUES ('c', 3)`
      assert.deepStrictEqual(yield* seenByOther, ["a", "b", "c"])
    }).pipe(Effect.orDie)
  )

  it.scoped("in a transaction: it fails whole, nothing it wrote is kept, and the next one commits", () =>
    Effect.gen(function* () {
      const { other, seenByOther, store } = yield* files
      yield* other.unsafe("BEGIN IMMEDIATE")
      const failed = yield* result(
        store.withTransaction(Effect.andThen(store`SELECT k FROM t`, store`INSERT INTO t VALUES ('lost', 1)`))
      )
      busy(failed)
      yield* other.unsafe("COMMIT")
      yield* store.withTransaction(
        Effect.andThen(store`INSERT INTO t VALUES ('a', 1)`, store`INSERT INTO t VALUES ('b', 2)`)
      )
      assert.deepStrictEqual(yield* seenByOther, ["a", "b"])
    }).pipe(Effect.orDie)
  )

  it.scoped("in a transaction that carries on past the failure: its commit fails, nothing is kept", () =>
    Effect.gen(function* () {
      const { other, seenByOther, store } = yield* files
      yield* store`INSERT INTO t VALUES ('before', 0)`
      yield* other.unsafe("BEGIN IMMEDIATE")
      yield* store.unsafe("BEGIN")
      yield* store`SELECT k FROM t`
      busy(yield* result(store`INSERT INTO t VALUES ('lost', 1)`))
      yield* other.unsafe("COMMIT")
      // The caller ignores the failure and goes on: the rest of the transaction must not be
      // written on its own, and its COMMIT must not report success.
      assert.isTrue(Result.isFailure(yield* result(store`INSERT INTO t VALUES ('after', 2)`)))
      assert.isTrue(Result.isFailure(yield* result(store.unsafe("COMMIT"))))
      assert.deepStrictEqual(yield* seenByOther, ["before"])
      // And the connection works again once that transaction is over.
      yield* store`INSERT INTO t VALUES ('next', 3)`
      assert.deepStrictEqual(yield* seenByOther, ["before", "next"])
    }).pipe(Effect.orDie)
  )
})
