/**
 * What a scenario needs from Effect's fibers that the majors do not share (virtual.effect4.ts has
 * the same names; `#virtual` picks one): values each fiber carries, the fiber running an effect,
 * and fibers run in a virtual world (world.ts) on its clock and its scheduler. On Effect 3 these
 * are `FiberRef`s, `withFiberRuntime`, and a `Runtime` with the world's `Clock` in its default
 * services and its `Scheduler` given to `runFork`.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as FiberRefs from "effect/FiberRefs"
import { globalValue } from "effect/GlobalValue"
import type * as Metric from "effect/Metric"
import * as Runtime from "effect/Runtime"
import type * as Scheduler from "effect/Scheduler"
import type { Clockwork, Runner } from "./world.js"

/** A value each fiber carries and the fibers it forks inherit (a `FiberRef`). @internal */
export type Local<A> = FiberRef.FiberRef<A>

/** A local, one per process for `key` (modules loaded twice share it). @internal */
export const local = <A>(key: string, initial: A): Local<A> => globalValue(key, () => FiberRef.unsafeMake(initial))

/** A local and the value a fiber starts with. @internal */
export type Setting = readonly [Local<any>, unknown]

/** @internal */
export const set = <A>(local: Local<A>, value: A): Setting => [local, value]

/** The fiber running an effect, for synchronous reads. @internal */
export type Current = Fiber.RuntimeFiber<unknown, unknown>

/** Runs `f` with the fiber that runs the returned effect. @internal */
export const withCurrent = <A, E, R>(f: (fiber: Current) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime<A, E, R>((fiber) => f(fiber))

/** The fiber's value of a local. @internal */
export const get = <A>(fiber: Current, local: Local<A>): A => fiber.getFiberRef(local)

/** The fiber's Clock time in milliseconds. @internal */
export const now = (fiber: Current): number =>
  Context.get(fiber.currentDefaultServices, Clock.Clock).unsafeCurrentTimeMillis()

/** A counter metric of numbers or bigints. @internal */
export type Counter = Metric.Metric.Counter<number> | Metric.Metric.Counter<bigint>

/** The fiber that asked for a `Runner`: its context and fiber refs. @internal */
export type Caller<R> = Runtime.Runtime<R>

/** @internal */
export const caller = <R>(): Effect.Effect<Caller<R>, never, R> => Effect.runtime<R>()

/** A request's fiber. @internal */
export type RequestFiber = Fiber.RuntimeFiber<unknown, unknown>

/**
 * A runner for `world`, whose fibers have the caller's context and fiber refs, the world's clock,
 * and `settings` for their locals.
 *
 * @internal
 */
export const runner = <R>(caller: Caller<R>, world: Clockwork, settings: ReadonlyArray<Setting>): Runner<R> => {
  const clock: Clock.Clock = {
    ...world.effects,
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => world.now,
    unsafeCurrentTimeNanos: world.nanos
  }
  const scheduler: Scheduler.Scheduler = {
    scheduleTask: (task) => world.schedule(task),
    // A fiber runs until it waits: nothing else can happen at the same virtual instant anyway.
    shouldYield: () => false
  }
  const services = FiberRefs.getOrDefault(caller.fiberRefs, DefaultServices.currentServices)
  let runtime = Runtime.setFiberRef(caller, DefaultServices.currentServices, Context.add(services, Clock.Clock, clock))
  for (const [local, value] of settings) runtime = Runtime.setFiberRef(runtime, local, value)
  const fork = Runtime.runFork(runtime)
  return {
    fork: (effect, [local, value]) =>
      fork(effect, {
        scheduler,
        updateRefs: (refs, fiberId) => FiberRefs.updateAs(refs, { fiberId, fiberRef: local, value })
      }),
    read: (counter) => Number(counter.unsafeValue([]).count)
  }
}

/** Interrupts a fiber without waiting for it. @internal */
export const interrupt = (fiber: RequestFiber): void => fiber.unsafeInterruptAsFork(FiberId.none)
