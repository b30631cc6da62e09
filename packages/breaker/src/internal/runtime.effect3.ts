/**
 * What the breaker reads from its fiber and runs synchronously, on Effect 3: the fiber's runtime
 * (`withFiberRuntime`, `currentDefaultServices`, `getFiberRef`, `currentSpan`), a `Runtime` to run
 * a schedule's steps in, the repair marker (a `FiberRef`), scopes, the one schedule the
 * breaker combines, the state holder and the probe permits. The Effect 4 file
 * (runtime.effect4.ts) has the same names; see docs/editions.md.
 */
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import type * as Layer from "effect/Layer"
import * as MutableRef from "effect/MutableRef"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import * as ScheduleDecision from "effect/ScheduleDecision"
import * as Intervals from "effect/ScheduleIntervals"
import * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"

/** The fiber running an effect. @internal */
export type AnyFiber = Fiber.RuntimeFiber<unknown, unknown>

/** Runs `f` with the fiber that runs the returned effect. @internal */
export const withFiber: <A, E, R>(f: (fiber: AnyFiber) => Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> =
  Effect.withFiberRuntime

/**
 * `self`, with `onSuccess` run on its value (which it returns) and `onFailure` on its cause (which
 * it fails with): `Effect.matchCauseEffect` whose success side is synchronous (runtime.effect4.ts
 * has why it is a function of its own).
 *
 * @internal
 */
export const matchCauseSync = <A, E, R, E2, R2>(
  self: Effect.Effect<A, E, R>,
  onSuccess: (a: A) => A,
  onFailure: (cause: Cause.Cause<E>) => Effect.Effect<never, E2, R2>
): Effect.Effect<A, E2, R | R2> =>
  Effect.matchCauseEffect(self, { onSuccess: (a) => Effect.succeed(onSuccess(a)), onFailure })

const ClockTag = Clock.Clock

/** The fiber's Clock. @internal */
export const clockOf = (fiber: AnyFiber): Clock.Clock => Context.get(fiber.currentDefaultServices, ClockTag)

/** The clock of the last fiber seen: fibers of one runtime share their default services. */
let lastServices: Context.Context<never> | undefined
let lastClock: Clock.Clock | undefined

/** The fiber's Clock, for the closed path: remembered for the last fiber's services. @internal */
export const cachedClockOf = (fiber: AnyFiber): Clock.Clock => {
  const services = fiber.currentDefaultServices
  if (services === lastServices) return lastClock!
  lastClock = Context.get(services, ClockTag)
  lastServices = services
  return lastClock
}

/** The fiber's context (its services). @internal */
export const contextOf = (fiber: AnyFiber): Context.Context<never> => fiber.currentContext

/** The span the fiber runs in, if any. @internal */
export const spanOf = (fiber: AnyFiber): Tracer.AnySpan | undefined => fiber.currentSpan

/** Repair traffic's mark: a `FiberRef`. @internal */
export const repairTraffic: FiberRef.FiberRef<boolean> = FiberRef.unsafeMake(false)

/** Whether the fiber runs repair traffic. @internal */
export const isRepair = (fiber: AnyFiber): boolean => fiber.getFiberRef(repairTraffic)

/** `self`, run as repair traffic. @internal */
export const markRepair = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(self, repairTraffic, true)

/** What runs effects synchronously in a fiber's context (a `Runtime` on Effect 3). @internal */
export type Runner = Runtime.Runtime<never>

/** The runner of the current fiber. @internal */
export const runner: Effect.Effect<Runner> = Effect.runtime<never>()

/**
 * The runner of `fiber`, read synchronously: its context and fiber refs, with the default runtime
 * flags (what it runs, a schedule's steps, is synchronous and reads none of them).
 *
 * @internal
 */
export const runnerOf = (fiber: AnyFiber): Runner =>
  Runtime.make({
    context: fiber.currentContext,
    fiberRefs: fiber.getFiberRefs(),
    runtimeFlags: Runtime.defaultRuntime.runtimeFlags
  })

/** Runs an effect that cannot fail synchronously. @internal */
export const runSync = <A>(runner: Runner, self: Effect.Effect<A>): A => Runtime.runSync(runner)(self)

/**
 * Steps a schedule synchronously (with `runner`'s Clock and Random, so `TestClock` applies): each
 * step gives the delay in milliseconds, or undefined when the schedule is done or failed.
 * `reset` starts it again.
 *
 * @internal
 */
export const syncSteps = (
  schedule: Schedule.Schedule<unknown, unknown>,
  runner: Runner
): { readonly step: (now: number) => number | undefined; readonly reset: () => void } => {
  const runStep = Runtime.runSyncExit(runner)
  let state: unknown = schedule.initial
  return {
    step: (now) => {
      const exit = runStep(schedule.step(now, undefined, state))
      if (Exit.isFailure(exit)) return undefined
      const [next, , decision] = exit.value
      if (ScheduleDecision.isDone(decision)) return undefined
      state = next
      return Math.max(0, Intervals.start(decision.intervals) - now)
    },
    reset: () => {
      state = schedule.initial
    }
  }
}

/** Whether a value is a schedule. @internal */
export const isSchedule = (u: unknown): u is Schedule.Schedule<unknown, unknown> => Schedule.isSchedule(u)

/** The shorter delay of two schedules, recurring while either does (`Schedule.union`). @internal */
export const shorterOf = <A, B>(a: Schedule.Schedule<A>, b: Schedule.Schedule<B>): Schedule.Schedule<unknown> =>
  Schedule.union(a, b)

/** Whether a value is a stream. @internal */
export const isStream = (u: unknown): u is Stream.Stream<unknown, unknown> =>
  typeof u === "object" && u !== null && Stream.StreamTypeId in u

/** A reference with a default value (a `Context.Reference` class on Effect 3). @internal */
export type Reference<Self, Shape> = Context.Reference<Self, Shape>

/** A reference with a default value. @internal */
export const reference = <Self, Shape>(id: string, defaultValue: () => Shape): Reference<Self, Shape> =>
  Context.Reference<Self>()(id, { defaultValue })

/** The value of a reference in the fiber. @internal */
export const refOf = <Self, Shape>(fiber: AnyFiber, ref: Reference<Self, Shape>): Shape =>
  Context.get(fiber.currentContext, ref)

/** The live Clock (`Date.now`), the one a fiber has when no other is provided. @internal */
export const liveClock: Clock.Clock = Context.get(DefaultServices.liveServices, Clock.Clock)

/** The values of `self`, run at once and then every `millis` (`Stream.repeatEffectWithSchedule`). @internal */
export const repeatEvery = <A, E, R>(self: Effect.Effect<A, E, R>, millis: number): Stream.Stream<A, E, R> =>
  Stream.repeatEffectWithSchedule(self, Schedule.spaced(millis))

/**
 * The `layer` overload for a key of a breaker (or registry) typed with `BreakerTimeoutError`
 * (`Timed`). On Effect 3 a `Context.Tag` is invariant in its service, so a key of a timeout-free
 * breaker is refused here by its type alone.
 *
 * @internal
 */
export interface TimedLayer<Timed, Options, E> {
  <I>(tag: Context.Tag<I, Timed>, options?: Options): Layer.Layer<I, E>
}

/**
 * Where the breaker keeps its state: a `MutableRef`. Effect 3's `Ref` has no synchronous read
 * (`Ref.get` is an effect: a step more on every closed call, measured in docs/editions.md), so on
 * 3 the state is the plain holder a `Ref` wraps. @internal
 */
export type StateRef<A> = MutableRef.MutableRef<A>

/** A new state holder. @internal */
export const stateRef = <A>(value: A): StateRef<A> => MutableRef.make(value)

/** The state, read synchronously. @internal */
export const readState = <A>(ref: StateRef<A>): A => ref.current

/** Replaces the state synchronously. @internal */
export const writeState = <A>(ref: StateRef<A>, value: A): void => {
  ref.current = value
}

/**
 * Half-open probe permits: a count. Effect 3's `Semaphore` has no `takeIfAvailable` and no read
 * of its free permits, and a probe's permit goes back when the probe times out, before its
 * `withPermitsIfAvailable` region would end (see docs/editions.md). @internal
 */
export interface Permits {
  permits: number
  taken: number
}

/** `n` permits. @internal */
export const permits = (n: number): Permits => ({ permits: n, taken: 0 })

/** Takes one permit if one is free; never waits. @internal */
export const takePermit = (permits: Permits): Effect.Effect<boolean> =>
  Effect.sync(() => permits.taken < permits.permits && ++permits.taken > 0)

/** Gives one permit back. @internal */
export const releasePermit = (permits: Permits): Effect.Effect<void> =>
  Effect.sync(() => {
    permits.taken--
  })

/** Sets the number of permits: permits taken stay taken. @internal */
export const resizePermits = (permits: Permits, n: number): void => {
  permits.permits = n
}
