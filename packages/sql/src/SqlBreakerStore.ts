/**
 * Durable breaker state on `@effect/sql`: the verdict of every named circuit kept in one table, so
 * that every worker and every restart sees the same verdict. SQLite (a file: the embedded default
 * for one machine) and PostgreSQL (for a fleet) share one schema, created by a migration.
 *
 * Breakers never wait on the database on their success path: they load the stored verdict when
 * made, report in the background, and learn verdicts made elsewhere in the background: on
 * PostgreSQL pushed with LISTEN/NOTIFY as they are saved, and from a poll (the fallback, and
 * SQLite's only path).
 *
 * @since 0.1.0
 */
import { BreakerStore } from "@circuitry/breaker"
import { OptionRules } from "@circuitry/core"
import * as Edition from "@circuitry/core/Edition"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type { PgConfig } from "#sql"
import { SqlClient } from "#sql"
import * as SqliteClient from "#sqliteClient"
import * as errors from "./internal/errors.js"
import { resolve } from "./internal/options.js"
import { closeWithin } from "./internal/release.js"
import * as Tables from "./internal/schema.js"
import * as internal from "./internal/store.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * The table of circuits, optionally schema-qualified (`"ops.breakers"`). Default
   * `"circuitry_breakers"`. Beside it live `<table>_probes` (half-open probe leases),
   * `<table>_members` (heartbeats and trips, for `sharing.quorum`) and `<table>_migrations` (this
   * package's migrations, apart from the application's own).
   */
  readonly table?: string | undefined
  /**
   * How often verdicts made elsewhere are read, in the background, while no LISTEN brings them
   * (always on SQLite). Default 250 milliseconds.
   */
  readonly pollInterval?: Edition.DurationInput | undefined
  /** Create or upgrade the tables when the store is made. Default `true`. */
  readonly migrate?: boolean | undefined
  /**
   * PostgreSQL (a `PgClient`): hear verdicts as they are saved, with LISTEN on a connection of
   * its own (saves always NOTIFY, whatever this says, since other members may listen). Default
   * `true`. Without a `PgClient` (SQLite) there is nothing to listen to and the poll serves.
   */
  readonly listen?: boolean | undefined
  /**
   * While listening: how often the LISTEN connection checks itself (a NOTIFY to itself; two
   * unanswered and it is lost: the poll speeds up to `pollInterval` and LISTEN starts again), and
   * how often the poll still runs, for a save whose NOTIFY was missed. Default 1 second. The checks
   * run on the live clock (they time a real connection); the poll on the Effect Clock.
   */
  readonly listenInterval?: Edition.DurationInput | undefined
}

/**
 * The package's one options error: options that break a rule; `message` names the option and the
 * rule. Its `_tag` is `"InvalidSqlOptions"`.
 *
 * @since 0.2.0
 * @category errors
 */
export const InvalidSqlOptions: typeof errors.InvalidSqlOptions = errors.InvalidSqlOptions

/**
 * @since 0.2.0
 * @category errors
 */
export type InvalidSqlOptions = errors.InvalidSqlOptions

/**
 * The former name of `InvalidSqlOptions`: the same class (so `instanceof` still holds), whose
 * `_tag` is now `"InvalidSqlOptions"`.
 *
 * @since 0.1.0
 * @category errors
 * @deprecated Use `InvalidSqlOptions`.
 */
export const InvalidStoreOptions: typeof errors.InvalidSqlOptions = errors.InvalidSqlOptions

/**
 * @since 0.1.0
 * @category errors
 * @deprecated Use `InvalidSqlOptions`.
 */
export type InvalidStoreOptions = errors.InvalidSqlOptions

/**
 * What the SQL store offers beside `BreakerStore` (the service of the `SqlBreakerStore` key, on both
 * majors).
 *
 * @since 0.2.0
 * @category models
 */
export interface SqlBreakerStoreService {
  /** The table of circuits. */
  readonly table: string
  /** Reads every connected circuit now and tells its breakers of verdicts that changed. */
  readonly poll: Effect.Effect<void, BreakerStore.BreakerStoreError>
  /**
   * Whether verdicts arrive as they are saved (PostgreSQL's LISTEN answers its checks) rather
   * than at the next poll alone. Always `false` on SQLite and with `listen: false`.
   */
  readonly listening: Effect.Effect<boolean>
  /**
   * Problems met in the background: rows that are not ours (each is treated as Closed) and the
   * database becoming unreachable. Each is also logged, once per occurrence.
   */
  readonly problems: Stream.Stream<BreakerStore.BreakerStoreError>
  /**
   * The same problems as a subscription (a `Queue.Dequeue` on Effect 3, a `PubSub.Subscription`
   * on 4), subscribed when this effect returns.
   */
  readonly subscribeProblems: Effect.Effect<Edition.Subscription<BreakerStore.BreakerStoreError>, never, Scope.Scope>
}

/**
 * What the SQL store offers beside `BreakerStore`.
 *
 * @since 0.1.0
 * @category tags
 */
export class SqlBreakerStore extends Edition.KeyClass<SqlBreakerStore, SqlBreakerStoreService>()(
  "@circuitry/sql/SqlBreakerStore"
) {}

/**
 * Makes the store on the `SqlClient` in the context, running its migration first (unless
 * `migrate: false`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options?: Options
): Effect.Effect<
  readonly [BreakerStore.BreakerStoreService, SqlBreakerStoreService],
  InvalidSqlOptions | BreakerStore.BreakerStoreError,
  SqlClient.SqlClient | Scope.Scope
> => internal.make(options)

/**
 * The store as a layer on the `SqlClient` in its context: provides `BreakerStore.BreakerStore`
 * (which `CircuitBreaker.make` picks up) and `SqlBreakerStore`.
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { CircuitBreaker, Policy } from "@circuitry/breaker"
 * import { SqlBreakerStore } from "@circuitry/sql"
 * import { PgClient } from "@effect/sql-pg"
 * import { Effect, Layer, Redacted } from "effect"
 *
 * // The application's own client: here PostgreSQL; a SqliteClient over better-sqlite3 is given
 * // the same way.
 * const StoreLive = SqlBreakerStore.layer({ table: "breakers" }).pipe(
 *   Layer.provide(PgClient.layer({ url: Redacted.make("postgres://app@db.internal:5432/app") }))
 * )
 *
 * const program = Effect.gen(function* () {
 *   const breaker = yield* CircuitBreaker.make({ name: "payments", policy: Policy.consecutiveFailures(3) })
 *   return yield* Effect.succeed("charged").pipe(CircuitBreaker.withBreaker(breaker))
 * }).pipe(Effect.scoped, Effect.provide(StoreLive))
 * ```
 */
export const layer = (
  options?: Options
): Layer.Layer<
  BreakerStore.BreakerStore | SqlBreakerStore,
  InvalidSqlOptions | BreakerStore.BreakerStoreError,
  SqlClient.SqlClient
> => Edition.layerScopedContext(services(options))

/** The store's two services, made in the current scope on the `SqlClient` in the context. */
const services = (options: Options | undefined) =>
  Effect.map(internal.make(options), ([store, sql]) =>
    Context.make(BreakerStore.BreakerStore, store).pipe(Context.add(SqlBreakerStore, sql))
  )

/** The store on a client of its own, both in the layer's scope (the store is released first). */
const layerOn = <E>(
  client: Effect.Effect<Context.Context<SqlClient.SqlClient>, E, Scope.Scope>,
  options: Options | undefined
): Layer.Layer<BreakerStore.BreakerStore | SqlBreakerStore, E | InvalidSqlOptions | BreakerStore.BreakerStoreError> =>
  Edition.layerScopedContext(Effect.flatMap(client, (context) => Effect.provide(services(options), context)))

/**
 * Creates or upgrades the breaker tables, for applications that run their migrations apart
 * (with `migrate: false` on the store). Idempotent.
 *
 * @since 0.1.0
 * @category migrations
 */
export const migrate = (options?: {
  readonly table?: string | undefined
}): Effect.Effect<void, InvalidSqlOptions | BreakerStore.BreakerStoreError, SqlClient.SqlClient> =>
  Effect.flatMap(Edition.fromResult(resolve(options)), ({ table }) =>
    Tables.migrate(table).pipe(
      Effect.asVoid,
      Effect.mapError(
        (cause) =>
          new BreakerStore.BreakerStoreError({
            store: "sql",
            operation: "migrate",
            message: `could not create the breaker tables: ${cause.message}`,
            cause
          })
      )
    )
  )

/**
 * The SQLite client of `layerSqlite`: a connection through `libsql` (install it beside this
 * package), whose binary comes from the npm registry, one package per platform. The fields beside
 * `filename` and `busyTimeout` are those of `@effect/sql-sqlite-node`'s config, which this layer
 * used before libsql: to keep better-sqlite3, give `layer` your own `SqliteClient` (docs/sql.md).
 *
 * @since 0.1.0
 * @category models
 */
export interface SqliteOptions {
  /** The database file (created when missing). */
  readonly filename: string
  /**
   * How long a statement waits for another process's write lock before it fails (the store then
   * retries in the background). SQLite calls block the thread, so keep it short. Default 250 ms.
   */
  readonly busyTimeout?: Edition.DurationInput | undefined
  /** A store writes: `true` is rejected with `InvalidSqlOptions`. */
  readonly readonly?: boolean | undefined
  /** Prepared statements kept, the least recently used dropped first. Default 200. */
  readonly prepareCacheSize?: number | undefined
  /** Not used (statements are kept by count alone); accepted so that configs of the better-sqlite3 layer compile. */
  readonly prepareCacheTTL?: Edition.DurationInput | undefined
  /** Keep SQLite's rollback journal instead of switching the file to WAL. Default `false`. */
  readonly disableWAL?: boolean | undefined
  readonly spanAttributes?: Record<string, unknown> | undefined
  readonly transformResultNames?: ((str: string) => string) | undefined
  readonly transformQueryNames?: ((str: string) => string) | undefined
}

const SqliteSchema = Schema.Struct({
  filename: Edition.refine(Schema.String, (filename) => filename.length > 0, "a non-empty path"),
  busyTimeout: Schema.optional(OptionRules.FiniteMillis),
  readonly: Schema.optional(Edition.refine(Schema.Boolean, (readonly) => !readonly, "false: a store writes")),
  prepareCacheSize: Schema.optional(
    Edition.refine(Schema.Number, (size) => Number.isInteger(size) && size >= 0, "an integer >= 0")
  )
})

const driverError = (driver: string, cause: unknown) =>
  new BreakerStore.BreakerStoreError({
    store: "sql",
    operation: "connect",
    message: `could not open ${driver}: ${cause instanceof Error ? cause.message : String(cause)}`,
    cause
  })

/**
 * The embedded default for one machine: a SQLite file, its migration and the store, in one layer.
 * Every process that opens the same file shares the verdicts. Needs `libsql` installed.
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { CircuitBreaker } from "@circuitry/breaker"
 * import { SqlBreakerStore } from "@circuitry/sql"
 * import { Effect } from "effect"
 *
 * const program = CircuitBreaker.make({ name: "email" }).pipe(
 *   Effect.scoped,
 *   Effect.provide(SqlBreakerStore.layerSqlite({ filename: "/var/lib/app/breakers.db" }))
 * )
 * ```
 */
export const layerSqlite = (
  config: SqliteOptions,
  options?: Options
): Layer.Layer<BreakerStore.BreakerStore | SqlBreakerStore, InvalidSqlOptions | BreakerStore.BreakerStoreError> => {
  const checked = Edition.fromResult(
    OptionRules.decode(SqliteSchema, config, (message) => new InvalidSqlOptions({ message }))
  )
  const client = Effect.gen(function* () {
    const valid = yield* checked
    const clientConfig: SqliteClient.Config = {
      filename: config.filename,
      busyTimeoutMillis: valid.busyTimeout ?? 250,
      wal: config.disableWAL !== true,
      prepareCacheSize: valid.prepareCacheSize ?? 200,
      spanAttributes: config.spanAttributes,
      transformQueryNames: config.transformQueryNames,
      transformResultNames: config.transformResultNames
    }
    // The driver is loaded when the layer is built, so that PostgreSQL users never load SQLite's.
    const libsql = yield* Effect.tryPromise({
      try: () => import("libsql"),
      catch: (cause) => driverError("SQLite (libsql)", cause)
    })
    return yield* Layer.build(SqliteClient.layer(libsql.default, clientConfig)).pipe(
      Effect.mapError((cause) => driverError(`SQLite file ${config.filename}`, cause))
    )
  })
  return layerOn(client, options)
}

/**
 * The config of `layerPg`: `@effect/sql-pg`'s (`PgClientConfig` on Effect 3, `PgPoolConfig` on 4,
 * where the pool's settings have a type of their own).
 *
 * @since 0.2.0
 * @category models
 */
export type PgLayerConfig = PgConfig

/**
 * For a fleet: a PostgreSQL client (a `PgClient` config), the migration and the store, in one
 * layer. Its release waits at most 1 s for the client to close: against a database that does not
 * answer, the driver's cleanup (cancelling the statements still in flight) goes on in the background.
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { SqlBreakerStore } from "@circuitry/sql"
 * import { Redacted } from "effect"
 *
 * const StoreLive = SqlBreakerStore.layerPg(
 *   { url: Redacted.make("postgres://app@db.internal:5432/app") },
 *   { table: "ops.breakers" }
 * )
 * ```
 */
export const layerPg = (
  config: PgLayerConfig,
  options?: Options
): Layer.Layer<BreakerStore.BreakerStore | SqlBreakerStore, InvalidSqlOptions | BreakerStore.BreakerStoreError> => {
  const client = Effect.gen(function* () {
    const Pg = yield* Effect.tryPromise({
      try: () => import("@effect/sql-pg/PgClient"),
      catch: (cause) => driverError("PostgreSQL (pg)", cause)
    })
    // A scope of its own, closed with a deadline (internal/release.ts): the client's close may wait
    // for a database that does not answer.
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer((exit) => closeWithin(Scope.close(scope, exit)))
    return yield* Effect.mapError(Layer.buildWithScope(Pg.layer(config), scope), (cause) =>
      driverError("PostgreSQL", cause)
    )
  })
  return layerOn(client, options)
}
