/**
 * The test side of the edition layer on Effect 3 (testkit.effect4.ts has the same names): what a
 * test needs that differs between the majors. See docs/editions.md.
 */
import { it as it3, layer as layer3, type Vitest } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Chunk from "effect/Chunk"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import type * as MetricKeyType from "effect/MetricKeyType"
import * as MetricState from "effect/MetricState"
import * as Option from "effect/Option"
import * as Scheduler from "effect/Scheduler"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestContext from "effect/TestContext"
import type { Subscription } from "./fixture.effect3.js"
import { type LogEntry, type MetricSeries, type RecordedSleeps, recordingSleepsOver } from "./shared.js"

export { assert, describe } from "@effect/vitest"
export type { LogEntry, MetricSeries, RecordedSleeps }
export * as TestClock from "effect/TestClock"

/**
 * `it` of @effect/vitest; `it.scoped` gives a test a Scope (Effect 4's `it.effect` always does), and
 * `it.scopedLive` a Scope and the live services (Effect 4's `it.live`).
 */
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

export { expect, expectTypeOf } from "@effect/vitest"

/**
 * What an effect ended with, as a value: `Effect.either` on Effect 3, `Effect.result` on 4. Read it
 * with `Result` (Effect 4's names over `Either` here).
 */
export const result = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<Result<A, E>, never, R> =>
  Effect.either(self)

/** A success or a failure as a value: `Either` on Effect 3, `Result` on 4 (a public result of the breaker too). */
export type Result<A, E> = Either.Either<A, E>

/** Reading a `Result` (`Either` on Effect 3) by Effect 4's names. */
export const Result = {
  succeed: <A>(a: A): Result<A, never> => Either.right(a),
  fail: <E>(e: E): Result<never, E> => Either.left(e),
  isSuccess: <A, E>(self: Result<A, E>): self is Either.Right<E, A> => Either.isRight(self),
  isFailure: <A, E>(self: Result<A, E>): self is Either.Left<E, A> => Either.isLeft(self),
  getSuccess: <A, E>(self: Result<A, E>): Option.Option<A> => Either.getRight(self),
  getFailure: <A, E>(self: Result<A, E>): Option.Option<E> => Either.getLeft(self),
  getOrThrow: <A, E>(self: Result<A, E>): A => Either.getOrThrow(self),
  match: <A, E, B, C = B>(
    self: Result<A, E>,
    cases: { readonly onSuccess: (a: A) => B; readonly onFailure: (e: E) => C }
  ): B | C => Either.match(self, { onRight: cases.onSuccess, onLeft: cases.onFailure })
}

/** A fiber's exit if it has ended (`Fiber.poll` on Effect 3, `pollUnsafe` on 4). */
export const poll = <A, E>(fiber: Fiber.RuntimeFiber<A, E>): Effect.Effect<Option.Option<Exit.Exit<A, E>>> =>
  Fiber.poll(fiber)

/** Runs `self` on `clock` (`Effect.withClock` on Effect 3; `Clock.Clock` is a Reference on 4). */
export const withClock = <A, E, R>(self: Effect.Effect<A, E, R>, clock: Clock.Clock): Effect.Effect<A, E, R> =>
  Effect.withClock(self, clock)

/** A clock that reads `millis()` and sleeps on `base` (the clock interface differs between the majors). */
export const makeClock = (base: Clock.Clock, millis: () => number): Clock.Clock => ({
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: millis,
  unsafeCurrentTimeNanos: () => BigInt(millis()) * 1_000_000n,
  currentTimeMillis: Effect.sync(millis),
  currentTimeNanos: Effect.sync(() => BigInt(millis()) * 1_000_000n),
  sleep: (duration) => base.sleep(duration)
})

/**
 * A Clock on the fiber's own (the TestClock in a test: `TestClock.adjust` still drives it) that keeps
 * the wake-up times of the sleeps started on it and not yet ended, for a test to wait until a timer
 * it is about to move the Clock past is set (Effect 4's TestClock keeps its pending sleeps to itself).
 * Give `clock` to the code under test only: `TestClock.adjust` reads the TestClock from the fiber's Clock.
 */
export const recordingSleeps: Effect.Effect<RecordedSleeps> = recordingSleepsOver((base, sleep) => ({
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: () => base.unsafeCurrentTimeMillis(),
  unsafeCurrentTimeNanos: () => base.unsafeCurrentTimeNanos(),
  currentTimeMillis: Effect.suspend(() => base.currentTimeMillis),
  currentTimeNanos: Effect.suspend(() => base.currentTimeNanos),
  sleep
}))

/** A layer that replaces the default logger with `f` (`Logger.replace` on Effect 3, `Logger.layer` on 4). */
export const logTo = (f: (entry: LogEntry) => void): Layer.Layer<never> =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ annotations, cause, logLevel, message }) =>
      f({
        messages: Array.isArray(message) ? message : [message],
        level: logLevel._tag === "Warning" ? "Warn" : logLevel._tag,
        annotations: Object.fromEntries(annotations),
        cause
      })
    )
  )

/** Every series of Effect's global metric registry (`Metric.unsafeSnapshot` on 3, `Metric.snapshot` on 4). */
export const metricSeries: Effect.Effect<ReadonlyArray<MetricSeries>> = Effect.sync(() =>
  Metric.unsafeSnapshot().map((pair) => ({
    name: pair.metricKey.name,
    attributes: Object.fromEntries(pair.metricKey.tags.map((tag) => [tag.key, tag.value])),
    state: pair.metricState
  }))
)

/** One series of a metric (`Metric.tagged` per tag on Effect 3, `Metric.withAttributes` on 4). */
export const withAttributes = <Type, In, Out>(
  metric: Metric.Metric<Type, In, Out>,
  attributes: Record<string, string>
): Metric.Metric<Type, In, Out> => {
  let tagged = metric
  for (const [key, value] of Object.entries(attributes)) tagged = Metric.tagged(tagged, key, value)
  return tagged
}

/** Whether a metric's state is a histogram's (`MetricState.isHistogramState` on Effect 3). */
export const isHistogramState = (state: unknown): state is MetricState.MetricState.Histogram =>
  MetricState.isHistogramState(state)

export { type Subscription, take } from "./fixture.effect3.js"

/** Everything a subscription holds now, without waiting (Effect 4's `PubSub.takeAll` waits for one). */
export const drain = <A>(subscription: Subscription<A>): Effect.Effect<Array<A>> =>
  Effect.map(Queue.takeAll(subscription), (chunk) => Array.from(chunk))

/** How many values a subscription holds (`Queue.size` on 3, `PubSub.remaining` on 4). */
export const remaining = <A>(subscription: Subscription<A>): Effect.Effect<number> => Queue.size(subscription)

/** A stream of what a subscription receives. */
export const subscriptionStream = <A>(subscription: Subscription<A>): Stream.Stream<A> => Stream.fromQueue(subscription)

/**
 * Whether a fiber waits to take from `queue`: a negative `Queue.size` on Effect 3; Effect 4's
 * `Queue.size` never goes below 0, so its open state's takers are read.
 */
export const hasTaker = <A>(queue: Queue.Queue<A>): Effect.Effect<boolean> =>
  Effect.map(Queue.size(queue), (size) => size < 0)

/** The tests of a suite that share one layer, built once; their `it` has `it.scoped`. */
export const layer =
  <R, E>(shared: Layer.Layer<R, E>, options?: { readonly timeout?: Duration.DurationInput }) =>
  (name: string, f: (it: Vitest.MethodsNonLive<R>) => void): void =>
    it3.layer(shared, options)(name, f)

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

/** The service a key gives (`Context.Tag.Service` on Effect 3, `Context.Service.Shape` on 4). */
export type ServiceOf<K> = K extends Context.Tag<infer _Id, infer Shape> ? Shape : never

/**
 * A schedule that recurs while both do, after the longer of their delays (`Schedule.intersect` on
 * Effect 3, `Schedule.max` on 4).
 */
export const intersectSchedules = <R, R2>(
  self: Schedule.Schedule<unknown, unknown, R>,
  that: Schedule.Schedule<unknown, unknown, R2>
): Schedule.Schedule<unknown, unknown, R | R2> => Schedule.intersect(self, that)

/** Runs `self` on a TestClock of its own, in a test that otherwise runs live (`TestContext` on Effect 3). */
export const withTestClock = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provide(self, TestContext.TestContext)

/**
 * A way to read a stream a chunk at a time, for the life of the scope: each run of the pull gives the
 * next chunk's values, and fails with an `Error` once the stream has ended (`Stream.toPull` fails
 * with `None` and gives a `Chunk` on Effect 3, fails with `Cause.Done` and gives an array on 4).
 */
export const toPull = <A, E, R>(
  stream: Stream.Stream<A, E, R>
): Effect.Effect<Effect.Effect<ReadonlyArray<A>, E | Error, R>, never, R | Scope.Scope> =>
  Effect.map(Stream.toPull(stream), (pull) =>
    Effect.mapBoth(pull, {
      onFailure: Option.getOrElse((): E | Error => new Error("stream ended")),
      onSuccess: (chunk) => Chunk.toReadonlyArray(chunk)
    })
  )

/** A histogram with these bucket boundaries (`MetricBoundaries` on Effect 3, an option on 4). */
export const histogram = (
  name: string,
  boundaries: ReadonlyArray<number>
): Metric.Metric<MetricKeyType.MetricKeyType.Histogram, number, MetricState.MetricState.Histogram> =>
  Metric.histogram(name, MetricBoundaries.fromIterable(boundaries))

/**
 * A summary. `error` is Effect 3's (the error its quantiles may have); Effect 4's summaries have
 * none, and its edition ignores it.
 */
export const summary = (
  name: string,
  options: {
    readonly maxAge: Duration.DurationInput
    readonly maxSize: number
    readonly error: number
    readonly quantiles: ReadonlyArray<number>
  }
): Metric.Metric.Summary<number> => Metric.summary({ name, ...options })
/** Whether a cause holds a defect (`Cause.isDie` on Effect 3, `Cause.hasDies` on 4). */
export const hasDies = (cause: Cause.Cause<unknown>): boolean => Cause.isDie(cause)

/** Two causes that happened together (`Cause.parallel` on Effect 3, `Cause.combine` on 4). */
export const combineCauses = <E, E2>(self: Cause.Cause<E>, that: Cause.Cause<E2>): Cause.Cause<E | E2> =>
  Cause.parallel(self, that)

/** Whether a cause holds nothing (`Cause.isEmpty` on Effect 3; no reasons on 4). */
export const isEmptyCause = (cause: Cause.Cause<unknown>): boolean => Cause.isEmpty(cause)

/** The tests of a suite that share one layer, built once, with the live Clock and services (no TestClock). */
export const layerLive =
  <R, E>(shared: Layer.Layer<R, E>, options?: { readonly timeout?: Duration.DurationInput }) =>
  (name: string, f: (it: Vitest.MethodsNonLive<R, true>) => void): void =>
    layer3(shared, { ...options, excludeTestServices: true })(name, f)

/** A layer built by a scoped effect, its resources kept for the layer's life (`Layer.unwrapScoped` on 3, `Layer.unwrap` on 4). */
export const unwrapScoped = <A, E1, R1, E, R>(
  self: Effect.Effect<Layer.Layer<A, E1, R1>, E, R>
): Layer.Layer<A, E | E1, R1 | Exclude<R, Scope.Scope>> => Layer.unwrapScoped(self)

/** Fails with `onTimeout()` when `self` takes longer than `duration` (`Effect.timeoutFail` on 3, `timeoutOrElse` on 4). */
export const timeoutFail =
  <E2>(duration: Duration.DurationInput, onTimeout: () => E2) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | E2, R> =>
    Effect.timeoutFail(self, { duration, onTimeout })

/** Node's flags for a child process that runs a TypeScript fixture on this run's major: tsx; effect 3 by Node's rules. */
export const childExecArgv: ReadonlyArray<string> = ["--import", "tsx"]
