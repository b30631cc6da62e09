/**
 * The test side of the edition layer on Effect 3 (testkit.effect4.ts has the same names): what a
 * test needs that differs between the majors. See docs/editions.md.
 */
import { it as it3 } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Scheduler from "effect/Scheduler"
import type * as Scope from "effect/Scope"
import * as TestContext from "effect/TestContext"

export { assert, describe } from "@effect/vitest"
export * as TestClock from "effect/TestClock"

/** `it` of @effect/vitest; `it.scoped` gives a test a Scope (Effect 4's `it.effect` always does). */
export const it = it3

/** Runs an effect outside `it` (in a property) with a fresh TestClock and a Scope. */
export const runTest = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>): Promise<A> =>
  Effect.runPromise(Effect.provide(Effect.scoped(effect), TestContext.TestContext))

/** The count of one series of a counter (tags on Effect 3, attributes on 4). */
export const counterCount = (
  counter: Metric.Metric.Counter<number>,
  attributes: Record<string, string>
): Effect.Effect<number> => {
  let tagged = counter
  for (const [key, value] of Object.entries(attributes)) tagged = Metric.tagged(tagged, key, value)
  return Effect.map(Metric.value(tagged), (state) => state.count)
}

/** The first defect in a cause, if any. */
export const defectOf = (cause: Cause.Cause<unknown>): unknown => Option.getOrUndefined(Cause.dieOption(cause))

/** Yields to the other fibers once. */
export const yieldNow: Effect.Effect<void> = Effect.yieldNow()

/** A fiber's exit if it is done, without waiting (`unsafePoll` on Effect 3, `pollUnsafe` on 4). */
export const pollUnsafe = <A, E>(fiber: Fiber.RuntimeFiber<A, E>): Exit.Exit<A, E> | undefined =>
  fiber.unsafePoll() ?? undefined
/** The value of one series of a gauge (tags on Effect 3, attributes on 4). */
export const gaugeValue = (
  gauge: Metric.Metric.Gauge<number>,
  attributes: Record<string, string>
): Effect.Effect<number> => Effect.map(Metric.value(tagged(gauge, attributes)), (state) => state.value)

/** The count, sum, min and max of one series of a histogram (tags on Effect 3, attributes on 4). */
export const histogramOf = (
  histogram: Metric.Metric.Histogram<number>,
  attributes: Record<string, string>
): Effect.Effect<{ readonly count: number; readonly sum: number; readonly min: number; readonly max: number }> =>
  Effect.map(Metric.value(tagged(histogram, attributes)), ({ count, max, min, sum }) => ({ count, sum, min, max }))

const tagged = <M extends Metric.Metric<any, any, any>>(metric: M, attributes: Record<string, string>): M => {
  let result = metric
  for (const [key, value] of Object.entries(attributes)) result = Metric.tagged(result, key, value) as M
  return result
}

/**
 * Every series in the metric registry the current fiber records into (Effect 3's global one),
 * with its metric's name and its attributes (tags on Effect 3).
 */
export const metricSeries: Effect.Effect<
  ReadonlyArray<{ readonly name: string; readonly attributes: Record<string, string> }>
> = Effect.sync(() =>
  Metric.unsafeSnapshot().map((pair) => ({
    name: pair.metricKey.name,
    attributes: Object.fromEntries(pair.metricKey.tags.map((tag) => [tag.key, tag.value]))
  }))
)

/** The error `Effect.timeout` fails with (`TimeoutException` on Effect 3, `TimeoutError` on 4). */
export const timeoutError = (): Error => new Cause.TimeoutException()

/** A cause of an interruption by no fiber in particular. */
export const interruptCause: Cause.Cause<never> = Cause.interrupt(FiberId.none)

/** Virtual time as a test keeps it: the time now, sleeps to wake, and a step to the next one. */
export interface VirtualTime {
  readonly now: () => number
  /** Wakes `wake` at `now() + millis`; the function returned cancels it. */
  readonly sleep: (millis: number, wake: () => void) => () => void
  /** Moves time to the next due sleep and wakes it; false when nothing sleeps. */
  readonly advance: () => boolean
}

/**
 * Runs `program` to its end in virtual time, on a Clock that reads and sleeps on `time` and a
 * scheduler that is stepped until every fiber is suspended before time moves on (Effect 3's
 * `ControlledScheduler`). As deterministic as TestClock, without its real-time turns per step.
 */
export const runVirtual = <A>(program: Effect.Effect<A>, time: VirtualTime): A => {
  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => time.now(),
    unsafeCurrentTimeNanos: () => BigInt(Math.round(time.now() * 1_000_000)),
    currentTimeMillis: Effect.sync(() => time.now()),
    currentTimeNanos: Effect.sync(() => BigInt(Math.round(time.now() * 1_000_000))),
    sleep: (duration) =>
      Effect.async<void>((resume) => {
        const cancel = time.sleep(Duration.toMillis(duration), () => resume(Effect.void))
        return Effect.sync(cancel)
      })
  }
  const scheduler = new Scheduler.ControlledScheduler()
  const fiber = Effect.runFork(program.pipe(Effect.withClock(clock), Effect.withScheduler(scheduler)))
  for (;;) {
    while (scheduler.tasks.buckets.length > 0) scheduler.step()
    const exit = fiber.unsafePoll()
    if (exit !== null) {
      if (exit._tag === "Success") return exit.value
      throw new Error(`virtual run failed: ${String(exit.cause)}`)
    }
    if (!time.advance()) throw new Error("virtual run deadlocked: every fiber waits and nothing sleeps")
  }
}
