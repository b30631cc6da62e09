/**
 * The ways an application can put a breaker in front of its cache, each built from the real
 * library: the same traffic runs through each of them.
 *
 * @since 0.1.0
 */
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { Cache, CacheStore } from "@circuitry/cache"
import { Scenario } from "@circuitry/chaos"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { Database, DatabaseUnavailable } from "./Model.js"

/**
 * @since 0.1.0
 * @category models
 */
export type StrategyName = "none" | "shed" | "repair" | "single-flight"

/**
 * Every strategy, in the order they are shown.
 *
 * @since 0.1.0
 * @category models
 */
export const names: ReadonlyArray<StrategyName> = ["none", "shed", "repair", "single-flight"]

/**
 * What each strategy is, in a few words.
 *
 * @since 0.1.0
 * @category models
 */
export const descriptions: Record<StrategyName, string> = {
  none: "no breaker: every cache call goes to the cache, errors count as misses",
  shed: "breaker that sheds reads and writes while open (before the fix)",
  repair: "breaker that sheds reads and repairs with writes while open (Cache.guard)",
  "single-flight": "Cache.guard + Cache.getOrLoad: one load per key, at most N loads at once"
}

/**
 * @since 0.1.0
 * @category models
 */
export interface StrategyOptions {
  /** How long the breaker stays open. */
  readonly openForMillis: number
  /** How long an entry lives in the cache. */
  readonly ttlMillis: number
  /** The cap on concurrent loads of the single-flight strategy. */
  readonly maxConcurrentLoads: number
}

/**
 * One strategy, ready to serve requests. A request reads the cache; on a miss (counted as
 * `cache.misses`) it loads the value from the database and writes it back.
 *
 * @since 0.1.0
 * @category models
 */
export interface Strategy {
  readonly name: StrategyName
  readonly breaker: CircuitBreaker.CircuitBreaker | undefined
  readonly request: (key: string) => Effect.Effect<void, DatabaseUnavailable>
}

/**
 * The breaker every strategy that has one uses: it opens when half the last 100 cache calls failed
 * (with at least 20 of them), and stays open for `openFor`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeBreaker = (
  openForMillis: number
): Effect.Effect<CircuitBreaker.CircuitBreaker, CircuitBreaker.InvalidBreakerOptions, Scope.Scope> =>
  CircuitBreaker.make({
    name: "cache",
    policy: Policy.failureRate({ threshold: 0.5, minimumCalls: 20, window: Policy.countWindow(100) }),
    openFor: openForMillis
  })

/** A store whose errors become the fallbacks `Cache.guard` returns, with no breaker at all. */
const unguarded = (store: CacheStore.CacheStore): CacheStore.CacheStore<never> => ({
  get: (key) => Effect.orElseSucceed(store.get(key), () => Option.none()),
  set: (key, value, options) => Effect.orElseSucceed(store.set(key, value, options), () => false),
  touch: (key, options) => Effect.orElseSucceed(store.touch(key, options), () => false),
  delete: (key) => Effect.orElseSucceed(store.delete(key), () => false),
  keys: (prefix) => Effect.orElseSucceed(store.keys(prefix), () => []),
  size: Effect.orElseSucceed(store.size, () => 0),
  ping: Effect.orElseSucceed(store.ping, () => false)
})

/**
 * The behaviour before the fix, which is not a library behaviour: reads go through `Cache.guard`,
 * and writes go through the same breaker with `withBreaker` but are not marked as repair, so an
 * open circuit sheds them too.
 */
const shedding = (
  store: CacheStore.CacheStore,
  breaker: CircuitBreaker.CircuitBreaker
): CacheStore.CacheStore<never> => {
  const guarded = Cache.guard(store, breaker, { onError: () => Effect.void })
  const write = (effect: Effect.Effect<boolean, CacheStore.CacheError>) =>
    effect.pipe(
      CircuitBreaker.withBreaker(breaker),
      Effect.orElseSucceed(() => false)
    )
  return {
    ...guarded,
    set: (key, value, options) => write(store.set(key, value, options)),
    touch: (key, options) => write(store.touch(key, options)),
    delete: (key) => write(store.delete(key))
  }
}

const miss = Scenario.count("cache.misses")

/** Read; on a miss, query the database and write the value back. */
const cacheAside = (
  name: StrategyName,
  breaker: CircuitBreaker.CircuitBreaker | undefined,
  cache: CacheStore.CacheStore<never>,
  database: Database,
  ttlMillis: number
): Strategy => {
  const ttl = { ttl: ttlMillis }
  return {
    name,
    breaker,
    request: (key) =>
      Effect.flatMap(cache.get(key), (found) =>
        Option.isSome(found)
          ? Effect.void
          : Effect.zipRight(
              miss,
              Effect.flatMap(database.query(key), (value) => cache.set(key, value, ttl))
            )
      )
  }
}

/**
 * Builds a strategy over a store (the stalling cache) and a database of its own.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  name: StrategyName,
  store: CacheStore.CacheStore,
  database: Database,
  options: StrategyOptions
): Effect.Effect<Strategy, CircuitBreaker.InvalidBreakerOptions | CacheStore.InvalidCacheOptions, Scope.Scope> =>
  Effect.gen(function* () {
    switch (name) {
      case "none":
        return cacheAside(name, undefined, unguarded(store), database, options.ttlMillis)
      case "shed": {
        const breaker = yield* makeBreaker(options.openForMillis)
        return cacheAside(name, breaker, shedding(store, breaker), database, options.ttlMillis)
      }
      case "repair": {
        const breaker = yield* makeBreaker(options.openForMillis)
        const cache = Cache.guard(store, breaker, { onError: () => Effect.void })
        return cacheAside(name, breaker, cache, database, options.ttlMillis)
      }
      case "single-flight": {
        const breaker = yield* makeBreaker(options.openForMillis)
        const guarded = Cache.guard(store, breaker, { onError: () => Effect.void })
        const cache = yield* Cache.make(guarded, { maxConcurrentLoads: options.maxConcurrentLoads })
        const ttl = { ttl: options.ttlMillis }
        // The request's own read first (it counts the miss); getOrLoad then reads once more, and
        // joins or leads the key's load.
        return {
          name,
          breaker,
          request: (key) =>
            Effect.flatMap(guarded.get(key), (found) =>
              Option.isSome(found)
                ? Effect.void
                : Effect.zipRight(
                    miss,
                    Cache.getOrLoad(key, database.query(key), ttl).pipe(
                      Effect.provideService(Cache.Cache, cache),
                      Effect.asVoid
                    )
                  )
            )
        }
      }
    }
  })
