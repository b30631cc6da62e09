/**
 * The `SqlClient` of `layerSqlite` on Effect 3: `@effect/sql`'s client over one libsql connection
 * (`libsql.ts`), shaped as `@effect/sql-sqlite-node`'s is over better-sqlite3 (one connection,
 * statements and transactions taking turns on it), with the SQLite dialect's compiler.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as Client from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Libsql from "./libsql.js"

/** @internal */
export interface Config extends Libsql.Config {
  readonly spanAttributes?: Record<string, unknown> | undefined
  readonly transformResultNames?: ((str: string) => string) | undefined
  readonly transformQueryNames?: ((str: string) => string) | undefined
}

const make = (driver: Libsql.Driver, config: Config): Effect.Effect<Client.SqlClient, SqlError, Scope.Scope> =>
  Effect.gen(function* () {
    const compiler = Statement.makeCompilerSqlite(config.transformQueryNames)
    const transformRows = config.transformResultNames
      ? Statement.defaultTransforms(config.transformResultNames).array
      : undefined
    const libsql = yield* Effect.acquireRelease(
      Effect.try({
        try: () => Libsql.open(driver, config),
        catch: (cause) => new SqlError({ cause, message: "Failed to open the database" })
      }),
      (libsql) => Effect.sync(libsql.close)
    )

    const run = (sql: string, params: ReadonlyArray<unknown>, values: boolean) =>
      Effect.withFiberRuntime<Libsql.Result, SqlError>((fiber) => {
        try {
          const safeIntegers = Context.get(fiber.currentContext, Client.SafeIntegers)
          return Effect.succeed(libsql.execute(sql, params, { values, safeIntegers }))
        } catch (cause) {
          return Effect.fail(new SqlError({ cause, message: "Failed to execute statement" }))
        }
      })

    const rows = (sql: string, params: ReadonlyArray<unknown>, transform: ((rows: Array<any>) => any) | undefined) =>
      Effect.map(run(sql, params, false), (result) =>
        transform ? transform(result.rows as Array<any>) : (result.rows as ReadonlyArray<any>)
      )

    const connection: Connection = {
      execute: (sql, params, transform) => rows(sql, params, transform),
      executeUnprepared: (sql, params, transform) => rows(sql, params ?? [], transform),
      executeRaw: (sql, params) => Effect.map(run(sql, params, false), (result) => result.info ?? result.rows),
      executeValues: (sql, params) =>
        Effect.map(run(sql, params, true), (result) => result.rows as ReadonlyArray<ReadonlyArray<unknown>>),
      executeStream: () => Effect.dieMessage("executeStream not implemented")
    }

    // One connection: a statement waits for a transaction in progress to end, as with better-sqlite3.
    const semaphore = yield* Effect.makeSemaphore(1)
    const acquirer = semaphore.withPermits(1)(Effect.succeed(connection))
    const transactionAcquirer = Effect.uninterruptibleMask((restore) =>
      Effect.as(
        Effect.andThen(
          restore(semaphore.take(1)),
          Effect.tap(Effect.scope, (scope) => Scope.addFinalizer(scope, semaphore.release(1)))
        ),
        connection
      )
    )

    return yield* Client.make({
      acquirer,
      compiler,
      transactionAcquirer,
      spanAttributes: [...Object.entries(config.spanAttributes ?? {}), ["db.system.name", "sqlite"]],
      transformRows
    }).pipe(Effect.provide(Reactivity.layer))
  })

/** @internal */
export const layer = (driver: Libsql.Driver, config: Config): Layer.Layer<Client.SqlClient, SqlError> =>
  Layer.scoped(Client.SqlClient, make(driver, config))
