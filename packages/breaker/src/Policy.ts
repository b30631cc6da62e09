/**
 * Policies decide, from the outcomes of calls, when a closed circuit opens.
 *
 * @since 0.1.0
 */
import * as Edition from "@circuitry/core/Edition"
import * as internal from "./internal/policy.js"

/**
 * @since 0.1.0
 * @category symbols
 */
export const TypeId: unique symbol = internal.TypeId

/**
 * @since 0.1.0
 * @category symbols
 */
export type TypeId = typeof TypeId

/**
 * A description of when to open. Constructors never throw: a value out of range is reported by
 * `CircuitBreaker.make` as `InvalidBreakerOptions`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Policy {
  readonly [TypeId]: TypeId
  readonly _tag: "ConsecutiveFailures" | "FailureRate"
  /** A short human description, e.g. `consecutiveFailures(5)`. */
  readonly description: string
}

/**
 * Which calls a failure-rate policy looks at.
 *
 * @since 0.1.0
 * @category models
 */
export type Window =
  | { readonly _tag: "CountWindow"; readonly size: number }
  | { readonly _tag: "TimeWindow"; readonly duration: Edition.DurationInput }

/**
 * Opens after `threshold` failures in a row; any success resets the count.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Policy } from "@circuitry/breaker"
 *
 * const policy = Policy.consecutiveFailures(5)
 * ```
 */
export const consecutiveFailures = (threshold: number): Policy => internal.consecutiveFailures(threshold)

/**
 * The last `size` calls.
 *
 * @since 0.1.0
 * @category windows
 */
export const countWindow = (size: number): Window => ({ _tag: "CountWindow", size })

/**
 * The calls made within the last `duration`, counted in 20 buckets (so the window's edge moves
 * in steps of duration / 20).
 *
 * @since 0.1.0
 * @category windows
 */
export const timeWindow = (duration: Edition.DurationInput): Window => ({ _tag: "TimeWindow", duration })

/**
 * Opens when failures / calls in the window reaches `threshold` (or, with `slowCall`, when slow
 * calls / calls reaches its threshold), once the window holds at least `minimumCalls` calls.
 * A success does not wipe the window.
 *
 * `minimumCalls` defaults to 10, or to the window's size when a count window is smaller.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Policy } from "@circuitry/breaker"
 *
 * const policy = Policy.failureRate({
 *   threshold: 0.5,
 *   minimumCalls: 20,
 *   window: Policy.timeWindow("10 seconds"),
 *   slowCall: { duration: "2 seconds", threshold: 0.8 }
 * })
 * ```
 */
export const failureRate = (options: {
  readonly threshold: number
  readonly minimumCalls?: number | undefined
  readonly window: Window
  readonly slowCall?: { readonly duration: Edition.DurationInput; readonly threshold: number } | undefined
}): Policy => internal.failureRate(options)

/**
 * @since 0.1.0
 * @category guards
 */
export const isPolicy: (u: unknown) => u is Policy = internal.isPolicy
