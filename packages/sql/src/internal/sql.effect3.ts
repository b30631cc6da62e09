/**
 * The SQL modules on Effect 3 (`#sql`; sql.effect4.ts has the same names): `@effect/sql`'s modules
 * and `@effect/experimental`'s Reactivity, and what reads differently between the majors. The
 * sources and the tests take them from here, so that no other file names a module of one major.
 * PostgreSQL is `@effect/sql-pg/PgClient` on both (0.x on Effect 3, 4.x on Effect 4).
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Stream from "effect/Stream"

/** `layerPg`'s config: `PgClientConfig` (0.x holds the pool's settings too). */
export type PgConfig = PgClient.PgClientConfig

export * as Reactivity from "@effect/experimental/Reactivity"
export * as Migrator from "@effect/sql/Migrator"
export * as SqlClient from "@effect/sql/SqlClient"
export * as SqlConnection from "@effect/sql/SqlConnection"
export * as SqlError from "@effect/sql/SqlError"
export * as Statement from "@effect/sql/Statement"

/** The driver's own error under a `SqlError` (its `cause` on Effect 3; `reason.cause` on 4). */
export const driverCause = (error: SqlError): unknown => error.cause

/**
 * The NOTIFYs on `channels`, as `[channel, payload]`, heard over one connection. Effect 3's
 * `listen` (postgres.js) listens on every channel over one connection of its own, outside the
 * pool; each stream subscribes when run and does not say when PostgreSQL has confirmed the LISTEN.
 */
export const listen = (
  client: PgClient.PgClient,
  channels: ReadonlyArray<string>
): Stream.Stream<readonly [channel: string, payload: string], SqlError> =>
  Stream.mergeAll(
    channels.map((channel) => Stream.map(client.listen(channel), (payload) => [channel, payload] as const)),
    { concurrency: "unbounded" }
  )
