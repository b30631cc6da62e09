/**
 * The two real databases the suite runs against: SQLite on a temporary file and PostgreSQL on the
 * local server, each test in its own file or schema, removed afterwards.
 */
import type { BreakerStore } from "@circuitry/breaker"
import { SqlBreakerStore } from "@circuitry/sql"
import * as PgClient from "@effect/sql-pg/PgClient"
import Libsql from "libsql"
import { Context, Effect, Layer, Option } from "effect"
import type { Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { SqlClient } from "#sql"
import * as SqliteClient from "#sqliteClient"

export const pgConfig = {
  host: "127.0.0.1",
  port: 5432,
  username: "postgres",
  database: "test",
  maxConnections: 4
} as const

export type StoreContext = Context.Context<BreakerStore.BreakerStore | SqlBreakerStore.SqlBreakerStore>

/** One test's database. */
export interface Db {
  readonly backend: "sqlite" | "pg"
  readonly table: string
  /** A client of its own, for assertions and for writing rows by hand. */
  readonly sql: SqlClient.SqlClient
  /** A store on a connection (or pool) of its own: another worker, another process. */
  readonly store: (
    options?: Omit<SqlBreakerStore.Options, "table">
  ) => Layer.Layer<
    BreakerStore.BreakerStore | SqlBreakerStore.SqlBreakerStore,
    SqlBreakerStore.InvalidSqlOptions | BreakerStore.BreakerStoreError
  >
  /** SQLite only: the database file. */
  readonly filename: string
}

/**
 * Tests read verdicts made elsewhere with an explicit `poll`, so that they do not depend on how
 * many background polls a `TestClock.adjust` wakes; the background poll has tests of its own.
 */
const quiet = { pollInterval: "1 hour" } as const

let counter = 0
const unique = (prefix: string) => `${prefix}_${process.pid}_${Date.now().toString(36)}_${counter++}`

const sqlite: Effect.Effect<Db, unknown, Scope.Scope> = Effect.gen(function* () {
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "circuitry-sql-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )
  const filename = path.join(dir, "breakers.db")
  const table = "breakers"
  // Another connection on the file, through the store's driver, waiting up to 5 s for a lock (as the
  // better-sqlite3 client these tests used before did by default).
  const context = yield* Layer.build(
    SqliteClient.layer(Libsql, { filename, busyTimeoutMillis: 5_000, wal: true, prepareCacheSize: 200 })
  )
  return {
    backend: "sqlite",
    table,
    filename,
    sql: Context.get(context, SqlClient.SqlClient),
    store: (options) => SqlBreakerStore.layerSqlite({ filename }, { ...quiet, ...options, table })
  } satisfies Db
})

const pg: Effect.Effect<Db, unknown, Scope.Scope> = Effect.gen(function* () {
  const context = yield* Layer.build(PgClient.layer(pgConfig))
  const sql = Context.get(context, SqlClient.SqlClient)
  const schema = unique("circuitry_sql_test")
  yield* Effect.acquireRelease(sql.unsafe(`CREATE SCHEMA ${schema}`), () =>
    Effect.orDie(sql.unsafe(`DROP SCHEMA ${schema} CASCADE`))
  )
  const table = `${schema}.breakers`
  return {
    backend: "pg",
    table,
    filename: "",
    sql,
    store: (options) => SqlBreakerStore.layerPg(pgConfig, { ...quiet, ...options, table })
  } satisfies Db
})

export const backends: ReadonlyArray<readonly [string, Effect.Effect<Db, unknown, Scope.Scope>]> = [
  ["sqlite", sqlite],
  ["pg", pg]
]

/** Builds a store in the current scope: one more member of the fleet. */
export const instance = (db: Db, options?: Omit<SqlBreakerStore.Options, "table">) => Layer.build(db.store(options))

/** A row as the tests read it: every number as a number. */
export interface Row {
  readonly name: string
  readonly state: string | null
  readonly open_until: number
  readonly verdict_at: number
  readonly origin: string
  readonly consecutive_failures: number
  readonly last_failure_at: number | null
  readonly updated_at: number
}

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v))

export const rows = (db: Db, name: string): Effect.Effect<ReadonlyArray<Row>> =>
  db.sql<Record<string, unknown>>`SELECT * FROM ${db.sql(db.table)} WHERE name = ${name}`.pipe(
    Effect.map((rs) =>
      rs.map((r) => ({
        name: r.name as string,
        state: (r.state as string | null) ?? null,
        open_until: Number(r.open_until),
        verdict_at: Number(r.verdict_at),
        origin: r.origin as string,
        consecutive_failures: Number(r.consecutive_failures),
        last_failure_at: num(r.last_failure_at),
        updated_at: Number(r.updated_at)
      }))
    ),
    Effect.orDie
  )

export const row = (db: Db, name: string): Effect.Effect<Option.Option<Row>> =>
  Effect.map(rows(db, name), (rs) => (rs[0] === undefined ? Option.none() : Option.some(rs[0])))

export const countRows = (db: Db): Effect.Effect<number> =>
  db.sql<{ n: unknown }>`SELECT COUNT(*) AS n FROM ${db.sql(db.table)}`.pipe(
    Effect.map((rs) => Number(rs[0]!.n)),
    Effect.orDie
  )

/**
 * Waits, in real time, for background I/O (the breaker's writer, a child process) to reach the
 * database: the condition is checked again every 10 ms, at most `tries` times (10 s by default: the machine may be busy).
 */
export const eventually = <A, E, R>(
  check: Effect.Effect<A, E, R>,
  ok: (a: A) => boolean,
  tries = 1000
): Effect.Effect<A, E | Error, R> =>
  Effect.gen(function* () {
    let last: A | undefined
    for (let i = 0; i < tries; i++) {
      last = yield* check
      if (ok(last)) return last
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
    return yield* Effect.fail(new Error(`condition not reached; last value: ${JSON.stringify(last)}`))
  })
