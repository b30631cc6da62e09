/**
 * What a scenario needs from Effect's fibers that the majors do not share (virtual.effect3.ts has
 * the same names; `#virtual` picks one): values each fiber carries, the fiber running an effect,
 * and fibers run in a virtual world (world.ts) on its clock and its scheduler. On Effect 4 all
 * three are the context: locals are `Context.Reference`s, and the world's `Clock` and `Scheduler`
 * are references too, added to the caller's context that `Effect.runForkWith` starts fibers in.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import type * as Metric from "effect/Metric"
import * as Scheduler from "effect/Scheduler"
import type { Clockwork, Runner } from "./world.js"

/** A value each fiber carries and the fibers it forks inherit (a `Context.Reference`). @internal */
export type Local<A> = Context.Reference<A>

/** A local, one per process for `key` (a context finds references by key). @internal */
export const local = <A>(key: string, initial: A): Local<A> =>
  Context.Reference<A>(key, { defaultValue: () => initial })

/** A local and the value a fiber starts with. @internal */
export type Setting = readonly [Local<any>, unknown]

/** @internal */
export const set = <A>(local: Local<A>, value: A): Setting => [local, value]

/** The fiber running an effect, for synchronous reads. @internal */
export type Current = Fiber.Fiber<unknown, unknown>

/** Runs `f` with the fiber that runs the returned effect. @internal */
export const withCurrent = <A, E, R>(f: (fiber: Current) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber<A, E, R>(f)

/** The fiber's value of a local. @internal */
export const get = <A>(fiber: Current, local: Local<A>): A => fiber.getRef(local)

/** The fiber's Clock time in milliseconds. @internal */
export const now = (fiber: Current): number => fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()

/** A counter metric of numbers or bigints. @internal */
export type Counter = Metric.Counter<number> | Metric.Counter<bigint>

/** The fiber that asked for a `Runner`: its context, references included. @internal */
export type Caller<R> = Context.Context<R>

/** @internal */
export const caller = <R>(): Effect.Effect<Caller<R>, never, R> => Effect.context<R>()

/** A request's fiber. @internal */
export type RequestFiber = Fiber.Fiber<unknown, unknown>

/**
 * A runner for `world`, whose fibers have the caller's context and references, the world's clock,
 * and `settings` for their locals.
 *
 * @internal
 */
export const runner = <R>(caller: Caller<R>, world: Clockwork, settings: ReadonlyArray<Setting>): Runner<R> => {
  const clock: Clock.Clock = {
    ...world.effects,
    currentTimeMillisUnsafe: () => world.now,
    currentTimeNanosUnsafe: world.nanos,
    // Virtual time never goes back: the wall clock serves as the monotonic one.
    monotonicTimeNanosUnsafe: world.nanos,
    monotonicTimeNanos: world.effects.currentTimeNanos
  }
  // Each fiber asks for a dispatcher of its own; all of them feed the world's one queue.
  const dispatcher: Scheduler.SchedulerDispatcher = {
    scheduleTask: (task) => world.schedule(task),
    flush: () => world.flush()
  }
  const scheduler: Scheduler.Scheduler = {
    executionMode: "async",
    // A fiber runs until it waits: nothing else can happen at the same virtual instant anyway.
    shouldYield: () => false,
    makeDispatcher: () => dispatcher
  }
  let context: Context.Context<R> = Context.add(Context.add(caller, Clock.Clock, clock), Scheduler.Scheduler, scheduler)
  for (const [local, value] of settings) context = Context.add(context, local, value)
  return {
    fork: (effect, [local, value]) => Effect.runForkWith(Context.add(context, local, value))(effect),
    read: (counter) => Number((counter as Metric.Counter<number>).valueUnsafe(caller as Context.Context<never>).count)
  }
}

/** Interrupts a fiber without waiting for it. @internal */
export const interrupt = (fiber: RequestFiber): void => fiber.interruptUnsafe()
