import { OptionRules } from "@circuitry/core"
import * as Edition from "@circuitry/core/Edition"
import { isRejection } from "@circuitry/core/Rejection"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as R from "../Retry.js"
import type * as RB from "../RetryBudget.js"
import type { InvalidRetryOptions } from "./errors.js"
import { broken, invalidOf } from "./options.js"
import { isBudgetOrTag, isRetryBudget, LocalBudget } from "./retryBudget.js"

type RetryBudget = RB.RetryBudget

/** Used when `maxRetryAfter` is not given: 1 second. */
const DEFAULT_MAX_RETRY_AFTER_MILLIS = 1_000

/** @internal */
export interface Resolved<E, X, I> {
  readonly schedule: Schedule.Schedule<X, E>
  readonly budget: RetryBudget | Edition.Key<I, RetryBudget> | undefined
  readonly while: ((error: E) => boolean) | undefined
  readonly maxRetryAfterMillis: number
}

const SCHEDULE_RULE = "a Schedule"

const OptionsSchema = Schema.Struct({
  schedule: Schema.optional(OptionRules.Is(Schedule.isSchedule, SCHEDULE_RULE)),
  budget: Schema.optional(
    OptionRules.Is(isBudgetOrTag, "a RetryBudget or a service key (Context.Tag, Context.Key) of one")
  ),
  while: Schema.optional(
    OptionRules.Is((u): u is (error: unknown) => boolean => typeof u === "function", "a function of the error")
  ),
  maxRetryAfter: Schema.optional(OptionRules.FiniteMillis)
})

/** @internal */
export const resolve = <E, X, I>(
  options: R.Options<E, X, I>
): Edition.Result<Resolved<E, X, I>, InvalidRetryOptions> => {
  const invalid = invalidOf("Retry.retry", options)
  return Edition.Result.flatMap(OptionRules.decode(OptionsSchema, options, invalid), (o) =>
    // The schema has checked each value given; these are the same values, as their types say.
    o.schedule === undefined
      ? Edition.Result.fail(invalid(broken("schedule", SCHEDULE_RULE, undefined)))
      : Edition.Result.succeed({
          schedule: options.schedule,
          budget: options.budget,
          while: options.while,
          maxRetryAfterMillis: o.maxRetryAfter ?? DEFAULT_MAX_RETRY_AFTER_MILLIS
        })
  )
}

/**
 * The options last resolved for each schedule, and the `maxRetryAfter` they were resolved from. A
 * retry is often applied once per call (`self.pipe(Retry.retry({ schedule, budget }))` in a
 * handler), to the same values each time, and decoding them costs about a microsecond (the bench's
 * first attempt with a budget went from 0.4x to 1.2x `Effect.retry` on Effect 4 without this), so
 * values that passed last time for the same schedule are not decoded again: the same schedule,
 * budget and `while` (by identity) and the same `maxRetryAfter` (by `===`). An entry leaves with
 * its schedule.
 */
const lastResolved = new WeakMap<
  object,
  { readonly resolved: Resolved<any, any, any>; readonly maxRetryAfter: unknown }
>()

/** `resolve`, skipped for the values that passed last time for the same schedule. */
const resolveCached = <E, X, I>(
  options: R.Options<E, X, I>
): Edition.Result<Resolved<E, X, I>, InvalidRetryOptions> => {
  const last = typeof options === "object" && options !== null ? lastResolved.get(options.schedule) : undefined
  if (
    last !== undefined &&
    last.resolved.budget === options.budget &&
    last.resolved.while === options.while &&
    last.maxRetryAfter === options.maxRetryAfter
  ) {
    return Edition.Result.succeed(last.resolved)
  }
  const resolved = resolve(options)
  if (Edition.Result.isSuccess(resolved)) {
    lastResolved.set(options.schedule, {
      resolved: Edition.Result.successOf(resolved),
      maxRetryAfter: options.maxRetryAfter
    })
  }
  return resolved
}

/**
 * The retry loop. The first attempt deposits into the budget and runs `self` as it is; only a
 * failure steps the schedule (so a first attempt that succeeds costs one deposit, and the
 * schedule's stepper is made at the first failure). Each retry waits the schedule's delay (or a
 * rejection's `retryAfterMillis`, whichever is longer), then spends one token: a retry interrupted
 * while it waits has spent nothing.
 */
const run = <A, E, R, X>(
  self: Effect.Effect<A, E, R>,
  options: Resolved<E, X, unknown>,
  budget: RetryBudget | undefined
): Effect.Effect<A, E, R> => {
  type Step = (now: number, input: E) => Effect.Effect<number | undefined>
  const attempt = (step: Step | undefined): Effect.Effect<A, E, R> =>
    Edition.catchFailure(self, (error) => next(error, step))
  const retryAfter = (error: E): number | undefined => {
    if (!isRejection(error)) return 0
    const millis = error.retryAfterMillis
    // 0 means the rejecting side does not know when it will admit calls (a half-open or isolated
    // breaker): retrying at once would be a tight loop against it.
    return millis > 0 && millis <= options.maxRetryAfterMillis ? millis : undefined
  }
  const next = (error: E, step: Step | undefined): Effect.Effect<A, E, R> => {
    if (options.while !== undefined && !options.while(error)) return Effect.fail(error)
    const floor = retryAfter(error)
    if (floor === undefined) return Effect.fail(error)
    if (step === undefined) {
      return Effect.flatMap(Edition.stepper(options.schedule) as Effect.Effect<Step>, (made) => next(error, made))
    }
    return Effect.clockWith((clock) =>
      Effect.flatMap(step(Edition.nowUnsafe(clock), error), (wait) => {
        if (wait === undefined) return Effect.fail(error)
        const delay = Math.max(floor, wait)
        const retry =
          budget === undefined
            ? attempt(step)
            : Effect.flatMap(budget.tryWithdraw, (spent) => (spent ? attempt(step) : Effect.fail(error)))
        return delay > 0 ? Effect.andThen(Effect.sleep(Duration.millis(delay)), retry) : retry
      })
    )
  }
  if (budget === undefined) return attempt(undefined)
  if (budget instanceof LocalBudget) {
    // The in-memory budget's deposit is one synchronous step: no effect of its own.
    return Effect.clockWith((clock) => {
      budget.unsafeDeposit(Edition.nowUnsafe(clock))
      return attempt(undefined)
    })
  }
  return Effect.andThen(budget.deposit, attempt(undefined))
}

/** @internal */
export const retry: typeof R.retry = dual(
  2,
  <A, E, R, X, I>(self: Effect.Effect<A, E, R>, options: R.Options<E, X, I>): Effect.Effect<A, E, R | I> => {
    // Validated once, when the combinator is applied; a bad option is a defect of every call,
    // since the contract's error channel is the effect's own.
    const resolved = resolveCached(options)
    if (Edition.Result.isFailure(resolved)) return Effect.die(Edition.Result.failureOf(resolved))
    const o = Edition.Result.successOf(resolved) as Resolved<E, X, unknown>
    const budget = o.budget
    if (budget === undefined || isRetryBudget(budget)) return run(self, o, budget)
    return Effect.flatMap(Edition.service(budget as Edition.Key<I, RetryBudget>), (b) => run(self, o, b))
  }
)
