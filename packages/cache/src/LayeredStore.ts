/**
 * Two stores as one: a fast L1 (memory) over a shared L2 (Redis, usually guarded by a breaker).
 *
 * @since 0.1.0
 */
import type * as Edition from "@circuitry/core/Edition"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { CacheStore } from "./CacheStore.js"
import * as internal from "./internal/layeredStore.js"
import * as metrics from "./internal/metrics.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * `"await"` (default): writes return once both layers answered. `"background"`: L2 writes run
   * in fibers of the store's scope and are not awaited; closing the scope interrupts those still
   * running. A failing background write is logged and counted in `l2WriteFailuresTotal` (guard L2
   * with `Cache.guard` to keep that quiet: a guarded store never fails).
   */
  readonly l2Writes?: "await" | "background" | undefined
  /**
   * The longest an entry read from L2 lives in L1. An L1 fill otherwise lives as long as the L2
   * entry has left (when L2 offers `getEntry`) or without expiry (when it does not).
   */
  readonly fillTtl?: Edition.DurationInput | undefined
}

/**
 * Makes a layered store.
 *
 * - `get`: L1, else L2, filling L1 with what L2 returned. The fill expires when the L2 entry does
 *   (never later), and a fill is dropped when a write to the key happened while L2 was read.
 *   While a background L2 write to a key is in flight, an L1 miss on that key is a miss: L2 may
 *   still hold the value the write replaces.
 * - `set`/`touch`/`delete`: L1, then L2 (awaited or in the background). `set` is true when every
 *   awaited layer stored the value; `touch` and `delete` are true when either layer had the key.
 * - `keys`/`size`: L1 only. `ping`: both layers.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { LayeredStore, MemoryStore } from "@circuitry/cache"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const l1 = yield* MemoryStore.make({ capacity: 1_000 })
 *   const l2 = yield* MemoryStore.make()
 *   const cache = yield* LayeredStore.make(l1, l2, { l2Writes: "background" })
 *   yield* cache.set("greeting", "hello")
 *   return yield* cache.get("greeting")
 * }).pipe(Effect.scoped)
 * ```
 */
export const make: <E1, E2>(
  l1: CacheStore<E1>,
  l2: CacheStore<E2>,
  options?: Options
) => Effect.Effect<CacheStore<E1 | E2>, never, Scope.Scope> = internal.make

/**
 * Background L2 writes (`l2Writes: "background"`) that failed, a counter tagged `operation`
 * (`set`, `touch`, `delete`). Each is also logged. An awaited L2 write's failure is its caller's,
 * and an L2 behind `Cache.guard` never fails (its fallbacks are in `Cache.operationsTotal`).
 *
 * @since 0.2.0
 * @category metrics
 */
export const l2WriteFailuresTotal: Edition.Counter = metrics.l2WriteFailuresTotal
