/**
 * The cache an application uses: a store behind a circuit breaker that sheds reads while the
 * circuit is open and keeps repairing the cache with writes, and `getOrLoad`, which loads a miss
 * once per key and writes it back as a repair.
 *
 * @since 0.1.0
 */
import type { CircuitBreaker } from "@circuitry/breaker"
import * as Edition from "@circuitry/core/Edition"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import type { CacheStore, WriteOptions } from "./CacheStore.js"
import { InvalidCacheOptions, Store } from "./CacheStore.js"
import * as internal from "./internal/cache.js"
import * as guardInternal from "./internal/guard.js"
import * as limiter from "./internal/limiter.js"
import * as metrics from "./internal/metrics.js"
import type * as MemoryStore from "./MemoryStore.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = internal.TypeId

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * The cache service: a store that never fails (a guarded store, or a layered store over one) with
 * its own `getOrLoad`. The loads in flight and the `maxConcurrentLoads` cap live in this value, so
 * every caller of one cache shares them however the cache is provided. Made by `make` or `layer`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service extends CacheStore<never> {
  readonly [TypeId]: TypeId
  /** See `getOrLoad`: the accessor on the `Cache` service calls this. */
  readonly getOrLoad: <E, R, Rejected = never>(
    key: string,
    load: Effect.Effect<string, E, R>,
    options?: GetOrLoadOptions<Rejected>
  ) => Effect.Effect<string, E | Rejected, R>
}

/**
 * The cache service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class Cache extends Edition.KeyClass<Cache, Service>()("@circuitry/cache/Cache") {}

/**
 * Whether a value is a cache made by `make` (or `layer`).
 *
 * @since 0.1.0
 * @category guards
 */
export const isCache = (u: unknown): u is Service => Predicate.hasProperty(u, TypeId)

/**
 * The breaker of the cache built by `layer`: subscribe to its `changes` for the alerts (a
 * transition is announced once; `Closed` only after the circuit was not closed).
 *
 * @since 0.1.0
 * @category tags
 */
export class CacheBreaker extends Edition.KeyClass<CacheBreaker, CircuitBreaker.CircuitBreaker>()(
  "@circuitry/cache/CacheBreaker"
) {}

/**
 * A report of store errors, made by `guard` instead of one report per failed operation.
 *
 * An episode starts with a store error and ends with the first store operation that succeeds
 * while the circuit is Closed. In an episode, the first error of each kind (the operation and the
 * error's tag, e.g. `"get: CacheError"`) is reported at once as `First`; later ones of that kind
 * are counted, and reported as one `Suppressed` (with the first error's cause) when the episode
 * ends. Shed operations are not errors and are not reported: the breaker's transitions are the
 * alerts.
 *
 * @since 0.1.0
 * @category models
 */
export type ErrorReport = guardInternal.ErrorReport

/**
 * Constructors and matchers for `ErrorReport`.
 *
 * @since 0.1.0
 * @category models
 */
export const ErrorReport = guardInternal.ErrorReport

/**
 * @since 0.1.0
 * @category models
 */
export interface GuardOptions {
  /**
   * Receives the error reports. Default: `logReport` (a warning per report). Failures and defects
   * of the hook are ignored; keep it quick, it runs in the operation that failed.
   */
  readonly onError?: ((report: ErrorReport) => Effect.Effect<void>) | undefined
}

/**
 * The default error hook: logs each report as a warning.
 *
 * @since 0.1.0
 * @category error reports
 */
export const logReport: (report: ErrorReport) => Effect.Effect<void> = guardInternal.logReport

/**
 * Puts a store behind a breaker. The result never fails: a shed or failing operation returns its
 * fallback (`get` → `Option.none()`, `set`/`touch`/`delete`/`ping` → `false`, `keys` → `[]`,
 * `size` → `0`).
 *
 * - Reads (`get`, `getEntry`, `keys`, `size`, `ping`) go through the breaker and are shed while
 *   it is open.
 * - Writes (`set`, `touch`, `delete`) are repair traffic (`CircuitBreaker.repairing`): while the
 *   circuit is open they still reach the store, unrecorded, until one fails in that open episode
 *   (one at a time until one has succeeded, so a hung store costs one call per episode); while it
 *   is not open they count like any call, so failing writes can open it. An
 *   invalidation (`delete`) is a write: it reaches the store during an outage, so a stale value
 *   does not outlive it.
 * - The value read back after a write is the value written: the guard adds no state of its own.
 * - Interruption is not an error: it interrupts the caller as usual.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { CircuitBreaker, Policy } from "@circuitry/breaker"
 * import { Cache, MemoryStore } from "@circuitry/cache"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const breaker = yield* CircuitBreaker.make({ name: "cache", policy: Policy.consecutiveFailures(3) })
 *   const cache = Cache.guard(yield* MemoryStore.make(), breaker)
 *   yield* cache.set("k", "v", { ttl: "1 minute" })
 *   return yield* cache.get("k")
 * }).pipe(Effect.scoped)
 * ```
 */
export const guard: <E>(
  store: CacheStore<E>,
  breaker: CircuitBreaker.CircuitBreaker<unknown>,
  options?: GuardOptions
) => CacheStore<never> = guardInternal.guard

/**
 * @since 0.1.0
 * @category models
 */
export interface LoadOptions {
  /**
   * How many different keys `getOrLoad` loads from the source of truth at once, across every
   * caller of this cache. Callers over the cap wait their turn (an interrupted waiter leaves the
   * others unharmed). Default unbounded. This is what keeps an open cache breaker from turning
   * into a stampede on the database.
   */
  readonly maxConcurrentLoads?: number | undefined
  /**
   * How many `getOrLoad` loads may wait for a turn under `maxConcurrentLoads`; one more is
   * rejected at once with `LoadRejected` (reason `"queue-full"`). Default unbounded; 0 means no
   * waiting at all. Only with `maxConcurrentLoads`.
   */
  readonly maxQueuedLoads?: number | undefined
  /**
   * How long a load may wait for its turn under `maxConcurrentLoads` (on the Effect Clock); past
   * it, it is rejected with `LoadRejected` (reason `"wait-exceeded"`). Default unbounded. Only with
   * `maxConcurrentLoads`.
   */
  readonly maxLoadWait?: Edition.DurationInput | undefined
}

/**
 * The options of one `getOrLoad`: the write-back's `ttl`, and what a rejection by the load cap
 * becomes (`Rejected`, added to the load's own error type).
 *
 * @since 0.1.0
 * @category models
 */
export interface GetOrLoadOptions<Rejected> extends WriteOptions {
  /**
   * Turns a `LoadRejected` (the load cap's line is full, or the wait for a turn ran out) into a
   * typed failure of this `getOrLoad`: `(rejection) => rejection` gives `E | LoadRejected`, which
   * `Effect.catchTag("LoadRejected", ...)` recovers; a function into the load's own error type lets
   * callers handle it like any failed load. Without it, a rejection is a defect carrying the
   * `LoadRejected` (see `Cache.isLoadRejected`): the load cap is the cache's option, and the
   * `Cache` service's type (and `getOrLoad`'s, `Effect<string, E, R | Cache>`) cannot say whether
   * the cache it reaches has one.
   */
  readonly onRejected?: ((rejection: LoadRejected) => Rejected) | undefined
}

/**
 * A `getOrLoad` turned away by the load cap: its line was full (`maxQueuedLoads`) or it waited
 * past `maxLoadWait`. It is that load's failure: every caller joined on the key gets it, and
 * nothing is written to the cache.
 *
 * @since 0.1.0
 * @category errors
 */
export const LoadRejected: typeof limiter.LoadRejected = limiter.LoadRejected

/**
 * @since 0.1.0
 * @category errors
 */
export type LoadRejected = limiter.LoadRejected

/**
 * Whether `u` is a `LoadRejected` (for a defect of a `getOrLoad` given no `onRejected`).
 *
 * @since 0.1.0
 * @category errors
 * @example
 * ```ts
 * import { Cache } from "@circuitry/cache"
 * import { Effect, Option } from "effect"
 *
 * const user = Cache.getOrLoad("user:1", Effect.succeed("Ada")).pipe(
 *   Effect.catchSomeDefect((defect) =>
 *     Cache.isLoadRejected(defect) ? Option.some(Effect.succeed("busy")) : Option.none()
 *   )
 * )
 * ```
 */
export const isLoadRejected = (u: unknown): u is LoadRejected => u instanceof limiter.LoadRejected

/**
 * Makes the `Cache` service out of a store that never fails (usually a guarded one), with its own
 * `getOrLoad` state: the loads in flight and the `maxConcurrentLoads` cap, shared by every caller
 * of the returned cache.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { CircuitBreaker } from "@circuitry/breaker"
 * import { Cache, MemoryStore } from "@circuitry/cache"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const breaker = yield* CircuitBreaker.make({ name: "cache" })
 *   const cache = yield* Cache.make(Cache.guard(yield* MemoryStore.make(), breaker), { maxConcurrentLoads: 8 })
 *   return yield* cache.getOrLoad("user:1", Effect.succeed("Ada"))
 * }).pipe(Effect.scoped)
 * ```
 */
export const make: (store: CacheStore<never>, options?: LoadOptions) => Effect.Effect<Service, InvalidCacheOptions> =
  internal.make

/**
 * A hit returns the cached value; a miss (or a read shed by an open circuit) runs `load` once per
 * key however many fibers ask at once, returns its value (or its failure) to all of them, and
 * writes it back through the `Cache` service as repair traffic, so the cache warms up even while
 * its circuit is open. `maxConcurrentLoads` (see `make` and `layer`) caps how many keys load at
 * once. If the fiber running a key's load is interrupted, another fiber waiting on that key takes
 * over the load.
 *
 * @since 0.1.0
 * @category combinators
 * @example
 * ```ts
 * import { Cache, MemoryStore } from "@circuitry/cache"
 * import { Effect, Layer } from "effect"
 *
 * const loadUser = (id: string) => Effect.succeed(JSON.stringify({ id, name: "Ada" }))
 *
 * const user = (id: string) => Cache.getOrLoad(`user:${id}`, loadUser(id), { ttl: "5 minutes" })
 *
 * const CacheLive = Cache.layer({ maxConcurrentLoads: 16 }).pipe(Layer.provide(MemoryStore.layer()))
 * const main = user("1").pipe(Effect.provide(CacheLive))
 * ```
 */
export const getOrLoad = <E, R, Rejected = never>(
  key: string,
  load: Effect.Effect<string, E, R>,
  options?: GetOrLoadOptions<Rejected>
): Effect.Effect<string, E | Rejected, R | Cache> =>
  Effect.flatMap(Cache, (cache) => cache.getOrLoad(key, load, options))

/**
 * @since 0.1.0
 * @category models
 */
export interface LayerOptions extends GuardOptions, LoadOptions {
  /**
   * The cache's breaker. Default name `"cache"`; other defaults are the breaker's. When a
   * `BreakerRegistry` is in the context, the breaker is the registry's of that name (so its health
   * route lists it, and its defaults and overrides apply): then give only `name` here, and the
   * rest as the registry's `overrides[name]`.
   */
  readonly breaker?: CircuitBreaker.Options | undefined
  /**
   * When given, a `MemoryStore` with these options is put in front of the guarded store (a
   * `LayeredStore`: L1 memory over a guarded L2).
   */
  readonly l1?: MemoryStore.Options | undefined
  /** How the L2 writes of the layered store run (only with `l1`). Default `"await"`. */
  readonly l2Writes?: "await" | "background" | undefined
}

/**
 * The `Cache` (and its `CacheBreaker`) built from the `CacheStore.Store` in the context: the store
 * is guarded by a breaker, optionally put behind a memory L1, and given the load cap. The breaker
 * is the `BreakerRegistry`'s when one is in the context (see `LayerOptions.breaker`), else a new one.
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { BreakerRegistry, Policy } from "@circuitry/breaker"
 * import { Cache, MemoryStore } from "@circuitry/cache"
 * import { Layer } from "effect"
 *
 * // In production the store layer is a shared one (Redis); a memory store stands in for it here.
 * // The registry (shared with the health route) owns the breaker's options.
 * const CacheLive = Cache.layer({
 *   breaker: { name: "redis-cache" },
 *   l1: { capacity: 10_000 },
 *   l2Writes: "background",
 *   maxConcurrentLoads: 32
 * }).pipe(
 *   Layer.provide(MemoryStore.layer()),
 *   Layer.provideMerge(
 *     BreakerRegistry.layer({
 *       overrides: { "redis-cache": { policy: Policy.consecutiveFailures(3), openFor: "10 seconds" } }
 *     })
 *   )
 * )
 * ```
 */
export const layer = (
  options?: LayerOptions
): Layer.Layer<Cache | CacheBreaker, CircuitBreaker.InvalidBreakerOptions | InvalidCacheOptions, Store> =>
  Edition.layerScopedContext(
    Effect.map(internal.build(options), ({ breaker, cache }) =>
      Context.make(Cache, cache).pipe(Context.add(CacheBreaker, breaker))
    )
  )

/**
 * The operations of a guarded store (`guard`, and the store `layer` guards), a counter tagged
 * `operation` (`get`, `set`, `touch`, `delete`, `keys`, `size`, `ping`; `getEntry` is a `get`) and
 * `outcome`: `hit` or `miss` for a `get` the store answered, `success` for the others, and the two
 * that returned the fallback, `shed` (refused by the open circuit) and `error` (the store failed).
 * Interruptions are not counted. A write that reached the store while the circuit was open is a
 * `success` here and a `repair` in the breaker's `callsTotal`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const operationsTotal: Edition.Counter = metrics.operationsTotal

/**
 * `getOrLoad`'s lookups, a counter tagged `outcome`: `hit` (served from the cache), `load` (the
 * key's load started for it), `coalesced` (it joined the key's load in flight). A caller whose
 * load was interrupted before it ended looks up again, and is counted again.
 *
 * @since 0.2.0
 * @category metrics
 * @example
 * ```ts
 * import { Cache } from "@circuitry/cache"
 * import { Effect, Metric } from "effect"
 *
 * // getOrLoad calls the cache answered (on Effect 4, Metric.withAttributes(Cache.lookupsTotal, { outcome: "hit" }))
 * export const hits = Effect.map(Metric.value(Metric.tagged(Cache.lookupsTotal, "outcome", "hit")), (s) => s.count)
 * ```
 */
export const lookupsTotal: Edition.Counter = metrics.lookupsTotal

/**
 * The loads `getOrLoad` started, once each however many callers joined them, a counter tagged
 * `outcome`: `success`, `failure` (the load failed or died), `rejected` (turned away by the load
 * cap's line, never run; tagged `reason` too, `queue-full` or `wait-exceeded`, as the
 * `LoadRejected`), `interrupted` (its fiber was interrupted before the load ended).
 *
 * @since 0.2.0
 * @category metrics
 */
export const loadsTotal: Edition.Counter = metrics.loadsTotal
