/**
 * Retries that know about budgets, breakers and limiters: `Effect.retry` with a `Schedule`, plus
 *
 * - a `RetryBudget`: every first attempt deposits, every retry spends one token, and a retry that
 *   finds no token does not happen (the caller gets the last error, and the denial is counted);
 * - rejections from further down (`BreakerOpenError` from `@circuitry/breaker`,
 *   `LimiterRejectedError` from `@circuitry/limiter`, recognised by `_tag` and a numeric
 *   `retryAfterMillis`) are retried only after their `retryAfterMillis`, and only when it is at
 *   most `maxRetryAfter`; otherwise, or when it is 0 (not known), the call fails at once. A
 *   rejection is never retried in a tight loop.
 *
 * @since 0.1.0
 */
import type * as Edition from "@circuitry/core/Edition"
import type * as Effect from "effect/Effect"
import type * as Schedule from "effect/Schedule"
import * as internal from "./internal/retry.js"
import type { RetryBudget } from "./RetryBudget.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options<E, X, I = never> {
  /** When to retry and how long to wait: fed each error, stepped once per retry. */
  readonly schedule: Schedule.Schedule<X, E>
  /** Each retry spends one token; a first attempt deposits. A value, or a tag to find it by. */
  readonly budget?: RetryBudget | Edition.Key<I, RetryBudget> | undefined
  /** Only errors for which this holds are retried. Default: every failure (defects never are). */
  readonly while?: ((error: E) => boolean) | undefined
  /**
   * The longest `retryAfterMillis` of a breaker's or limiter's rejection worth waiting for; a
   * rejection that asks for longer fails at once. Default `"1 second"`.
   */
  readonly maxRetryAfter?: Edition.DurationInput | undefined
}

/**
 * Retries `self` by `options.schedule`, within `options.budget`. Data-first and data-last.
 *
 * The wait before a retry is the schedule's delay, or a rejection's `retryAfterMillis` when that
 * is longer. The token is spent when the retry starts, after its wait: a retry interrupted while
 * it waits has spent nothing. Options are checked when `retry` is applied; a bad one makes the
 * effect die with `InvalidRetryOptions` (the error channel is the effect's own).
 *
 * @since 0.1.0
 * @category combinators
 * @example
 * ```ts
 * import { CircuitBreaker } from "@circuitry/breaker"
 * import { Retry, RetryBudget } from "@circuitry/retry"
 * import { Effect, Schedule } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const breaker = yield* CircuitBreaker.make({ name: "payments" })
 *   const budget = yield* RetryBudget.make({ name: "payments" })
 *   const charge = Effect.fail({ _tag: "Timeout" as const })
 *   return yield* charge.pipe(
 *     CircuitBreaker.withBreaker(breaker),
 *     Retry.retry({
 *       schedule: Schedule.exponential("100 millis").pipe(Schedule.intersect(Schedule.recurs(3))),
 *       budget,
 *       while: (e) => e._tag === "Timeout" || e._tag === "BreakerOpenError",
 *       maxRetryAfter: "2 seconds"
 *     })
 *   )
 * })
 * ```
 */
export const retry: {
  <E, X, I = never>(
    options: Options<NoInfer<E>, X, I>
  ): <A, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R | I>
  <A, E, R, X, I = never>(self: Effect.Effect<A, E, R>, options: Options<NoInfer<E>, X, I>): Effect.Effect<A, E, R | I>
} = internal.retry
