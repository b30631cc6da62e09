/**
 * The Effect 3 edition of the edition layer: every name of `Edition` over effect 3.22. The Effect 4
 * edition (edition.effect4.ts) has the same names; a change here is made there too, and the
 * edition test (test/Edition.test.ts) runs on both. See docs/editions.md.
 */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as EffectFiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import type * as Metric from "effect/Metric"
import type * as Option from "effect/Option"
import type * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import * as RuntimeFlags from "effect/RuntimeFlags"
import type * as Schedule from "effect/Schedule"
import * as ScheduleDecision from "effect/ScheduleDecision"
import * as Intervals from "effect/ScheduleIntervals"
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import type * as Scope from "effect/Scope"
import * as MetricSeries from "./metricSeries.effect3.js"
/**
 * The Effect major this build of circuitry is for.
 *
 * @since 0.2.0
 * @category edition
 */
export const major = 3 as const

/**
 * What a duration option accepts (`Duration.DurationInput` on Effect 3, `Duration.Input` on 4).
 *
 * @since 0.2.0
 * @category durations
 */
export type DurationInput = Duration.DurationInput

/**
 * A duration from any value: none unless it is a `DurationInput`.
 *
 * @since 0.2.0
 * @category durations
 */
export const durationFromUnknown = (u: unknown): Option.Option<Duration.Duration> => Duration.decodeUnknown(u)

/**
 * A service key (`Context.Tag` on Effect 3, `Context.Key` on 4).
 *
 * @since 0.2.0
 * @category services
 */
export type Key<Id, Shape> = Context.Tag<Id, Shape>

/**
 * A class to extend as a service key: `class Name extends KeyClass<Name, string>()("Name") {}`
 * (`Context.Tag(id)<Self, Shape>()` on Effect 3, `Context.Service<Self, Shape>()(id)` on 4).
 *
 * @since 0.2.0
 * @category services
 */
export const KeyClass =
  <Self, Shape>() =>
  <const Id extends string>(id: Id) =>
    Context.Tag(id)<Self, Shape>()

/**
 * Whether a value is a service key.
 *
 * @since 0.2.0
 * @category services
 */
export const isKey = (u: unknown): u is Key<unknown, unknown> => Context.isTag(u)

/**
 * The service of a key, as an effect (a `Context.Tag` is one on Effect 3; `Effect.service` on 4).
 *
 * @since 0.2.0
 * @category services
 */
export const service = <Id, Shape>(key: Key<Id, Shape>): Effect.Effect<Shape, never, Id> => key

/**
 * A layer of `key` built by a scoped effect (its scope is the layer's).
 *
 * @since 0.2.0
 * @category services
 */
export const layerScoped = <Id, Shape, E, R>(
  key: Key<Id, Shape>,
  make: Effect.Effect<Shape, E, R>
): Layer.Layer<Id, E, Exclude<R, Scope.Scope>> => Layer.scoped(key, make)

/**
 * Recovers from every failure (`Effect.catchAll` on Effect 3, `Effect.catch` on 4); defects and
 * interruptions pass.
 *
 * @since 0.2.0
 * @category effects
 */
export const catchFailure: <A, E, R, A2, E2, R2>(
  self: Effect.Effect<A, E, R>,
  f: (error: E) => Effect.Effect<A2, E2, R2>
) => Effect.Effect<A | A2, E2, R | R2> = Effect.catchAll

/**
 * An effect resumed by a callback (`Effect.async` on Effect 3, `Effect.callback` on 4); the
 * effect `register` returns, if any, runs when the waiting fiber is interrupted.
 *
 * @since 0.2.0
 * @category effects
 */
export const callback = <A, E>(
  register: (resume: (result: Effect.Effect<A, E>) => void) => Effect.Effect<void> | void
): Effect.Effect<A, E> => Effect.async<A, E>((resume) => register(resume))

/**
 * The current time of a `Clock` in milliseconds, read synchronously.
 *
 * @since 0.2.0
 * @category time
 */
export const nowUnsafe = (clock: Clock.Clock): number => clock.unsafeCurrentTimeMillis()

/**
 * A fiber as forked by `Caller.fork`.
 *
 * @since 0.2.0
 * @category fibers
 */
export type Fiber<A, E> = EffectFiber.RuntimeFiber<A, E>

/**
 * Forks an effect as a child of the current fiber (`Effect.fork` on Effect 3, `Effect.forkChild`
 * on 4).
 *
 * @since 0.2.0
 * @category fibers
 */
export const forkChild: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<Fiber<A, E>, never, R> = Effect.fork

/**
 * The fiber running an effect, as synchronous code started by it needs it: its `Clock`, and a way
 * to start effects in fibers of their own with its context.
 *
 * @since 0.2.0
 * @category fibers
 */
export interface Caller<R> {
  readonly clock: Clock.Clock
  /**
   * Starts `self` in a new fiber at once (it runs on the current stack until its first
   * asynchronous step), with the caller's context and fiber refs, interruptible even when the
   * caller is not.
   */
  readonly fork: <A, E>(self: Effect.Effect<A, E, R>) => Fiber<A, E>
}

class Caller3<R> implements Caller<R> {
  readonly clock: Clock.Clock
  private runtime: Runtime.Runtime<R> | undefined = undefined
  constructor(
    private readonly fiber: EffectFiber.RuntimeFiber<unknown, unknown>,
    private readonly flags: RuntimeFlags.RuntimeFlags
  ) {
    this.clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
  }
  fork<A, E>(self: Effect.Effect<A, E, R>): Fiber<A, E> {
    // Effect 3 has no public way to fork into another fiber's context: a runtime is built from it.
    this.runtime ??= Runtime.make({
      context: this.fiber.currentContext as Context.Context<R>,
      fiberRefs: this.fiber.getFiberRefs(),
      runtimeFlags: RuntimeFlags.enable(this.flags, RuntimeFlags.Interruption)
    })
    return Runtime.runFork(this.runtime)(self)
  }
}

/**
 * Runs `f` with the fiber that runs the returned effect.
 *
 * @since 0.2.0
 * @category fibers
 */
export const withCaller = <A, E, R>(f: (caller: Caller<R>) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime<A, E, R>((fiber, status) => f(new Caller3<R>(fiber, status.runtimeFlags)))

/**
 * Whether a cause holds interruptions only.
 *
 * @since 0.2.0
 * @category causes
 */
export const hasInterruptsOnly = (cause: Cause.Cause<unknown>): boolean => Cause.isInterruptedOnly(cause)

/**
 * Whether a cause holds an interruption.
 *
 * @since 0.2.0
 * @category causes
 */
export const hasInterrupts = (cause: Cause.Cause<unknown>): boolean => Cause.isInterrupted(cause)

/**
 * The first failure (an `E`, not a defect) in a cause.
 *
 * @since 0.2.0
 * @category causes
 */
export const findError = <E>(cause: Cause.Cause<E>): Option.Option<E> => Cause.failureOption(cause)

/**
 * Offers to a queue synchronously; false when it took nothing.
 *
 * @since 0.2.0
 * @category queues
 */
export const offerUnsafe = <A>(queue: Queue.Enqueue<A>, value: A): boolean => queue.unsafeOffer(value)

/**
 * A counter metric (numbers).
 *
 * @since 0.2.0
 * @category metrics
 */
export type Counter = Metric.Metric.Counter<number>

/**
 * Adds to one series of a counter (the counter with these attributes, tags on Effect 3), from
 * synchronous code; the series stays in the registry (for series of fixed labels: a series
 * labelled by an owner's name belongs to a `MetricSeries` owner). Make it once per series.
 *
 * @since 0.2.0
 * @category metrics
 */
export const counterSeries: (counter: Counter, attributes: Record<string, string>) => (by: number) => void =
  MetricSeries.counterSeries

/**
 * Steps a schedule as `Effect.retry` does, one input after another: the delay before the next
 * recurrence in milliseconds, or undefined when the schedule is done. A stepper holds the
 * schedule's state: make one per run.
 *
 * @since 0.2.0
 * @category schedules
 */
export const stepper = <Out, In, R>(
  schedule: Schedule.Schedule<Out, In, R>
): Effect.Effect<(now: number, input: In) => Effect.Effect<number | undefined, never, R>> =>
  Effect.sync(() => {
    let state: unknown = schedule.initial
    return (now, input) =>
      Effect.map(schedule.step(now, input, state), ([next, , decision]) => {
        state = next
        return ScheduleDecision.isDone(decision) ? undefined : Math.max(0, Intervals.start(decision.intervals) - now)
      })
  })

/**
 * Yields to the other fibers once (`Effect.yieldNow()` on Effect 3, `Effect.yieldNow` on 4).
 *
 * @since 0.2.0
 * @category effects
 */
export const yieldNow: Effect.Effect<void> = Effect.yieldNow()

/**
 * A gauge metric (numbers).
 *
 * @since 0.2.0
 * @category metrics
 */
export type Gauge = Metric.Metric.Gauge<number>

/**
 * A histogram metric (numbers).
 *
 * @since 0.2.0
 * @category metrics
 */
export type Histogram = Metric.Metric.Histogram<number>

/**
 * A service key made from its id alone, for a service that is its own identifier
 * (`Context.GenericTag` on Effect 3, `Context.Service` on 4).
 *
 * @since 0.2.0
 * @category services
 */
export const key = <Id, Shape = Id>(id: string): Key<Id, Shape> => Context.GenericTag<Id, Shape>(id)

/**
 * Publishes to a pubsub synchronously; false when it took nothing (`unsafeOffer` on Effect 3,
 * `PubSub.publishUnsafe` on 4).
 *
 * @since 0.2.0
 * @category queues
 */
export const publishUnsafe = <A>(pubsub: PubSub.PubSub<A>, value: A): boolean => pubsub.unsafeOffer(value)

/**
 * A schema of one of the given literals (`Schema.Literal(...values)` on Effect 3,
 * `Schema.Literals(values)` on 4).
 *
 * @since 0.2.0
 * @category schemas
 */
export const literals = <const L extends readonly [SchemaAST.LiteralValue, ...Array<SchemaAST.LiteralValue>]>(
  values: L
): Schema.Literal<[...L]> => Schema.Literal(...values)

/**
 * The failures (the `E`s, not the defects) in a cause, in order.
 *
 * @since 0.2.0
 * @category causes
 */
export const failures = <E>(cause: Cause.Cause<E>): ReadonlyArray<E> => Chunk.toReadonlyArray(Cause.failures(cause))

/**
 * The defects in a cause, in order.
 *
 * @since 0.2.0
 * @category causes
 */
export const defects = (cause: Cause.Cause<unknown>): ReadonlyArray<unknown> =>
  Chunk.toReadonlyArray(Cause.defects(cause))

/**
 * Whether a value is the error `Effect.timeout` fails with (`Cause.TimeoutException` on Effect 3,
 * `Cause.TimeoutError` on 4).
 *
 * @since 0.2.0
 * @category causes
 */
export const isTimeoutError = (u: unknown): boolean => Cause.isTimeoutException(u)

// Results (Either on Effect 3, Result on 4), and the effects, fibers, queues, deferreds and
// semaphores the breaker's port added: in files of their own, to keep this one short.
export * from "./edition.results.effect3.js"
export * from "./edition.fibers.effect3.js"

/**
 * A fiber's exit if it has ended, read synchronously; `undefined` while it runs
 * (`fiber.unsafePoll()`, null while running, on Effect 3; `fiber.pollUnsafe()` on 4).
 *
 * @since 0.2.0
 * @category fibers
 */
export const pollUnsafe = <A, E>(fiber: Fiber<A, E>): import("effect/Exit").Exit<A, E> | undefined =>
  fiber.unsafePoll() ?? undefined

/**
 * A layer of several services, their context built by a scoped effect (its scope is the layer's):
 * `Layer.scopedContext` on Effect 3, `Layer.effectContext` on 4.
 *
 * @since 0.2.0
 * @category services
 */
export const layerScopedContext = <A, E, R>(
  make: Effect.Effect<Context.Context<A>, E, R>
): Layer.Layer<A, E, Exclude<R, Scope.Scope>> => Layer.scopedContext(make)

/**
 * A defect with a message (`Effect.dieMessage`, a `RuntimeException`, on Effect 3; an `Error` on
 * 4, which has no `dieMessage`).
 *
 * @since 0.2.0
 * @category effects
 */
export const dieMessage = (message: string): Effect.Effect<never> => Effect.dieMessage(message)

/**
 * A schema that also checks `predicate`, failing with `message` (`Schema.filter` with an
 * overriding message on Effect 3; `check` with `Schema.makeFilter` on 4).
 *
 * @since 0.2.0
 * @category schemas
 */
export const refine = <A, I>(
  schema: Schema.Schema<A, I>,
  predicate: (a: A) => boolean,
  message: string
): Schema.Schema<A, I> => schema.pipe(Schema.filter(predicate, { message: () => ({ message, override: true }) }))
