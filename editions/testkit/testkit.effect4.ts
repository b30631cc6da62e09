/**
 * The test side of the edition layer on Effect 4 (testkit.effect3.ts has the same names): what a
 * test needs that differs between the majors. See docs/editions.md.
 */
import { it as it4, type Vitest } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import type * as Queue from "effect/Queue"
import * as References from "effect/References"
import * as Result_ from "effect/Result"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import type { LogEntry, MetricSeries } from "./shared.js"

export { assert, describe } from "@effect/vitest"
export type { LogEntry, MetricSeries }
export * as TestClock from "effect/testing/TestClock"

/**
 * `it` of @effect/vitest; `it.scoped` gives a test a Scope (Effect 4's `it.effect` always does), and
 * `it.scopedLive` a Scope and the live services (Effect 4's `it.live`).
 */
export const it = Object.assign(it4, { scoped: it4.effect, scopedLive: it4.live })

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
  return Result_.isSuccess(found) ? found.success : undefined
}

/** Yields to the other fibers once. */
export const yieldNow: Effect.Effect<void> = Effect.yieldNow

export { expect, expectTypeOf } from "@effect/vitest"

/**
 * What an effect ended with, as a value: `Effect.either` on Effect 3, `Effect.result` on 4. Read it
 * with `Result` (Effect 4's names over `Either` on 3).
 */
export const result = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<Result<A, E>, never, R> =>
  Effect.result(self)

/** A success or a failure as a value: `Either` on Effect 3, `Result` on 4 (a public result of the breaker too). */
export type Result<A, E> = Result_.Result<A, E>

/** Reading a `Result` (`Either` on Effect 3) by Effect 4's names: here, Effect 4's own functions. */
export const Result = {
  succeed: Result_.succeed,
  fail: Result_.fail,
  isSuccess: Result_.isSuccess,
  isFailure: Result_.isFailure,
  getSuccess: Result_.getSuccess,
  getFailure: Result_.getFailure,
  getOrThrow: Result_.getOrThrow,
  match: Result_.match
}

/** A fiber's exit if it has ended (`Fiber.poll` on Effect 3, `pollUnsafe` on 4). */
export const poll = <A, E>(fiber: Fiber.Fiber<A, E>): Effect.Effect<Option.Option<Exit.Exit<A, E>>> =>
  Effect.sync(() => Option.fromUndefinedOr(fiber.pollUnsafe()))

/** Runs `self` on `clock` (`Effect.withClock` on Effect 3; `Clock.Clock` is a Reference on 4). */
export const withClock = <A, E, R>(self: Effect.Effect<A, E, R>, clock: Clock.Clock): Effect.Effect<A, E, R> =>
  Effect.provideService(self, Clock.Clock, clock)

/** A clock that reads `millis()` and sleeps on `base` (the clock interface differs between the majors). */
export const makeClock = (base: Clock.Clock, millis: () => number): Clock.Clock => ({
  currentTimeMillisUnsafe: millis,
  currentTimeNanosUnsafe: () => BigInt(millis()) * 1_000_000n,
  currentTimeMillis: Effect.sync(millis),
  currentTimeNanos: Effect.sync(() => BigInt(millis()) * 1_000_000n),
  // Elapsed time is the base clock's: only the wall-clock reading is moved.
  monotonicTimeNanosUnsafe: () => base.monotonicTimeNanosUnsafe(),
  monotonicTimeNanos: base.monotonicTimeNanos,
  sleep: (duration) => base.sleep(duration)
})

/** A layer that replaces the default logger with `f` (`Logger.replace` on Effect 3, `Logger.layer` on 4). */
export const logTo = (f: (entry: LogEntry) => void): Layer.Layer<never> =>
  Logger.layer([
    Logger.make(({ cause, fiber, logLevel, message }) =>
      f({
        messages: Array.isArray(message) ? message : [message],
        level: logLevel,
        annotations: fiber.getRef(References.CurrentLogAnnotations),
        cause
      })
    )
  ])

/** Every series of Effect's global metric registry (`Metric.unsafeSnapshot` on 3, `Metric.snapshot` on 4). */
export const metricSeries: Effect.Effect<ReadonlyArray<MetricSeries>> = Effect.map(Metric.snapshot, (all) =>
  all.map((series) => ({
    name: series.id,
    attributes: Object.fromEntries(Object.entries(series.attributes ?? {}).map(([key, value]) => [key, String(value)])),
    state: series.state
  }))
)

/** One series of a metric (`Metric.tagged` per tag on Effect 3, `Metric.withAttributes` on 4). */
export const withAttributes = <Input, State>(
  metric: Metric.Metric<Input, State>,
  attributes: Record<string, string>
): Metric.Metric<Input, State> => Metric.withAttributes(metric, attributes)

/** Whether a metric's state is a histogram's (`MetricState.isHistogramState` on Effect 3). */
export const isHistogramState = (state: unknown): state is Metric.HistogramState =>
  typeof state === "object" &&
  state !== null &&
  Array.isArray((state as Metric.HistogramState).buckets) &&
  typeof (state as Metric.HistogramState).sum === "number"

/** A subscription to a PubSub (a `Queue.Dequeue` on Effect 3, a `PubSub.Subscription` on 4). */
export type Subscription<A> = PubSub.Subscription<A>

/** Everything a subscription holds now, without waiting (Effect 4's `PubSub.takeAll` waits for one). */
export const drain = <A>(subscription: Subscription<A>): Effect.Effect<Array<A>> =>
  Effect.map(PubSub.takeUpTo(subscription, Number.POSITIVE_INFINITY), (values) => Array.from(values))

/** The next value of a subscription, waiting for it. */
export const take = <A>(subscription: Subscription<A>): Effect.Effect<A> => PubSub.take(subscription)

/** How many values a subscription holds (`Queue.size` on 3, `PubSub.remaining` on 4). */
export const remaining = <A>(subscription: Subscription<A>): Effect.Effect<number> => PubSub.remaining(subscription)

/** A stream of what a subscription receives. */
export const subscriptionStream = <A>(subscription: Subscription<A>): Stream.Stream<A> =>
  Stream.fromSubscription(subscription)

/**
 * Whether a fiber waits to take from `queue`: a negative `Queue.size` on Effect 3; Effect 4's
 * `Queue.size` never goes below 0, so its open state's takers are read.
 */
export const hasTaker = <A>(queue: Queue.Queue<A>): Effect.Effect<boolean> =>
  Effect.sync(() => queue.state._tag === "Open" && queue.state.takers.size > 0)

/** The tests of a suite that share one layer, built once; their `it` has `it.scoped`. */
export const layer =
  <R, E>(shared: Layer.Layer<R, E>, options?: { readonly timeout?: Duration.Input }) =>
  (
    name: string,
    f: (it: Vitest.MethodsNonLive<R> & { readonly scoped: Vitest.Tester<R | Scope.Scope> }) => void
  ): void =>
    it4.layer(shared, options)(name, (it) => f(Object.assign(it, { scoped: it.effect })))

/** A fiber's exit if it has ended, read synchronously (`unsafePoll`, null while running, on Effect 3). */
export const pollUnsafe = <A, E>(fiber: Fiber.Fiber<A, E>): Exit.Exit<A, E> | undefined => fiber.pollUnsafe()

/** The service a key gives (`Context.Tag.Service` on Effect 3, `Context.Service.Shape` on 4). */
export type ServiceOf<K> = K extends Context.Key<infer _Id, infer Shape> ? Shape : never

/**
 * A schedule that recurs while both do, after the longer of their delays (`Schedule.intersect` on
 * Effect 3, `Schedule.max` on 4).
 */
export const intersectSchedules = <E, E2, R, R2>(
  self: Schedule.Schedule<unknown, unknown, E, R>,
  that: Schedule.Schedule<unknown, unknown, E2, R2>
): Schedule.Schedule<unknown, unknown, E | E2, R | R2> => Schedule.max([self, that])

/** A layer built by a scoped effect, its resources kept for the layer's life (`Layer.unwrapScoped` on 3, `Layer.unwrap` on 4). */
export const unwrapScoped = <A, E1, R1, E, R>(
  self: Effect.Effect<Layer.Layer<A, E1, R1>, E, R>
): Layer.Layer<A, E | E1, R1 | Exclude<R, Scope.Scope>> => Layer.unwrap(self)

/** Fails with `onTimeout()` when `self` takes longer than `duration` (`Effect.timeoutFail` on 3, `timeoutOrElse` on 4). */
export const timeoutFail =
  <E2>(duration: Duration.Input, onTimeout: () => E2) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | E2, R> =>
    Effect.timeoutOrElse(self, { duration, orElse: () => Effect.fail(onTimeout()) })
