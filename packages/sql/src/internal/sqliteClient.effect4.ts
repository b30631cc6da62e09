/**
 * The `SqlClient` of `layerSqlite` on Effect 4: `effect/sql`'s client over one libsql connection
 * (`libsql.ts`, the same as on Effect 3), with the SQLite dialect's compiler. One connection, so
 * statements and transactions take turns on it: `makeSqliteAcquirers` holds its semaphore, and
 * rolls back before the next use when a COMMIT failed (Effect 3's client leaves that to libsql.ts).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Reactivity from "effect/reactivity/Reactivity"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Client from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import { classifySqliteError, SqlError } from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"
import * as Stream from "effect/Stream"
import * as Libsql from "./libsql.js"

/** @internal */
export interface Config extends Libsql.Config {
  readonly spanAttributes?: Record<string, unknown> | undefined
  readonly transformResultNames?: ((str: string) => string) | undefined
  readonly transformQueryNames?: ((str: string) => string) | undefined
}

const sqlError = (cause: unknown, message: string, operation: string) =>
  new SqlError({ reason: classifySqliteError(cause, { message, operation }) })

const make = (driver: Libsql.Driver, config: Config): Effect.Effect<Client.SqlClient, SqlError, Scope.Scope> =>
  Effect.gen(function* () {
    const compiler = Statement.makeCompilerSqlite(config.transformQueryNames)
    const transformRows = config.transformResultNames
      ? Statement.defaultTransforms(config.transformResultNames).array
      : undefined
    const libsql = yield* Effect.acquireRelease(
      Effect.try({
        try: () => Libsql.open(driver, config),
        catch: (cause) => sqlError(cause, "Failed to open the database", "connect")
      }),
      (libsql) => Effect.sync(libsql.close)
    )

    // Effect 4's SafeIntegers is a reference the fiber carries (a service of the context on 3).
    const run = (sql: string, params: ReadonlyArray<unknown>, values: boolean) =>
      Effect.withFiber<Libsql.Result, SqlError>((fiber) => {
        try {
          const safeIntegers = fiber.getRef(Client.SafeIntegers)
          return Effect.succeed(libsql.execute(sql, params, { values, safeIntegers }))
        } catch (cause) {
          return Effect.fail(sqlError(cause, "Failed to execute statement", "execute"))
        }
      })

    const rows = (sql: string, params: ReadonlyArray<unknown>, transform: ((rows: Array<any>) => any) | undefined) =>
      Effect.map(run(sql, params, false), (result) =>
        transform ? transform(result.rows as Array<any>) : (result.rows as ReadonlyArray<any>)
      )
    const values = (sql: string, params: ReadonlyArray<unknown>) =>
      Effect.map(run(sql, params, true), (result) => result.rows as ReadonlyArray<ReadonlyArray<unknown>>)

    const connection: Connection = {
      execute: rows,
      executeUnprepared: rows,
      executeRaw: (sql, params) => Effect.map(run(sql, params, false), (result) => result.info ?? result.rows),
      executeValues: values,
      executeValuesUnprepared: values,
      executeStream: () => Stream.die(new Error("executeStream not implemented"))
    }

    const acquirers = Client.makeSqliteAcquirers({
      connection: Effect.succeed(connection),
      semaphore: yield* Semaphore.make(1)
    })

    return yield* Client.make({
      ...acquirers,
      compiler,
      driver: "sqlite",
      spanAttributes: [...Object.entries(config.spanAttributes ?? {}), ["db.system.name", "sqlite"]],
      transformRows
    }).pipe(Effect.provide(Reactivity.layer))
  })

/** @internal */
export const layer = (driver: Libsql.Driver, config: Config): Layer.Layer<Client.SqlClient, SqlError> =>
  Layer.effect(Client.SqlClient, make(driver, config))
