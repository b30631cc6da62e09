/**
 * An in-memory `CacheStore`: least-recently-used eviction by `capacity`, expiry read from the
 * Effect `Clock` (so `TestClock` drives it).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { CacheStore } from "./CacheStore.js"
import type { InvalidCacheOptions } from "./CacheStore.js"
import { Store } from "./CacheStore.js"
import * as internal from "./internal/memoryStore.js"
import { decodeMemory } from "./internal/options.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The most entries kept; the least recently used one is evicted to make room. Default unbounded. */
  readonly capacity?: number | undefined
}

/**
 * Makes a memory store. A `capacity` that is not a whole number >= 1 fails with
 * `InvalidCacheOptions`. Writes follow the TTL rule of every store (`CacheStore.WriteOptions`):
 * a `ttl` of zero or less is already expired (nothing is stored), and one that is not a duration
 * is a defect.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { MemoryStore } from "@circuitry/cache"
 * import { Effect, Option } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const store = yield* MemoryStore.make({ capacity: 10_000 })
 *   yield* store.set("user:1", "Ada", { ttl: "5 minutes" })
 *   return Option.getOrElse(yield* store.get("user:1"), () => "unknown")
 * })
 * ```
 */
export const make = (options?: Options): Effect.Effect<CacheStore<never>, InvalidCacheOptions> =>
  Effect.map(decodeMemory("MemoryStore", options), internal.make)

/**
 * A memory store as the `CacheStore.Store` service (for `Cache.layer`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<Store, InvalidCacheOptions> => Layer.effect(Store, make(options))
