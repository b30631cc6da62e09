/**
 * The implementation behind ../Cache.ts, where the public types and their documentation live: the
 * `Cache` service made out of a store (`make`), and what `Cache.layer` builds from the store in
 * the context (a guarded store, an optional memory L1, the breaker it is guarded by).
 */
import { BreakerRegistry, CircuitBreaker } from "@circuitry/breaker"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as C from "../Cache.js"
import { type CacheStore, InvalidCacheOptions, Store } from "../CacheStore.js"
import * as LayeredStore from "../LayeredStore.js"
import * as MemoryStore from "../MemoryStore.js"
import { guard } from "./guard.js"
import * as loader from "./loader.js"
import * as Options from "./options.js"

/** @internal */
export const TypeId: typeof C.TypeId = Symbol.for("@circuitry/cache/Cache") as typeof C.TypeId

/** @internal */
export const make = (
  store: CacheStore<never>,
  options?: C.LoadOptions
): Effect.Effect<C.Service, InvalidCacheOptions> =>
  Effect.map(Options.decodeLoad("Cache", options), ({ maxConcurrentLoads, maxLoadWait, maxQueuedLoads }) => {
    const getEntry = store.getEntry
    const cache: Omit<C.Service, "getOrLoad"> = {
      [TypeId]: TypeId,
      get: (key) => store.get(key),
      set: (key, value, options) => store.set(key, value, options),
      touch: (key, options) => store.touch(key, options),
      delete: (key) => store.delete(key),
      keys: (prefix) => store.keys(prefix),
      get size() {
        return store.size
      },
      get ping() {
        return store.ping
      },
      ...(getEntry !== undefined ? { getEntry: (key: string) => getEntry(key) } : {})
    }
    return Object.assign(cache, {
      getOrLoad: loader.makeGetOrLoad(cache, maxConcurrentLoads, {
        maxQueued: maxQueuedLoads,
        maxWaitMillis: maxLoadWait
      })
    })
  })

/**
 * What `Cache.layer` provides: the cache over the `Store` in the context (guarded, behind an L1 when
 * `l1` is given) and its breaker. @internal
 */
export const build = (
  options?: C.LayerOptions
): Effect.Effect<
  { readonly cache: C.Service; readonly breaker: CircuitBreaker.CircuitBreaker },
  CircuitBreaker.InvalidBreakerOptions | InvalidCacheOptions,
  Store | Scope.Scope
> =>
  Effect.gen(function* () {
    const { l2Writes } = yield* Options.decodeLayer("Cache.layer", options)
    const breaker = yield* breakerOf(options?.breaker)
    const store = yield* Store
    const guarded = guard(store, breaker, { onError: options?.onError })
    const served =
      options?.l1 === undefined
        ? guarded
        : yield* LayeredStore.make(yield* MemoryStore.make(options.l1), guarded, { l2Writes })
    const cache = yield* make(served, options)
    return { cache, breaker }
  })

/** The registry's breaker of that name when there is a registry, else a new breaker. */
const breakerOf = (
  options: CircuitBreaker.Options | undefined
): Effect.Effect<
  CircuitBreaker.CircuitBreaker,
  CircuitBreaker.InvalidBreakerOptions | InvalidCacheOptions,
  Scope.Scope
> =>
  Effect.flatMap(
    Effect.serviceOption(BreakerRegistry.BreakerRegistry),
    (
      registry
    ): Effect.Effect<
      CircuitBreaker.CircuitBreaker,
      CircuitBreaker.InvalidBreakerOptions | InvalidCacheOptions,
      Scope.Scope
    > => {
      const name = options?.name ?? "cache"
      if (Option.isNone(registry)) return CircuitBreaker.make({ ...options, name })
      const others = Object.entries(options ?? {})
        .filter(([key, value]) => key !== "name" && value !== undefined)
        .map(([key]) => key)
      if (others.length > 0) {
        return Effect.fail(
          new InvalidCacheOptions({
            message:
              `Cache.layer: breaker must give only a name when a BreakerRegistry is in the context, got ${others.join(", ")}: ` +
              `the breaker is the registry's "${name}"; give its options as the registry's overrides["${name}"]`
          })
        )
      }
      return registry.value.get(name)
    }
  )
