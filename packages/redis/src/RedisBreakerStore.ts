/**
 * Breaker state shared by a fleet through Redis: every breaker with the same name on the same
 * Redis (and prefix) sees one verdict, whichever process it runs in.
 *
 * - One hash per circuit under the prefix; each atomic step is a Lua script. A verdict arrives as
 *   durations and is dated by the server's `TIME` inside the script, so hosts whose clocks
 *   disagree agree on it; one made before the stored one (a late retry) never overwrites it.
 *   Probe leases and failure times are passed in from the Effect Clock.
 * - Verdicts reach every member by pub/sub on a dedicated subscriber connection; after a lost
 *   connection the stored verdict is emitted again, so members resynchronise.
 * - The half-open probe is single-flight across the fleet: one lease key per permit slot, taken
 *   with SET NX PX and released when the probe ends (or expires).
 * - Calls fail fast while Redis is down (no offline queue): the breaker then keeps its state
 *   locally and catches the store up when Redis is back. The layer builds even when Redis is down.
 * - The connection is driven as `RedisStore`'s is (one internal module): a per-call `deadline`
 *   kept by one sweeper fiber, a `liveness` watchdog, and a resync of every member on each ready.
 *
 * @since 0.1.0
 */
import { BreakerStore } from "@circuitry/breaker"
import * as Edition from "@circuitry/core/Edition"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { Cluster } from "ioredis"
import * as internal from "./internal/breakerStore.js"
import * as options from "./internal/options.js"

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
   * those nodes). A circuit's keys are `<prefix>{<name>}:...`: the hash tag keeps
   * each Lua step in one slot. Verdicts go by classic pub/sub, which reaches subscribers on every node.
   */
  readonly cluster?: Cluster | ReadonlyArray<string | { readonly host: string; readonly port: number }> | undefined
  /** Every key and the verdict channel live under this prefix. Default `"circuitry:breaker:"`. */
  readonly prefix?: string | undefined
  /**
   * One store call's limit (default 1 second), the same option as `RedisStore`'s: when it passes,
   * that call fails with a `BreakerStoreError` whose cause is `RedisStore.DeadlineExceeded` (the
   * breaker then keeps its local state), and the connection stays up.
   */
  readonly deadline?: Edition.DurationInput | undefined
  /**
   * The old name of `deadline`, still read. Giving both is an options error.
   *
   * @deprecated use `deadline`
   */
  readonly timeout?: Edition.DurationInput | undefined
  /**
   * How long the command connection may stay silent while calls wait on it (default 5 seconds, and
   * never less than `deadline`); past it the connection is torn down and made again, and every
   * member resynchronises. Shorter than `deadline` is an options error.
   */
  readonly liveness?: Edition.DurationInput | undefined
}

/**
 * Options that break a rule (the one options error of `@circuitry/redis`, also
 * `RedisStore.InvalidRedisOptions`); `message` names the option and the rule.
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
 * The store, with its two connections opened now and closed with the scope. Fails only on a bad
 * option (`InvalidRedisOptions`), never because Redis is down.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (
  options?: Options
) => Effect.Effect<BreakerStore.BreakerStoreService, InvalidRedisOptions, Scope.Scope> = internal.make

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
export const layer = (options?: Options): Layer.Layer<BreakerStore.BreakerStore, InvalidRedisOptions> =>
  Edition.layerScoped(BreakerStore.BreakerStore, internal.make(options))
