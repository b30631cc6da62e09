/**
 * The test side of the edition layer on Effect 4 (testkit.effect3.ts has the same names): what a
 * test needs that differs between the majors. See docs/editions.md.
 */
import { it as it4, type Vitest } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Metric from "effect/Metric"
import * as Scheduler from "effect/Scheduler"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Pull from "effect/Pull"
import * as Queue from "effect/Queue"
import * as References from "effect/References"
import * as Result_ from "effect/Result"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import type { Subscription } from "./fixture.effect4.js"
import { type LogEntry, type MetricSeries, type RecordedSleeps, recordingSleepsOver } from "./shared.js"

export { assert, describe } from "@effect/vitest"
export type { LogEntry, MetricSeries, RecordedSleeps }
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

/**
 * A Clock on the fiber's own (the TestClock in a test: `TestClock.adjust` still drives it) that keeps
 * the wake-up times of the sleeps started on it and not yet ended, for a test to wait until a timer
 * it is about to move the Clock past is set (Effect 4's TestClock keeps its pending sleeps to itself).
 * Give `clock` to the code under test only: `TestClock.adjust` reads the TestClock from the fiber's Clock.
 */
export const recordingSleeps: Effect.Effect<RecordedSleeps> = recordingSleepsOver((base, sleep) => ({
  currentTimeMillisUnsafe: () => base.currentTimeMillisUnsafe(),
  currentTimeNanosUnsafe: () => base.currentTimeNanosUnsafe(),
  currentTimeMillis: Effect.suspend(() => base.currentTimeMillis),
  currentTimeNanos: Effect.suspend(() => base.currentTimeNanos),
  monotonicTimeNanosUnsafe: () => base.monotonicTimeNanosUnsafe(),
  monotonicTimeNanos: Effect.suspend(() => base.monotonicTimeNanos),
  sleep
}))

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

export { type Subscription, take } from "./fixture.effect4.js"

/** Everything a subscription holds now, without waiting (Effect 4's `PubSub.takeAll` waits for one). */
export const drain = <A>(subscription: Subscription<A>): Effect.Effect<Array<A>> =>
  Effect.map(PubSub.takeUpTo(subscription, Number.POSITIVE_INFINITY), (values) => Array.from(values))

/** How many values a subscription holds (`Queue.size` on 3, `PubSub.remaining` on 4). */
export const remaining = <A>(subscription: Subscription<A>): Effect.Effect<number> => PubSub.remaining(subscription)

/** A stream of what a subscription receives. */
export const subscriptionStream = <A>(subscription: Subscription<A>): Stream.Stream<A> =>
  Stream.fromSubscription(subscription)

/**
 * Whether a fiber waits to take from `queue`: a negative `Queue.size` on Effect 3; Effect 4's
 * `Queue.size` never goes below 0, so its open state's takers are read. An offer on Effect 4 leaves
 * the takers registered until the scheduler releases one (a turn later), so a waiting taker counts
 * only once the queue is empty: it took every value.
 */
export const hasTaker = <A>(queue: Queue.Queue<A>): Effect.Effect<boolean> =>
  Effect.sync(() => queue.state._tag === "Open" && queue.state.takers.size > 0 && Queue.sizeUnsafe(queue) === 0)

/** The tests of a suite that share one layer, built once; their `it` has `it.scoped`. */
export const layer =
  <R, E>(shared: Layer.Layer<R, E>, options?: { readonly timeout?: Duration.Input }) =>
  (
    name: string,
    f: (it: Vitest.MethodsNonLive<R> & { readonly scoped: Vitest.Tester<R | Scope.Scope> }) => void
  ): void =>
    it4.layer(shared, options)(name, (it) => f(Object.assign(it, { scoped: it.effect })))

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

/** Runs `self` on a TestClock of its own, in a test that otherwise runs live (`TestContext` on Effect 3). */
export const withTestClock = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provide(self, TestClock.layer())

/**
 * A way to read a stream a chunk at a time, for the life of the scope: each run of the pull gives the
 * next chunk's values, and fails with an `Error` once the stream has ended (`Stream.toPull` fails
 * with `None` and gives a `Chunk` on Effect 3, fails with `Cause.Done` and gives an array on 4).
 */
export const toPull = <A, E, R>(
  stream: Stream.Stream<A, E, R>
): Effect.Effect<Effect.Effect<ReadonlyArray<A>, E | Error, R>, never, R | Scope.Scope> =>
  Effect.map(Stream.toPull(stream), (pull) => Pull.catchDone(pull, () => Effect.fail(new Error("stream ended"))))

/** A histogram with these bucket boundaries (`MetricBoundaries` on Effect 3, an option on 4). */
export const histogram = (name: string, boundaries: ReadonlyArray<number>): Metric.Histogram<number> =>
  Metric.histogram(name, { boundaries })

/**
 * A summary. `error` is Effect 3's (the error its quantiles may have); Effect 4's summaries have
 * none, and its edition ignores it.
 */
export const summary = (
  name: string,
  options: {
    readonly maxAge: Duration.Input
    readonly maxSize: number
    readonly error: number
    readonly quantiles: ReadonlyArray<number>
  }
): Metric.Summary<number> =>
  Metric.summary(name, { maxAge: options.maxAge, maxSize: options.maxSize, quantiles: options.quantiles })
/** Whether a cause holds a defect (`Cause.isDie` on Effect 3, `Cause.hasDies` on 4). */
export const hasDies = (cause: Cause.Cause<unknown>): boolean => Cause.hasDies(cause)

/** Two causes that happened together (`Cause.parallel` on Effect 3, `Cause.combine` on 4). */
export const combineCauses = <E, E2>(self: Cause.Cause<E>, that: Cause.Cause<E2>): Cause.Cause<E | E2> =>
  Cause.combine(self, that)

/** Whether a cause holds nothing (`Cause.isEmpty` on Effect 3; no reasons on 4). */
export const isEmptyCause = (cause: Cause.Cause<unknown>): boolean => cause.reasons.length === 0

/** The tests of a suite that share one layer, built once, with the live Clock and services (no TestClock). */
export const layerLive =
  <R, E>(shared: Layer.Layer<R, E>, options?: { readonly timeout?: Duration.Input }) =>
  (
    name: string,
    f: (it: Vitest.MethodsNonLive<R> & { readonly scoped: Vitest.Tester<R | Scope.Scope> }) => void
  ): void =>
    it4.layer(shared, { ...options, excludeTestServices: true })(name, (it) =>
      f(Object.assign(it, { scoped: it.effect }))
    )

/** A layer built by a scoped effect, its resources kept for the layer's life (`Layer.unwrapScoped` on 3, `Layer.unwrap` on 4). */
export const unwrapScoped = <A, E1, R1, E, R>(
  self: Effect.Effect<Layer.Layer<A, E1, R1>, E, R>
): Layer.Layer<A, E | E1, R1 | Exclude<R, Scope.Scope>> => Layer.unwrap(self)

/** Fails with `onTimeout()` when `self` takes longer than `duration` (`Effect.timeoutFail` on 3, `timeoutOrElse` on 4). */
export const timeoutFail =
  <E2>(duration: Duration.Input, onTimeout: () => E2) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | E2, R> =>
    Effect.timeoutOrElse(self, { duration, orElse: () => Effect.fail(onTimeout()) })

/**
 * Node's flags for a child process that runs a TypeScript fixture on this run's major: the Effect 4
 * edition files (the condition) and effect 4 itself (a resolve hook: Node's rules find effect 3), then tsx.
 */
export const childExecArgv: ReadonlyArray<string> = [
  "--conditions=@circuitry/effect4",
  "--import",
  new URL("./child.effect4.mjs", import.meta.url).href,
  "--import",
  "tsx"
]
