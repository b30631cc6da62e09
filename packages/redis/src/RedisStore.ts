/**
 * A `CacheStore` on Redis (ioredis 5): every key under a prefix, TTLs with PX, `keys` by SCAN,
 * a per-call deadline that fails only that caller, and a liveness limit that judges the shared
 * connection.
 *
 * @since 0.1.0
 */
import { type CacheError, type CacheStore, Store } from "@circuitry/cache/CacheStore"
import * as Edition from "@circuitry/core/Edition"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { Cluster, Redis } from "ioredis"
import * as Connection from "./internal/connection.js"
import * as options from "./internal/options.js"
import * as internal from "./internal/redisStore.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Default `"redis://127.0.0.1:6379"`. */
  readonly url?: string | undefined
  /**
   * A Redis Cluster instead of `url` (giving both is an options error): an ioredis `Cluster`
   * that the application owns (used as it is, left open when the scope closes), or its nodes
   * (`redis://` URLs or `{ host, port }`; the connections are then the store's own, found from
   * those nodes). Every call touches one key, and `keys`/`size` scan every primary.
   */
  readonly cluster?: Cluster | ReadonlyArray<string | { readonly host: string; readonly port: number }> | undefined
  /** Every key is stored under this prefix. Default `"circuitry:cache:"`. */
  readonly prefix?: string | undefined
  /**
   * One call's limit (default 1 second). When it passes, that caller alone fails with a
   * `CacheError` whose cause is `DeadlineExceeded`; the connection stays up and the late reply is
   * dropped.
   */
  readonly deadline?: Edition.DurationInput | undefined
  /**
   * How long the connection may stay silent while calls wait on it (default 5 seconds, and never
   * less than `deadline`). Past it the connection is torn down, the waiting calls fail and a new
   * connection is made. Shorter than `deadline` is an options error.
   */
  readonly liveness?: Edition.DurationInput | undefined
}

/**
 * The cause of a `CacheError` whose call passed its deadline.
 *
 * @since 0.1.0
 * @category errors
 */
export const DeadlineExceeded: typeof Connection.DeadlineExceeded = Connection.DeadlineExceeded

/**
 * @since 0.1.0
 * @category errors
 */
export type DeadlineExceeded = Connection.DeadlineExceeded

/**
 * Options that break a rule, for both Redis adapters (`RedisStore`, `RedisBreakerStore`);
 * `message` names the option and the rule.
 *
 * @since 0.1.0
 * @category errors
 */
export const InvalidRedisOptions: typeof options.InvalidRedisOptions = options.InvalidRedisOptions

/**
 * @since 0.1.0
 * @category errors
 */
export type InvalidRedisOptions = options.InvalidRedisOptions

/**
 * Whether a `CacheError` is a call that passed its deadline.
 *
 * @since 0.1.0
 * @category errors
 */
export const isDeadlineExceeded: (error: CacheError) => boolean = internal.isDeadlineExceeded

/**
 * Values are stored with this marker in front; a value without it (written by something else)
 * reads as a miss, reported as a warning and counted in `circuitry_redis_invalid_values_total`.
 *
 * @since 0.1.0
 * @category constants
 */
export const ENVELOPE: string = internal.ENVELOPE

/**
 * A connected ioredis client that the application provides and owns.
 *
 * @since 0.1.0
 * @category tags
 */
export class RedisClient extends Edition.KeyClass<RedisClient, Redis>()("@circuitry/redis/RedisClient") {}

/**
 * A Redis cache store with a connection of its own, opened now and closed with the scope.
 * A bad option is an `InvalidRedisOptions`. A server that cannot be reached is no error: a cache is
 * degraded, not broken, without it. Startup waits up to 1 second for it, logs a warning and goes
 * on; calls fail fast (a guard serves their fallbacks) until the connection is made in the
 * background, which it keeps trying.
 *
 * @example
 * ```ts
 * import { RedisStore } from "@circuitry/redis"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const store = yield* RedisStore.make({ prefix: "app:", deadline: "200 millis", liveness: "3 seconds" })
 *   yield* store.set("user:1", "Ada", { ttl: "1 minute" })
 *   return yield* store.get("user:1")
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (
  options?: Options
) => Effect.Effect<CacheStore<CacheError>, CacheError | InvalidRedisOptions, Scope.Scope> = internal.make

/**
 * A Redis cache store on the client found in the context (`RedisClient`), which stays open when
 * the scope closes. The liveness watchdog may reconnect that client, so give it one that follows
 * the same rules as ours: see `layerClient`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeWithClient = (
  options?: Omit<Options, "url" | "cluster">
): Effect.Effect<CacheStore<CacheError>, InvalidRedisOptions, Scope.Scope | RedisClient> =>
  Effect.gen(function* () {
    const resolved = yield* internal.resolve(options)
    const client = yield* Edition.service(RedisClient)
    return yield* internal.makeWith(client, resolved)
  })

/**
 * A `RedisClient` connected with the store's rules (no offline queue, in-flight commands failed
 * rather than resent after a reconnect), closed when the layer is released. Like `make`, it builds
 * without its server and connects when the server is there.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClient = (options?: {
  readonly url?: string | undefined
}): Layer.Layer<RedisClient, CacheError | InvalidRedisOptions> =>
  Edition.layerScoped(
    RedisClient,
    Effect.flatMap(internal.resolve({ url: options?.url }), (resolved) =>
      internal.acquireClient(resolved.target).pipe(Effect.map((client) => client as Redis))
    )
  )

/**
 * The store as the `CacheStore.Store` service, to feed `Cache.layer`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<Store, CacheError | InvalidRedisOptions> =>
  Edition.layerScoped(Store, make(options))
