import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { dual } from "effect/Function"
import * as Schedule from "effect/Schedule"
import * as ScheduleDecision from "effect/ScheduleDecision"
import * as Intervals from "effect/ScheduleIntervals"
import type * as R from "../Retry.js"
import type * as RB from "../RetryBudget.js"
import type { InvalidRetryOptions } from "./errors.js"
import { describe, invalid, isOptionsObject, toMillis } from "./options.js"
import { isRejection } from "./rejection.js"
import { isBudgetOrTag, isRetryBudget, LocalBudget } from "./retryBudget.js"

type RetryBudget = RB.RetryBudget

/** Used when `maxRetryAfter` is not given: 1 second. */
const DEFAULT_MAX_RETRY_AFTER_MILLIS = 1_000

/** @internal */
export interface Resolved<E, X, I> {
  readonly schedule: Schedule.Schedule<X, E>
  readonly budget: RetryBudget | Context.Tag<I, RetryBudget> | undefined
  readonly while: ((error: E) => boolean) | undefined
  readonly maxRetryAfterMillis: number
}

/** @internal */
export const resolve = <E, X, I>(
  options: R.Options<E, X, I>
): Either.Either<Resolved<E, X, I>, InvalidRetryOptions> => {
  const fail = (message: string) => Either.left(invalid(message))
  if (!isOptionsObject(options) || options === undefined) {
    return fail(`Retry.retry options must be an object with a schedule, got ${describe(options)}`)
  }
  if (!Schedule.isSchedule(options.schedule)) {
    return fail(`Retry.retry schedule must be a Schedule, got ${describe(options.schedule)}`)
  }
  if (options.budget !== undefined && !isBudgetOrTag(options.budget)) {
    return fail(`Retry.retry budget must be a RetryBudget or a Context.Tag of one, got ${describe(options.budget)}`)
  }
  if (options.while !== undefined && typeof options.while !== "function") {
    return fail(`Retry.retry while must be a function of the error, got ${describe(options.while)}`)
  }
  const maxRetryAfterMillis =
    options.maxRetryAfter === undefined ? DEFAULT_MAX_RETRY_AFTER_MILLIS : toMillis(options.maxRetryAfter)
  if (maxRetryAfterMillis === undefined) {
    return fail(`Retry.retry maxRetryAfter must be a finite duration >= 0, got ${describe(options.maxRetryAfter)}`)
  }
  return Either.right({
    schedule: options.schedule,
    budget: options.budget,
    while: options.while,
    maxRetryAfterMillis
  })
}

/**
 * The retry loop. The first attempt deposits into the budget and runs `self` as it is; only a
 * failure steps the schedule (so a first attempt that succeeds costs one deposit). Each retry
 * waits the schedule's delay (or a rejection's `retryAfterMillis`, whichever is longer), then
 * spends one token: a retry interrupted while it waits has spent nothing.
 */
const run = <A, E, R, X>(
  self: Effect.Effect<A, E, R>,
  options: Resolved<E, X, unknown>,
  budget: RetryBudget | undefined
): Effect.Effect<A, E, R> => {
  const schedule = options.schedule
  const attempt = (state: unknown): Effect.Effect<A, E, R> => Effect.catchAll(self, (error) => next(error, state))
  const retryAfter = (error: E): number | undefined => {
    if (!isRejection(error)) return 0
    const millis = error.retryAfterMillis
    // 0 means the rejecting side does not know when it will admit calls (a half-open or isolated
    // breaker): retrying at once would be a tight loop against it.
    return millis > 0 && millis <= options.maxRetryAfterMillis ? millis : undefined
  }
  const next = (error: E, state: unknown): Effect.Effect<A, E, R> => {
    if (options.while !== undefined && !options.while(error)) return Effect.fail(error)
    const floor = retryAfter(error)
    if (floor === undefined) return Effect.fail(error)
    return Effect.clockWith((clock) => {
      const now = clock.unsafeCurrentTimeMillis()
      return Effect.flatMap(schedule.step(now, error, state), ([nextState, , decision]) => {
        if (ScheduleDecision.isDone(decision)) return Effect.fail(error)
        const delay = Math.max(floor, Intervals.start(decision.intervals) - now)
        const retry =
          budget === undefined
            ? attempt(nextState)
            : Effect.flatMap(budget.tryWithdraw, (spent) => (spent ? attempt(nextState) : Effect.fail(error)))
        return delay > 0 ? Effect.zipRight(Effect.sleep(Duration.millis(delay)), retry) : retry
      })
    })
  }
  if (budget === undefined) return attempt(schedule.initial)
  if (budget instanceof LocalBudget) {
    // The in-memory budget's deposit is one synchronous step: no effect of its own.
    return Effect.clockWith((clock) => {
      budget.unsafeDeposit(clock.unsafeCurrentTimeMillis())
      return attempt(schedule.initial)
    })
  }
  return Effect.zipRight(budget.deposit, attempt(schedule.initial))
}

/** @internal */
export const retry: typeof R.retry = dual(
  2,
  <A, E, R, X, I>(self: Effect.Effect<A, E, R>, options: R.Options<E, X, I>): Effect.Effect<A, E, R | I> => {
    // Validated once, when the combinator is applied; a bad option is a defect of every call,
    // since the contract's error channel is the effect's own.
    const resolved = resolve(options)
    if (Either.isLeft(resolved)) return Effect.die(resolved.left)
    const o = resolved.right as Resolved<E, X, unknown>
    const budget = o.budget
    if (budget === undefined || isRetryBudget(budget)) return run(self, o, budget)
    return Effect.flatMap(budget as Context.Tag<I, RetryBudget>, (b) => run(self, o, b))
  }
)
