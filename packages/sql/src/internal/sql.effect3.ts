/**
 * The SQL modules on Effect 3 (`#sql`; sql.effect4.ts has the same names): `@effect/sql`'s modules
 * and `@effect/experimental`'s Reactivity, and what reads differently between the majors. The
 * sources and the tests take them from here, so that no other file names a module of one major.
 * PostgreSQL is `@effect/sql-pg/PgClient` on both (0.x on Effect 3, 4.x on Effect 4).
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Stream from "effect/Stream"

export * as Reactivity from "@effect/experimental/Reactivity"
export * as Migrator from "@effect/sql/Migrator"
export * as SqlClient from "@effect/sql/SqlClient"
export * as SqlConnection from "@effect/sql/SqlConnection"
export * as SqlError from "@effect/sql/SqlError"
export * as Statement from "@effect/sql/Statement"

/** The driver's own error under a `SqlError` (its `cause` on Effect 3; `reason.cause` on 4). */
export const driverCause = (error: SqlError): unknown => error.cause

/**
 * The payloads of the NOTIFYs on `channel`. Effect 3's `listen` is a stream that subscribes when
 * run and does not say when PostgreSQL has confirmed the LISTEN.
 */
export const listen = (client: PgClient.PgClient, channel: string): Stream.Stream<string, SqlError> =>
  client.listen(channel)
