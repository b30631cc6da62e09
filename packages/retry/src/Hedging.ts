/**
 * Hedged calls: when a call has no result after a delay, start another copy of it, and take the
 * first success (Dean and Barroso's "hedged requests"; Polly's and resilience4j's hedging).
 *
 * - The delay is fixed, or a percentile of the latencies observed (the last 1,024 calls, kept in
 *   a ring; the percentile is recomputed every 32 samples by quickselect), within `min` / `max`.
 * - At most `maxHedges` extra copies run; with a `budget`, each one spends a token (and each call
 *   deposits), so hedges cannot multiply the load in a partial outage.
 * - The first success wins; the other copies are interrupted (their finalizers run) before the
 *   call returns. A `BreakerOpenError` / `LimiterRejectedError` from any copy stops hedging for
 *   that call.
 *
 * @since 0.1.0
 */
import type * as Edition from "@circuitry/core/Edition"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as errors from "./internal/errors.js"
import * as internal from "./internal/hedging.js"
import type { RetryBudget } from "./RetryBudget.js"

/**
 * @since 0.1.0
 * @category symbols
 */
export const TypeId: typeof internal.TypeId = internal.TypeId

/**
 * @since 0.1.0
 * @category symbols
 */
export type TypeId = typeof TypeId

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Shows in metrics. Default `"default"`. */
  readonly name?: string | undefined
  /**
   * How long a call runs alone before its first hedge (and between hedges). A duration, or a
   * percentile of the observed latencies (`{ percentile: 95 }` for p95, in [1, 100)) kept within
   * `min` (default 0) and `max`. Until 32 calls have been seen, a percentile delay is `max`, and a
   * call without `max` is not hedged.
   */
  readonly delay:
    | Edition.DurationInput
    | {
        readonly percentile: number
        readonly min?: Edition.DurationInput | undefined
        readonly max?: Edition.DurationInput | undefined
      }
  /** Extra copies of a call, at most, whole and >= 1. Default 1. */
  readonly maxHedges?: number | undefined
  /** Each hedge spends one token (and each call deposits one first attempt). */
  readonly budget?: RetryBudget | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Hedging {
  readonly [TypeId]: TypeId
  readonly name: string
  /** The delay a call made now would wait before its first hedge; none while it would not hedge. */
  readonly delay: Effect.Effect<Option.Option<Duration.Duration>>
  /** Latencies the percentile is computed from (0 for a fixed delay). */
  readonly samples: Effect.Effect<number>
  /** Runs an effect hedged: what `withHedging` does. */
  readonly execute: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/**
 * Options that break a rule; `message` names the option and the rule. The same class as
 * `RetryBudget.InvalidRetryOptions`: one options error for the whole package.
 *
 * @since 0.1.0
 * @category errors
 */
export const InvalidRetryOptions: typeof errors.InvalidRetryOptions = errors.InvalidRetryOptions

/**
 * @since 0.1.0
 * @category errors
 */
export type InvalidRetryOptions = errors.InvalidRetryOptions

/**
 * Whether a value is a `Hedging`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isHedging: (u: unknown) => u is Hedging = internal.isHedging

/**
 * Makes a hedging policy. Options are validated here, once.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Hedging, RetryBudget } from "@circuitry/retry"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const budget = yield* RetryBudget.make({ name: "search-hedges", ratio: 0.05 })
 *   const hedging = yield* Hedging.make({ name: "search", delay: { percentile: 95, max: "200 millis" }, budget })
 *   return yield* Effect.succeed("results").pipe(Hedging.withHedging(hedging))
 * })
 * ```
 */
export const make: (options: Options) => Effect.Effect<Hedging, InvalidRetryOptions, Scope.Scope> = internal.make

/**
 * A hedging policy as a `Layer` for the given tag.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: <I>(tag: Edition.Key<I, Hedging>, options: Options) => Layer.Layer<I, InvalidRetryOptions> =
  internal.layer

/**
 * Runs an effect hedged by a policy (a value or a tag). Data-first and data-last.
 *
 * @since 0.1.0
 * @category combinators
 * @example
 * ```ts
 * import { Hedging } from "@circuitry/retry"
 * import { Context, Effect } from "effect"
 *
 * class SearchHedging extends Context.Tag("SearchHedging")<SearchHedging, Hedging.Hedging>() {}
 *
 * const search = Effect.succeed(["a", "b"]).pipe(Hedging.withHedging(SearchHedging))
 * const main = search.pipe(Effect.provide(Hedging.layer(SearchHedging, { delay: "50 millis", maxHedges: 2 })))
 * ```
 */
export const withHedging: {
  <I = never>(
    hedging: Hedging | Edition.Key<I, Hedging>
  ): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R | I>
  <A, E, R, I = never>(
    self: Effect.Effect<A, E, R>,
    hedging: Hedging | Edition.Key<I, Hedging>
  ): Effect.Effect<A, E, R | I>
} = internal.withHedging

/**
 * Hedges by outcome, a counter tagged `hedging` and `outcome`: `started`, `won` (a hedge's
 * success ended the call), `denied` (the budget had no token).
 *
 * @since 0.1.0
 * @category metrics
 */
export const hedgesTotal = internal.hedgesTotal
