/**
 * What the `SqlClient` of `layerSqlite` is made of on both majors (sqliteClient.effect3.ts and
 * sqliteClient.effect4.ts): one libsql connection opened for the client's scope, the SQLite
 * dialect's compiler, and the statements' results read from libsql's. Each major's file adds how a
 * statement reads `SafeIntegers` and makes its `SqlError`, and how statements take turns.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { type SqlError, Statement } from "#sql"
import * as Libsql from "./libsql.js"

/** @internal */
export interface Config extends Libsql.Config {
  readonly spanAttributes?: Record<string, unknown> | undefined
  readonly transformResultNames?: ((str: string) => string) | undefined
  readonly transformQueryNames?: ((str: string) => string) | undefined
}

/** Runs one statement: its rows as objects, or as arrays of values. */
type Run = (
  sql: string,
  params: ReadonlyArray<unknown>,
  values: boolean
) => Effect.Effect<Libsql.Result, SqlError.SqlError>

/**
 * The connection, opened now and closed with the scope, and what the client needs beside it.
 *
 * @internal
 */
export const open = (driver: Libsql.Driver, config: Config, openError: (cause: unknown) => SqlError.SqlError) =>
  Effect.map(
    Effect.acquireRelease(Effect.try({ try: () => Libsql.open(driver, config), catch: openError }), (libsql) =>
      Effect.sync(libsql.close)
    ),
    (libsql) => ({
      libsql,
      compiler: Statement.makeCompilerSqlite(config.transformQueryNames),
      transformRows: config.transformResultNames
        ? Statement.defaultTransforms(config.transformResultNames).array
        : undefined,
      spanAttributes: [
        ...Object.entries(config.spanAttributes ?? {}),
        ["db.system.name", "sqlite"] as const
      ] as ReadonlyArray<readonly [string, unknown]>
    })
  ) satisfies Effect.Effect<unknown, SqlError.SqlError, Scope.Scope>

/**
 * A connection's statements over `run`: rows (transformed when asked), the raw result, values.
 *
 * @internal
 */
export const statements = (run: Run) => ({
  rows: (sql: string, params: ReadonlyArray<unknown>, transform: ((rows: Array<any>) => any) | undefined) =>
    Effect.map(run(sql, params, false), (result) =>
      transform ? transform(result.rows as Array<any>) : (result.rows as ReadonlyArray<any>)
    ),
  raw: (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.map(run(sql, params, false), (result): unknown => result.info ?? result.rows),
  values: (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.map(run(sql, params, true), (result) => result.rows as ReadonlyArray<ReadonlyArray<unknown>>)
})
