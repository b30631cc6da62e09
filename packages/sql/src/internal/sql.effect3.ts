/**
 * The SQL modules on Effect 3 (`#sql`; sql.effect4.ts has the same names): `@effect/sql`'s modules
 * and `@effect/experimental`'s Reactivity, and what reads differently between the majors. The
 * sources and the tests take them from here, so that no other file names a module of one major.
 * PostgreSQL is `@effect/sql-pg/PgClient` on both (0.x on Effect 3, 4.x on Effect 4).
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import type * as PgClient from "@effect/sql-pg/PgClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Mailbox from "effect/Mailbox"
import * as Scope from "effect/Scope"
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

/** How long opening the listen connection may take, unless the client's config says: 4.x's default. */
const CONNECT_TIMEOUT = Duration.seconds(5)

/**
 * The NOTIFYs on `channels`, as `[channel, payload]`, heard over one connection of its own, opened
 * with the client's config for as long as the stream runs, as on Effect 4. Each stream does not
 * say when PostgreSQL has confirmed its LISTEN.
 *
 * Not `client.listen` itself: 0.x listens over a connection that the client keeps for as long as
 * the client lasts, opened with no deadline (pg waits for a blackholed server for good) in a step
 * that cannot be interrupted, which the client's own release then waits for: one LISTEN begun as
 * the network went dark held that release, and the layer's, without end. Here the connection is a
 * client of its own (`PgClient.make` with one connection, opened within `connectTimeout`, 5 s by
 * default; its pool's connection, used once to check the server, is let go when idle), whose
 * listen connection is that client's to close: on the client's release, within a second (0.x
 * ends it with that deadline).
 *
 * That client is released before the LISTENs' own finalizers run: a closed session has no LISTEN
 * left, while the UNLISTEN those finalizers send on a live connection waits, uninterruptibly and
 * with no deadline, for an answer that a blackholed connection never gives.
 */
export const listen = (
  client: PgClient.PgClient,
  channels: ReadonlyArray<string>
): Stream.Stream<readonly [channel: string, payload: string], SqlError> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      // Loaded here, as layerPg loads it: SQLite users never load this optional peer.
      const Pg = yield* Effect.promise(() => import("@effect/sql-pg/PgClient"))
      const scope = yield* Effect.scope
      const session = yield* Scope.fork(scope, ExecutionStrategy.sequential)
      const own = yield* Pg.make({
        ...client.config,
        connectTimeout: client.config.connectTimeout ?? CONNECT_TIMEOUT,
        minConnections: 0,
        maxConnections: 1,
        idleTimeout: Duration.millis(1)
      }).pipe(Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make), Scope.extend(session))
      const heard = yield* Mailbox.make<readonly [channel: string, payload: string], SqlError>()
      // Forked into `scope` before the session's close is added: the session closes first.
      yield* Stream.mergeAll(
        channels.map((channel) => Stream.map(own.listen(channel), (payload) => [channel, payload] as const)),
        { concurrency: "unbounded" }
      ).pipe(
        Stream.runForEach((notification) => heard.offer(notification)),
        Effect.exit,
        Effect.flatMap((exit) => heard.done(exit)),
        Effect.forkIn(scope)
      )
      yield* Scope.addFinalizer(scope, Scope.close(session, Exit.void))
      return Mailbox.toStream(heard)
    })
  )
