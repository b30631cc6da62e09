/**
 * Breaker state shared by a fleet through Redis: every breaker with the same name on the same
 * Redis (and prefix) sees one verdict, whichever process it runs in.
 *
 * - One hash per circuit under the prefix; each atomic step is a Lua script with `now` passed in
 *   from the Effect Clock. A verdict older than the stored one never overwrites it.
 * - Verdicts reach every member by pub/sub on a dedicated subscriber connection; after a lost
 *   connection the stored verdict is emitted again, so members resynchronise.
 * - The half-open probe is single-flight across the fleet: one lease key per permit slot, taken
 *   with SET NX PX and released when the probe ends (or expires).
 * - Calls fail fast while Redis is down (no offline queue): the breaker then keeps its state
 *   locally and catches the store up when Redis is back. The layer builds even when Redis is down.
 *
 * @since 0.1.0
 */
import { BreakerStore } from "@circuitry/breaker"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/breakerStore.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Default `"redis://127.0.0.1:6379"`. */
  readonly url?: string | undefined
  /** Every key and the verdict channel live under this prefix. Default `"circuitry:breaker:"`. */
  readonly prefix?: string | undefined
  /** The limit of one store call (default 1 second); the breaker has shorter ones of its own. */
  readonly timeout?: Duration.DurationInput | undefined
}

/**
 * The store, with its two connections opened now and closed with the scope. Fails only on a bad
 * option (`BreakerStoreError` with operation `"options"`), never because Redis is down.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (
  options?: Options
) => Effect.Effect<BreakerStore.BreakerStore["Type"], BreakerStore.BreakerStoreError, Scope.Scope> = internal.make

/**
 * Provides `BreakerStore` to every breaker made under it.
 *
 * @example
 * ```ts
 * import { CircuitBreaker } from "@circuitry/breaker"
 * import { RedisBreakerStore } from "@circuitry/redis"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const breaker = yield* CircuitBreaker.make({ name: "payments" })
 *   return yield* CircuitBreaker.withBreaker(Effect.succeed("charged"), breaker)
 * }).pipe(Effect.scoped, Effect.provide(RedisBreakerStore.layer({ url: "redis://127.0.0.1:6379" })))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<BreakerStore.BreakerStore, BreakerStore.BreakerStoreError> =>
  Layer.scoped(BreakerStore.BreakerStore, internal.make(options))
