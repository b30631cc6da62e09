/**
 * One retry budget for a whole fleet, through Redis: every instance with the same budget name on
 * the same Redis (and prefix) deposits into and spends from one balance, so that the fleet's
 * retries stay within `ratio` of the fleet's first attempts.
 *
 * - The window is ten buckets, one key each for deposits and for withdrawals, expiring with the
 *   window; the floor is a token bucket in a hash. Each step is a Lua script given `now` from the
 *   Effect Clock.
 * - A first attempt never waits on the network: deposits go to the local budget at once and to
 *   Redis in the background, batched (one INCRBY in flight carries every deposit made meanwhile).
 * - A retry asks Redis within `deadline` (default 100 ms). When Redis fails or is late, the
 *   instance decides on its local budget (the same options, this instance's deposits) for a
 *   second, then asks Redis again: no call fails, or waits past `deadline`, because of Redis.
 *
 * @since 0.1.0
 */
import * as Edition from "@circuitry/core/Edition"
import type { RetryBudget } from "@circuitry/retry"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { Cluster } from "ioredis"
import * as redisOptions from "./internal/options.js"
import * as internal from "./internal/retryBudget.js"

/**
 * The budget's options (`name`, `ratio`, `minPerSecond`, `window`; `minPerSecond` is for the
 * whole fleet, and for each instance alone while it decides locally), and where Redis is.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends RetryBudget.Options {
  /** Default `"redis://127.0.0.1:6379"`. */
  readonly url?: string | undefined
  /**
   * A Redis Cluster instead of `url` (giving both is an options error): an ioredis `Cluster`
   * that the application owns (used as it is, left open when the scope closes), or its nodes
   * (`redis://` URLs or `{ host, port }`). A budget's keys are `<prefix>{<name>}:...`: the hash
   * tag keeps each Lua step in one slot.
   */
  readonly cluster?: Cluster | ReadonlyArray<string | { readonly host: string; readonly port: number }> | undefined
  /** Every key lives under this prefix. Default `"circuitry:retry-budget:"`. */
  readonly prefix?: string | undefined
  /**
   * How long a retry waits for Redis before deciding locally (default `"100 millis"`): the same
   * option as `RedisStore`'s and `RedisBreakerStore`'s.
   */
  readonly deadline?: Edition.DurationInput | undefined
  /**
   * The old name of `deadline`, still read. Giving both is an options error.
   *
   * @deprecated use `deadline`
   */
  readonly timeout?: Edition.DurationInput | undefined
}

/**
 * Options that break a rule (the one options error of `@circuitry/redis`, as for `RedisStore` and
 * `RedisBreakerStore`); the retry budget's own rules (`ratio`, `minPerSecond`, `window`) included.
 * `message` names the option and the rule.
 *
 * @since 0.2.0
 * @category errors
 */
export const InvalidRedisOptions: typeof redisOptions.InvalidRedisOptions = redisOptions.InvalidRedisOptions

/**
 * @since 0.2.0
 * @category errors
 */
export type InvalidRedisOptions = redisOptions.InvalidRedisOptions

/**
 * A fleet-wide budget, its connection opened now and closed with the scope. Fails only on a bad
 * option (`InvalidRedisOptions`; before 0.2.0 it was the retry package's `InvalidRetryOptions`),
 * never because Redis is down.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Retry } from "@circuitry/retry"
 * import { RedisRetryBudget } from "@circuitry/redis"
 * import { Effect, Schedule } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const budget = yield* RedisRetryBudget.make({ name: "payments", url: "redis://127.0.0.1:6379" })
 *   return yield* Effect.succeed("charged").pipe(Retry.retry({ schedule: Schedule.recurs(3), budget }))
 * }).pipe(Effect.scoped)
 * ```
 */
export const make: (options?: Options) => Effect.Effect<RetryBudget.RetryBudget, InvalidRedisOptions, Scope.Scope> =
  internal.make

/**
 * A fleet-wide budget as a `Layer` for the given tag.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <I>(
  tag: Edition.Key<I, RetryBudget.RetryBudget>,
  options?: Options
): Layer.Layer<I, InvalidRedisOptions> => Edition.layerScoped(tag, internal.make(options))
