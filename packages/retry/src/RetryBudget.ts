/**
 * A retry budget: how many retries (and hedges) a client may add to its first attempts, so that
 * retries cannot multiply the load on a dependency that is already failing (Finagle's
 * `RetryBudget`, gRPC's retry throttling).
 *
 * Every first attempt deposits `ratio` tokens, which expire after `window`; a retry spends one.
 * Beside the deposits, a floor of `minPerSecond` retries per second is always allowed, so that a
 * client with little traffic can still retry. Time comes from the Effect `Clock`.
 *
 * @since 0.1.0
 */
import type * as Edition from "@circuitry/core/Edition"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as errors from "./internal/errors.js"
import * as internal from "./internal/retryBudget.js"

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
  /** Retries allowed per first attempt, >= 0. Default 0.1 (retries add at most 10% to the load). */
  readonly ratio?: number | undefined
  /** Retries always allowed per second, >= 0, whatever the deposits. Default 10. */
  readonly minPerSecond?: number | undefined
  /** How long a deposit lasts (at least 10 ms). Default `"10 seconds"`. */
  readonly window?: Edition.DurationInput | undefined
}

/**
 * A budget shared by every call that is given it. Made by `make` (in memory) or by
 * `RedisRetryBudget.make` in `@circuitry/redis` (one budget for a whole fleet).
 *
 * This interface is the port a backend implements: `deposit`, `tryWithdraw` and `available` on
 * the Effect Clock, with the semantics above, and the `TypeId`. Both backends pass one conformance
 * suite (`editions/testkit/conformance/retryBudget.ts`, see docs/retry.md).
 *
 * @since 0.1.0
 * @category models
 */
export interface RetryBudget {
  readonly [TypeId]: TypeId
  readonly name: string
  /** Whole tokens that could be spent now. */
  readonly available: Effect.Effect<number>
  /** Records one first attempt (deposits `ratio` tokens). `Retry.retry` and `withHedging` do it for you. */
  readonly deposit: Effect.Effect<void>
  /** Spends one token if there is one; `false` (and a denial counted) when there is none. */
  readonly tryWithdraw: Effect.Effect<boolean>
}

/**
 * Options that break a rule, from any constructor in this package; `message` names the option
 * and the rule.
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
 * Whether a value is a `RetryBudget`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isRetryBudget: (u: unknown) => u is RetryBudget = internal.isRetryBudget

/**
 * Makes an in-memory budget. Options are validated here, once.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Retry, RetryBudget } from "@circuitry/retry"
 * import { Effect, Schedule } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const budget = yield* RetryBudget.make({ name: "payments", ratio: 0.1, minPerSecond: 10 })
 *   return yield* Effect.fail("flaky").pipe(
 *     Retry.retry({ schedule: Schedule.exponential("50 millis").pipe(Schedule.intersect(Schedule.recurs(3))), budget })
 *   )
 * })
 * ```
 */
export const make: (options?: Options) => Effect.Effect<RetryBudget, InvalidRetryOptions, Scope.Scope> = internal.make

/**
 * A budget as a `Layer` for the given tag.
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { Retry, RetryBudget } from "@circuitry/retry"
 * import { Context, Effect, Schedule } from "effect"
 *
 * class PaymentsBudget extends Context.Tag("PaymentsBudget")<PaymentsBudget, RetryBudget.RetryBudget>() {}
 *
 * const charge = Effect.succeed("charged").pipe(Retry.retry({ schedule: Schedule.recurs(3), budget: PaymentsBudget }))
 * const main = charge.pipe(Effect.provide(RetryBudget.layer(PaymentsBudget, { ratio: 0.2 })))
 * ```
 */
export const layer: <I>(tag: Edition.Key<I, RetryBudget>, options?: Options) => Layer.Layer<I, InvalidRetryOptions> =
  internal.layer

/**
 * First attempts recorded, a counter tagged `budget`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const depositsTotal = internal.depositsTotal

/**
 * Retries and hedges asked of a budget, a counter tagged `budget` and `outcome` (`allowed`,
 * `denied`).
 *
 * @since 0.1.0
 * @category metrics
 */
export const retriesTotal = internal.retriesTotal
