/**
 * The `SqlClient` of `layerSqlite` on Effect 3: `@effect/sql`'s client over one libsql connection
 * (`libsql.ts`, opened by `sqliteConnection.ts`), shaped as `@effect/sql-sqlite-node`'s is over
 * better-sqlite3 (one connection, statements and transactions taking turns on it).
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as Client from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import type * as Libsql from "./libsql.js"
import * as SqliteConnection from "./sqliteConnection.js"

/** @internal */
export type Config = SqliteConnection.Config

const make = (driver: Libsql.Driver, config: Config): Effect.Effect<Client.SqlClient, SqlError, Scope.Scope> =>
  Effect.gen(function* () {
    const { compiler, libsql, spanAttributes, transformRows } = yield* SqliteConnection.open(
      driver,
      config,
      (cause) => new SqlError({ cause, message: "Failed to open the database" })
    )

    const { raw, rows, values } = SqliteConnection.statements((sql, params, values) =>
      Effect.withFiberRuntime<Libsql.Result, SqlError>((fiber) => {
        try {
          const safeIntegers = Context.get(fiber.currentContext, Client.SafeIntegers)
          return Effect.succeed(libsql.execute(sql, params, { values, safeIntegers }))
        } catch (cause) {
          return Effect.fail(new SqlError({ cause, message: "Failed to execute statement" }))
        }
      })
    )

    const connection: Connection = {
      execute: rows,
      executeUnprepared: (sql, params, transform) => rows(sql, params ?? [], transform),
      executeRaw: raw,
      executeValues: values,
      executeStream: () => Effect.dieMessage("executeStream not implemented")
    }

    // One connection: a statement waits for a transaction in progress to end, as with better-sqlite3.
    const semaphore = yield* Effect.makeSemaphore(1)
    const acquirer = semaphore.withPermits(1)(Effect.succeed(connection))
    const transactionAcquirer = Effect.uninterruptibleMask((restore) =>
      Effect.as(
        Effect.zipRight(
          restore(semaphore.take(1)),
          Effect.tap(Effect.scope, (scope) => Scope.addFinalizer(scope, semaphore.release(1)))
        ),
        connection
      )
    )

    return yield* Client.make({ acquirer, compiler, transactionAcquirer, spanAttributes, transformRows }).pipe(
      Effect.provide(Reactivity.layer)
    )
  })

/** @internal */
export const layer = (driver: Libsql.Driver, config: Config): Layer.Layer<Client.SqlClient, SqlError> =>
  Layer.scoped(Client.SqlClient, make(driver, config))
