/**
 * A SQLite file through `libsql` (the better-sqlite3 API over libSQL, a fork of SQLite, whose binary
 * is an npm package per platform: nothing is compiled or downloaded from elsewhere on install). No
 * Effect in here: the `SqlClient` of each Effect major wraps this same connection.
 *
 * Why it does more than call the driver: libsql 0.5.29 never resets a statement that failed with
 * SQLITE_BUSY (better-sqlite3 resets every statement after each call). SQLite keeps such a
 * statement in progress, to be stepped again, and counts it as an active writer, so every later
 * statement of the connection runs in a transaction that never commits: writes are reported
 * done, no other connection sees them, and the connection keeps the write lock from every other
 * writer (tursodatabase/libsql-client-ts#352; the fix, tursodatabase/libsql-js#238, is not
 * released). The driver has no call that resets a statement without running it again, so a
 * connection with a statement that failed busy is closed (SQLite rolls back what it held and lets
 * its locks go) and the next statement opens a fresh one (`test/busy.test.ts`).
 */

/** The part of libsql's `Database` used here (its own types ship with the package). */
export interface Driver {
  new (filename: string): Database
}

interface Database {
  readonly inTransaction: boolean
  exec(sql: string): void
  prepare(sql: string): PreparedStatement
  close(): void
}

interface PreparedStatement {
  readonly reader: boolean
  raw(toggle?: boolean): PreparedStatement
  safeIntegers(toggle?: boolean): PreparedStatement
  all(...params: ReadonlyArray<unknown>): Array<unknown>
  run(...params: ReadonlyArray<unknown>): { readonly changes: number; readonly lastInsertRowid: number | bigint }
}

/** @internal */
export interface Config {
  readonly filename: string
  /** How long a statement waits for another connection's lock before it fails with SQLITE_BUSY. */
  readonly busyTimeoutMillis: number
  /** `journal_mode = WAL` (readers never wait for the writer), as `@effect/sql-sqlite-node` sets it. */
  readonly wal: boolean
  /** Prepared statements kept per connection, the least recently used dropped first. */
  readonly prepareCacheSize: number
}

/** @internal */
export interface Execution {
  /** Rows as arrays of values (`executeValues`) rather than objects. */
  readonly values: boolean
  readonly safeIntegers: boolean
}

/** @internal */
export interface Result {
  readonly rows: ReadonlyArray<unknown>
  readonly info?: { readonly changes: number; readonly lastInsertRowid: number | bigint } | undefined
}

/** @internal */
export interface Connection {
  /** Runs one statement: its rows, or for a statement that returns none, the driver's run info. */
  readonly execute: (sql: string, params: ReadonlyArray<unknown>, execution: Execution) => Result
  readonly close: () => void
}

/** SQLITE_BUSY (5) and SQLITE_LOCKED (6) with their extended codes: the failures that leave a statement in progress. */
const isBusy = (cause: unknown): boolean => {
  if (typeof cause !== "object" || cause === null) return false
  const { code, rawCode } = cause as { code?: unknown; rawCode?: unknown }
  if (typeof rawCode === "number") return (rawCode & 0xff) === 5 || (rawCode & 0xff) === 6
  return typeof code === "string" && /^SQLITE_(BUSY|LOCKED)/.test(code)
}

const endsTransaction = /^\s*(COMMIT|END|ROLLBACK)(\s+TRANSACTION)?\s*;?\s*$/i
const isRollback = /^\s*ROLLBACK(\s+TRANSACTION)?\s*;?\s*$/i

/**
 * Opens the file now (so that a bad path fails the layer) and keeps one connection open, replaced
 * after a statement fails busy.
 *
 * @internal
 */
export const open = (Sqlite: Driver, config: Config): Connection => {
  const connect = (): Database => {
    const db = new Sqlite(config.filename)
    try {
      db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(config.busyTimeoutMillis))}`)
      // all(), not run(): libsql's run() stops at the first row, and this pragma returns one.
      if (config.wal) db.prepare("PRAGMA journal_mode = WAL").all()
      return db
    } catch (cause) {
      db.close()
      throw cause
    }
  }

  let db: Database | undefined = connect()
  const prepared = new Map<string, PreparedStatement>()
  /**
   * Set when a statement of an explicit transaction failed busy: closing the connection rolled the
   * transaction back, so its remaining statements must fail (not run on their own, in autocommit)
   * until it ends. Its ROLLBACK then succeeds; its COMMIT fails, since nothing it wrote was kept.
   */
  let lost: string | undefined

  const replace = (): void => {
    prepared.clear()
    const old = db
    db = undefined
    try {
      old?.close()
    } catch {
      // Already unusable; the next statement opens a fresh connection either way.
    }
  }

  const prepare = (conn: Database, sql: string): PreparedStatement => {
    const cached = prepared.get(sql)
    if (cached !== undefined) {
      prepared.delete(sql)
      prepared.set(sql, cached)
      return cached
    }
    const statement = conn.prepare(sql)
    if (config.prepareCacheSize > 0) {
      if (prepared.size >= config.prepareCacheSize) prepared.delete(prepared.keys().next().value!)
      prepared.set(sql, statement)
    }
    return statement
  }

  const execute = (sql: string, params: ReadonlyArray<unknown>, execution: Execution): Result => {
    if (lost !== undefined) {
      const reason = lost
      if (endsTransaction.test(sql)) lost = undefined
      if (isRollback.test(sql)) return { rows: [] }
      throw new Error(
        `the transaction was rolled back (its connection was reset after ${reason}); nothing it wrote was kept`
      )
    }
    db ??= connect()
    const inTransaction = db.inTransaction
    try {
      const statement = prepare(db, sql)
      statement.safeIntegers(execution.safeIntegers)
      // Statements that return rows are read to the end with all(): in autocommit, a write is
      // committed only when its statement finishes (INSERT ... RETURNING among them).
      if (statement.reader) return { rows: statement.raw(execution.values).all(...params) }
      return { rows: [], info: statement.run(...params) }
    } catch (cause) {
      // (A ":memory:" database, which a fresh connection would not find again, is private to its
      // connection: no other one can hold its lock.)
      if (isBusy(cause)) {
        replace()
        // A COMMIT or ROLLBACK that failed busy ends the transaction too (the caller learns that
        // it failed, and closing rolled it back): nothing after it belongs to it.
        if (inTransaction && !endsTransaction.test(sql)) {
          lost = cause instanceof Error ? cause.message : String(cause)
        }
      }
      throw cause
    }
  }

  return {
    execute,
    close: () => {
      lost = undefined
      replace()
    }
  }
}
