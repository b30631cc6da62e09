/**
 * What the breaker reads from its fiber and runs synchronously, on Effect 4: the fiber's context
 * and references (`Effect.withFiber`, `fiber.getRef`), its context to run a schedule's steps in
 * (`Effect.runSyncExitWith`), the repair marker (a `Context.Reference`), scopes, the one
 * schedule the breaker combines, the state `Ref` (read with `Ref.getUnsafe`) and the probe
 * permits (a `Semaphore`: `takeIfAvailable`, `release`). The Effect 3 file (runtime.effect3.ts)
 * has the same names; see docs/editions.md.
 */
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import type * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"

/** The fiber running an effect. @internal */
export type AnyFiber = Fiber.Fiber<unknown, unknown>

/** Runs `f` with the fiber that runs the returned effect. @internal */
export const withFiber: <A, E, R>(f: (fiber: AnyFiber) => Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> =
  Effect.withFiber

/**
 * `self`, with `onSuccess` run on its value (which it returns) and `onFailure` on its cause (which
 * it fails with): `Effect.matchCauseEffect` whose success side is synchronous. On Effect 4 this is
 * `map` over `catchCause`: `map` hands the value to the next frame directly (no `Exit` made, no
 * turn of the run loop), and a failure skips `map` as it skips `matchCauseEffect`'s success side.
 * `onFailure` never recovers (its effect never succeeds), so `onSuccess` sees `self`'s values only.
 *
 * @internal
 */
export const matchCauseSync = <A, E, R, E2, R2>(
  self: Effect.Effect<A, E, R>,
  onSuccess: (a: A) => A,
  onFailure: (cause: Cause.Cause<E>) => Effect.Effect<never, E2, R2>
): Effect.Effect<A, E2, R | R2> => Effect.map(Effect.catchCause(self, onFailure), onSuccess)

/**
 * The last fiber context the breaker read, with its Clock, span and repair mark: a `Context` is
 * immutable (providing a service makes a new one; Effect caches what it reads from a context the
 * same way), so what it held then it holds now. Calls in a loop, or in fibers sharing their
 * context, read the three from fields rather than look each up in the context on every call (a
 * miss walks the context's layers to its map). It keeps that one context alive until the next.
 */
let lastContext: Context.Context<never> | undefined
let lastClock: Clock.Clock | undefined
let lastSpan: Tracer.AnySpan | undefined
let lastRepair = false

const remember = (context: Context.Context<never>): void => {
  lastClock = Context.get(context, Clock.Clock)
  lastSpan = Context.getOrUndefined(context, Tracer.ParentSpan)
  lastRepair = Context.get(context, repairTraffic)
  lastContext = context
}

/** The fiber's Clock. @internal */
export const clockOf = (fiber: AnyFiber): Clock.Clock => {
  if (fiber.context !== lastContext) remember(fiber.context)
  return lastClock!
}

/** The fiber's Clock, for the closed path (the same: remembered for the last context). @internal */
export const cachedClockOf = clockOf

/** The fiber's context (its services and references). @internal */
export const contextOf = (fiber: AnyFiber): Context.Context<never> => fiber.context

/** The span the fiber runs in, if any: remembered for the last fiber context. @internal */
export const spanOf = (fiber: AnyFiber): Tracer.AnySpan | undefined => {
  if (fiber.context !== lastContext) remember(fiber.context)
  return lastSpan
}

/** Repair traffic's mark: a `Context.Reference`. @internal */
export const repairTraffic: Context.Reference<boolean> = Context.Reference<boolean>(
  "@circuitry/breaker/repairTraffic",
  {
    defaultValue: () => false
  }
)

/** Whether the fiber runs repair traffic. @internal */
export const isRepair = (fiber: AnyFiber): boolean => {
  if (fiber.context !== lastContext) remember(fiber.context)
  return lastRepair
}

/** `self`, run as repair traffic. @internal */
export const markRepair = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(self, repairTraffic, true)

/** What runs effects synchronously in a fiber's context (its `Context` on Effect 4). @internal */
export type Runner = Context.Context<never>

/** The runner of the current fiber. @internal */
export const runner: Effect.Effect<Runner> = Effect.context<never>()

/** The runner of `fiber`, read synchronously. @internal */
export const runnerOf = contextOf

/** Runs an effect that cannot fail synchronously. @internal */
export const runSync = <A>(runner: Runner, self: Effect.Effect<A>): A => Effect.runSyncWith(runner)(self)

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
  const run = Effect.runSyncExitWith(runner)
  const start = () => {
    const exit = run(Schedule.toStep(schedule))
    return Exit.isSuccess(exit) ? exit.value : undefined
  }
  let next = start()
  return {
    step: (now) => {
      if (next === undefined) return undefined
      const exit = run(next(now, undefined))
      if (Exit.isFailure(exit)) return undefined
      return Math.max(0, Duration.toMillis(exit.value[1]))
    },
    reset: () => {
      next = start()
    }
  }
}

/** Whether a value is a schedule. @internal */
export const isSchedule = (u: unknown): u is Schedule.Schedule<unknown, unknown> => Schedule.isSchedule(u)

/** The shorter delay of two schedules, recurring while either does (`Schedule.min`). @internal */
export const shorterOf = <A, B>(a: Schedule.Schedule<A>, b: Schedule.Schedule<B>): Schedule.Schedule<unknown> =>
  Schedule.min([a, b])

/** Whether a value is a stream. @internal */
export const isStream = (u: unknown): u is Stream.Stream<unknown, unknown> => Stream.isStream(u)

/** A reference with a default value (a `Context.Reference` on Effect 4; `Self` is Effect 3's). @internal */
export type Reference<Self, Shape> = Context.Reference<Shape> & { readonly [ReferenceSelf]?: Self }
declare const ReferenceSelf: unique symbol

/** A reference with a default value. @internal */
export const reference = <Self, Shape>(id: string, defaultValue: () => Shape): Reference<Self, Shape> =>
  Context.Reference<Shape>(id, { defaultValue })

/** The value of a reference in the fiber. @internal */
export const refOf = <Self, Shape>(fiber: AnyFiber, ref: Reference<Self, Shape>): Shape => fiber.getRef(ref)

/** The live Clock (`Date.now`), the one a fiber has when no other is provided. @internal */
export const liveClock: Clock.Clock = Context.get(Context.empty(), Clock.Clock)

/** The values of `self`, run at once and then every `millis` (`Stream.fromEffectSchedule`). @internal */
export const repeatEvery = <A, E, R>(self: Effect.Effect<A, E, R>, millis: number): Stream.Stream<A, E, R> =>
  Stream.fromEffectSchedule(self, Schedule.spaced(millis))

/**
 * The `layer` overload for a key of a breaker (or registry) typed with `BreakerTimeoutError`
 * (`Timed`). Effect 4's `Context.Key` is covariant in its service, so a key of a timeout-free
 * breaker would pass as one of a timed breaker (a breaker never failing with the error is one that
 * may): the key's service `S` is taken as it is, and options are refused unless `S` has room for
 * the error, as Effect 3's invariant `Context.Tag` refuses the key.
 *
 * @internal
 */
export interface TimedLayer<Timed, Options, E> {
  <I, S extends Timed>(
    tag: Context.Key<I, S>,
    options?: Options & ([Timed] extends [S] ? unknown : never)
  ): Layer.Layer<I, E>
}

/** Where the breaker keeps its state: an Effect `Ref`, read and written synchronously. @internal */
export type StateRef<A> = Ref.Ref<A>

/** A new state `Ref`. @internal */
export const stateRef = <A>(value: A): StateRef<A> => Ref.makeUnsafe(value)

/** The state, read synchronously (`Ref.getUnsafe`). @internal */
export const readState: <A>(ref: StateRef<A>) => A = Ref.getUnsafe

/** Replaces the state synchronously (the `Ref`'s own `MutableRef`: Effect 4 has no `Ref.setUnsafe`). @internal */
export const writeState = <A>(ref: StateRef<A>, value: A): void => {
  ref.ref.current = value
}

/** Half-open probe permits: an Effect `Semaphore`, taken without waiting. @internal */
export type Permits = Semaphore.Semaphore

/** `n` permits. @internal */
export const permits = (n: number): Permits => Semaphore.makeUnsafe(n)

/** Takes one permit if one is free (`takeIfAvailable`); never waits. @internal */
export const takePermit = (permits: Permits): Effect.Effect<boolean> => permits.takeIfAvailable(1)

/** Gives one permit back (`release`). @internal */
export const releasePermit = (permits: Permits): Effect.Effect<void> => Effect.asVoid(permits.release(1))

/**
 * Sets the number of permits (`resize`), synchronously: permits taken stay taken. No fiber ever
 * waits on these permits (they are only taken if free), so the resize wakes no one.
 *
 * @internal
 */
export const resizePermits = (permits: Permits, n: number): void => Effect.runSync(permits.resize(n))
