/**
 * The SQL modules on Effect 4 (`#sql`; sql.effect3.ts has the same names): `effect/sql` and
 * `effect/reactivity`, part of effect itself, and what reads differently between the majors.
 * PostgreSQL is `@effect/sql-pg/PgClient` on both (0.x on Effect 3, 4.x on Effect 4).
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import type { SqlError } from "effect/sql/SqlError"
import * as Stream from "effect/Stream"

export * as Reactivity from "effect/reactivity/Reactivity"
export * as Migrator from "effect/sql/Migrator"
export * as SqlClient from "effect/sql/SqlClient"
export * as SqlConnection from "effect/sql/SqlConnection"
export * as SqlError from "effect/sql/SqlError"
export * as Statement from "effect/sql/Statement"

/** The driver's own error under a `SqlError` (its `cause` on Effect 3; `reason.cause` on 4). */
export const driverCause = (error: SqlError): unknown => error.reason.cause

/**
 * The payloads of the NOTIFYs on `channel`. Effect 4's `listen` gives a queue once PostgreSQL has
 * confirmed the LISTEN, holding a connection for as long as the stream runs.
 */
export const listen = (client: PgClient.PgClient, channel: string): Stream.Stream<string, SqlError> =>
  Stream.unwrap(Effect.map(client.listen(channel), (queue) => Stream.map(Stream.fromQueue(queue), (n) => n.payload)))
