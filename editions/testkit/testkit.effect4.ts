/**
 * The test side of the edition layer on Effect 4 (testkit.effect3.ts has the same names): what a
 * test needs that differs between the majors. See docs/editions.md.
 */
import { it as it4 } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as Metric from "effect/Metric"
import * as Result from "effect/Result"
import * as Scheduler from "effect/Scheduler"
import type * as Scope from "effect/Scope"
import * as TestClock from "effect/testing/TestClock"

export { assert, describe } from "@effect/vitest"
export * as TestClock from "effect/testing/TestClock"

/** `it` of @effect/vitest; `it.scoped` gives a test a Scope (Effect 4's `it.effect` always does). */
export const it = Object.assign(it4, { scoped: it4.effect })

/** Runs an effect outside `it` (in a property) with a fresh TestClock and a Scope. */
export const runTest = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>): Promise<A> =>
  Effect.runPromise(Effect.provide(Effect.scoped(effect), TestClock.layer()))

/** The count of one series of a counter (tags on Effect 3, attributes on 4). */
export const counterCount = (
  counter: Metric.Counter<number>,
  attributes: Record<string, string>
): Effect.Effect<number> => Effect.map(Metric.value(Metric.withAttributes(counter, attributes)), (state) => state.count)

/** The first defect in a cause, if any. */
export const defectOf = (cause: Cause.Cause<unknown>): unknown => {
  const found = Cause.findDefect(cause)
  return Result.isSuccess(found) ? found.success : undefined
}

/** Yields to the other fibers once. */
export const yieldNow: Effect.Effect<void> = Effect.yieldNow

/** A fiber's exit if it is done, without waiting (`unsafePoll` on Effect 3, `pollUnsafe` on 4). */
export const pollUnsafe = <A, E>(fiber: Fiber.Fiber<A, E>): Exit.Exit<A, E> | undefined => fiber.pollUnsafe()
/** The value of one series of a gauge (tags on Effect 3, attributes on 4). */
export const gaugeValue = (gauge: Metric.Gauge<number>, attributes: Record<string, string>): Effect.Effect<number> =>
  Effect.map(Metric.value(Metric.withAttributes(gauge, attributes)), (state) => state.value)

/** The count, sum, min and max of one series of a histogram (tags on Effect 3, attributes on 4). */
export const histogramOf = (
  histogram: Metric.Histogram<number>,
  attributes: Record<string, string>
): Effect.Effect<{ readonly count: number; readonly sum: number; readonly min: number; readonly max: number }> =>
  Effect.map(Metric.value(Metric.withAttributes(histogram, attributes)), ({ count, max, min, sum }) => ({
    count,
    sum,
    min,
    max
  }))

/**
 * Every series in the metric registry the current fiber records into (Effect 3's global one),
 * with its metric's name and its attributes (tags on Effect 3).
 */
export const metricSeries: Effect.Effect<
  ReadonlyArray<{ readonly name: string; readonly attributes: Record<string, string> }>
> = Effect.map(Metric.snapshot, (snapshots) =>
  snapshots.map((snapshot) => ({ name: snapshot.id, attributes: { ...snapshot.attributes } }))
)

/** The error `Effect.timeout` fails with (`TimeoutException` on Effect 3, `TimeoutError` on 4). */
export const timeoutError = (): Error => new Cause.TimeoutError()

/** A cause of an interruption by no fiber in particular. */
export const interruptCause: Cause.Cause<never> = Cause.interrupt()

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
 * scheduler that is stepped until every fiber is suspended before time moves on (Effect 4's
 * `MixedScheduler` with its turns queued here rather than on `setImmediate`). As deterministic as
 * TestClock, without its real-time turns per step.
 */
export const runVirtual = <A>(program: Effect.Effect<A>, time: VirtualTime): A => {
  const nanos = () => BigInt(Math.round(time.now() * 1_000_000))
  const clock: Clock.Clock = {
    currentTimeMillisUnsafe: () => time.now(),
    currentTimeMillis: Effect.sync(() => time.now()),
    currentTimeNanosUnsafe: nanos,
    currentTimeNanos: Effect.sync(nanos),
    monotonicTimeNanosUnsafe: nanos,
    monotonicTimeNanos: Effect.sync(nanos),
    sleep: (duration) =>
      Effect.callback<void>((resume) => {
        const cancel = time.sleep(Duration.toMillis(duration), () => resume(Effect.void))
        return Effect.sync(cancel)
      })
  }
  const turns: Array<() => void> = []
  const scheduler = new Scheduler.MixedScheduler("async", (turn) => {
    let cancelled = false
    turns.push(() => {
      if (!cancelled) turn()
    })
    return () => {
      cancelled = true
    }
  })
  const context = Context.make(Scheduler.Scheduler, scheduler).pipe(Context.add(Clock.Clock, clock))
  const fiber = Effect.runForkWith(context)(program)
  for (;;) {
    while (turns.length > 0) turns.shift()!()
    const exit = fiber.pollUnsafe()
    if (exit !== undefined) {
      if (exit._tag === "Success") return exit.value
      throw new Error(`virtual run failed: ${String(exit.cause)}`)
    }
    if (!time.advance()) throw new Error("virtual run deadlocked: every fiber waits and nothing sleeps")
  }
}
