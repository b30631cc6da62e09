/**
 * Policies decide, from the outcomes of calls, when a closed circuit opens.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import { isWhole, millis } from "./internal/validation.js"
import * as Tracker from "./internal/tracker.js"

/**
 * @since 0.1.0
 * @category symbols
 */
export const TypeId: unique symbol = Symbol.for("@circuitry/breaker/Policy")

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
  /** @internal the first rule this policy breaks, if any */
  readonly problem: string | undefined
  /** @internal whether outcomes need the call's start and end times */
  readonly timed: boolean
  /** @internal a fresh, empty tracker */
  readonly makeTracker: () => Tracker.Tracker
}

/**
 * Which calls a failure-rate policy looks at.
 *
 * @since 0.1.0
 * @category models
 */
export type Window =
  | { readonly _tag: "CountWindow"; readonly size: number }
  | { readonly _tag: "TimeWindow"; readonly duration: Duration.DurationInput }

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
export const consecutiveFailures = (threshold: number): Policy => ({
  [TypeId]: TypeId,
  _tag: "ConsecutiveFailures",
  description: `consecutiveFailures(${threshold})`,
  problem: isWhole(threshold, 1)
    ? undefined
    : `policy: consecutiveFailures threshold must be a whole number >= 1, got ${threshold}`,
  timed: false,
  makeTracker: () => new Tracker.ConsecutiveFailures(threshold)
})

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
export const timeWindow = (duration: Duration.DurationInput): Window => ({ _tag: "TimeWindow", duration })

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
  readonly slowCall?: { readonly duration: Duration.DurationInput; readonly threshold: number } | undefined
}): Policy => {
  const window = options.window as Window | undefined
  const windowProblem = checkWindow(window)
  const minimumCalls =
    options.minimumCalls ?? (window?._tag === "CountWindow" && isWhole(window.size, 1) ? Math.min(10, window.size) : 10)
  const slowMillis = options.slowCall === undefined ? undefined : millis(options.slowCall.duration)
  const problem =
    (isRatio(options.threshold)
      ? undefined
      : `policy: failureRate threshold must be a number with 0 < threshold <= 1, got ${options.threshold}`) ??
    windowProblem ??
    (isWhole(minimumCalls, 1)
      ? undefined
      : `policy: failureRate minimumCalls must be a whole number >= 1, got ${minimumCalls}`) ??
    (window?._tag === "CountWindow" && minimumCalls > window.size
      ? `policy: failureRate minimumCalls (${minimumCalls}) must not exceed the count window's size (${window.size}), or the circuit could never open`
      : undefined) ??
    (options.slowCall === undefined
      ? undefined
      : slowMillis === undefined || !(slowMillis >= 0)
        ? `policy: failureRate slowCall.duration must be a finite duration >= 0`
        : isRatio(options.slowCall.threshold)
          ? undefined
          : `policy: failureRate slowCall.threshold must be a number with 0 < threshold <= 1, got ${options.slowCall.threshold}`)
  const rate: Tracker.RateOptions = {
    threshold: options.threshold,
    minimumCalls,
    slowMillis,
    slowThreshold: options.slowCall?.threshold ?? 1
  }
  const windowText =
    window === undefined
      ? "?"
      : window._tag === "CountWindow"
        ? `countWindow(${window.size})`
        : `timeWindow(${millis(window.duration)}ms)`
  return {
    [TypeId]: TypeId,
    _tag: "FailureRate",
    description: `failureRate(${options.threshold}, ${windowText}, minimumCalls ${minimumCalls})`,
    problem,
    timed: window?._tag === "TimeWindow" || slowMillis !== undefined,
    makeTracker: () =>
      window!._tag === "CountWindow"
        ? new Tracker.CountWindow(window!.size, rate)
        : new Tracker.TimeWindow(millis(window!.duration)!, rate)
  }
}

/**
 * @since 0.1.0
 * @category guards
 */
export const isPolicy = (u: unknown): u is Policy => typeof u === "object" && u !== null && TypeId in u

const checkWindow = (window: Window | undefined): string | undefined => {
  if (window === undefined || typeof window !== "object") {
    return "policy: failureRate window is required: Policy.countWindow(size) or Policy.timeWindow(duration)"
  }
  if (window._tag === "CountWindow") {
    return isWhole(window.size, 1) && window.size <= 1_000_000
      ? undefined
      : `policy: countWindow size must be a whole number between 1 and 1000000, got ${window.size}`
  }
  const ms = millis(window.duration)
  return ms !== undefined && ms >= 1
    ? undefined
    : `policy: timeWindow duration must be a finite duration of at least 1 millisecond`
}

const isRatio = (n: unknown): n is number => typeof n === "number" && n > 0 && n <= 1
