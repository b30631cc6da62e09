/**
 * The `SqlClient` of `layerSqlite` on Effect 4: `effect/sql`'s client over one libsql connection
 * (`libsql.ts`, opened by `sqliteConnection.ts`, as on Effect 3). One connection, so statements and
 * transactions take turns on it: `makeSqliteAcquirers` holds its semaphore, and rolls back before
 * the next use when a COMMIT failed.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Reactivity from "effect/reactivity/Reactivity"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Client from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import { classifySqliteError, SqlError } from "effect/sql/SqlError"
import * as Stream from "effect/Stream"
import type * as Libsql from "./libsql.js"
import * as SqliteConnection from "./sqliteConnection.js"

/** @internal */
export type Config = SqliteConnection.Config

const sqlError = (cause: unknown, message: string, operation: string) =>
  new SqlError({ reason: classifySqliteError(cause, { message, operation }) })

const make = (driver: Libsql.Driver, config: Config): Effect.Effect<Client.SqlClient, SqlError, Scope.Scope> =>
  Effect.gen(function* () {
    const { compiler, libsql, spanAttributes, transformRows } = yield* SqliteConnection.open(driver, config, (cause) =>
      sqlError(cause, "Failed to open the database", "connect")
    )

    // Effect 4's SafeIntegers is a reference the fiber carries (a service of the context on 3).
    const { raw, rows, values } = SqliteConnection.statements((sql, params, values) =>
      Effect.withFiber<Libsql.Result, SqlError>((fiber) => {
        try {
          const safeIntegers = fiber.getRef(Client.SafeIntegers)
          return Effect.succeed(libsql.execute(sql, params, { values, safeIntegers }))
        } catch (cause) {
          return Effect.fail(sqlError(cause, "Failed to execute statement", "execute"))
        }
      })
    )

    const connection: Connection = {
      execute: rows,
      executeUnprepared: rows,
      executeRaw: raw,
      executeValues: values,
      executeValuesUnprepared: values,
      executeStream: () => Stream.die(new Error("executeStream not implemented"))
    }

    const acquirers = Client.makeSqliteAcquirers({
      connection: Effect.succeed(connection),
      semaphore: yield* Semaphore.make(1)
    })

    return yield* Client.make({ ...acquirers, compiler, driver: "sqlite", spanAttributes, transformRows }).pipe(
      Effect.provide(Reactivity.layer)
    )
  })

/** @internal */
export const layer = (driver: Libsql.Driver, config: Config): Layer.Layer<Client.SqlClient, SqlError> =>
  Layer.effect(Client.SqlClient, make(driver, config))
