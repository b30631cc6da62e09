/**
 * The SQL modules on Effect 4 (`#sql`; sql.effect3.ts has the same names): `effect/sql` and
 * `effect/reactivity`, part of effect itself, and what reads differently between the majors.
 * PostgreSQL is `@effect/sql-pg/PgClient` on both (0.x on Effect 3, 4.x on Effect 4).
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type { SqlError } from "effect/sql/SqlError"
import * as Stream from "effect/Stream"

/** `layerPg`'s config: `PgPoolConfig` (4.x keeps the pool's settings apart from `PgClientConfig`). */
export type PgConfig = PgClient.PgPoolConfig

export * as Reactivity from "effect/reactivity/Reactivity"
export * as Migrator from "effect/sql/Migrator"
export * as SqlClient from "effect/sql/SqlClient"
export * as SqlConnection from "effect/sql/SqlConnection"
export * as SqlError from "effect/sql/SqlError"
export * as Statement from "effect/sql/Statement"

/** The driver's own error under a `SqlError` (its `cause` on Effect 3; `reason.cause` on 4). */
export const driverCause = (error: SqlError): unknown => error.reason.cause

/**
 * The NOTIFYs on `channels`, as `[channel, payload]`, heard over one connection of its own, opened
 * with the client's config for as long as the stream runs, as on Effect 3 (sql.effect3.ts). Not
 * `client.listen`: 4.x takes a connection from the application's pool for each channel.
 *
 * The connection is closed before the LISTENs' own finalizers run (finalizers run last added
 * first): a closed session has no LISTEN left, while the UNLISTEN those finalizers send on a live
 * one waits uninterruptibly, with no deadline, for an answer that a blackholed connection never
 * gives (and a pool connection held that way would hold the pool's release too).
 */
export const listen = (
  client: PgClient.PgClient,
  channels: ReadonlyArray<string>
): Stream.Stream<readonly [channel: string, payload: string], SqlError> =>
  Stream.unwrap(
    Effect.gen(function* () {
      // Loaded here, as layerPg loads PgClient: SQLite users never load this optional peer.
      const PgConnection = yield* Effect.promise(() => import("@effect/sql-pg/PgConnection"))
      const scope = yield* Effect.scope
      const session = yield* Scope.fork(scope)
      const connection = yield* Scope.provide(PgConnection.make(client.config), session)
      const pinned = yield* connection.pin
      const queues = yield* Effect.forEach(channels, (channel) =>
        Effect.map(pinned.listen(channel), (queue) => [channel, queue] as const)
      )
      yield* Scope.addFinalizer(scope, Scope.close(session, Exit.void))
      return Stream.mergeAll(
        queues.map(([channel, queue]) => Stream.map(Stream.fromQueue(queue), (n) => [channel, n.payload] as const)),
        { concurrency: "unbounded" }
      )
    })
  )
