/**
 * The fiber that runs a call through a limiter, on Effect 3 (fiber.effect4.ts has the same names;
 * limiter.ts is their caller): the admitted path reads its Clock and watches its end without an
 * effect of its own.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as EffectFiber from "effect/Fiber"

export type Fiber = EffectFiber.RuntimeFiber<unknown, unknown>

/** Runs `f` with the fiber that runs the returned effect. */
export const withFiber = <A, E, R>(f: (fiber: Fiber) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime<A, E, R>(f)

// The default services rarely change between calls (one per runtime or TestContext): remember the last lookup.
let lastServices: Context.Context<never> | undefined
let lastClock: Clock.Clock | undefined

/** The fiber's Clock. */
export const clockOf = (fiber: Fiber): Clock.Clock => {
  const services = fiber.currentDefaultServices
  if (services === lastServices) return lastClock!
  lastClock = Context.get(services, Clock.Clock)
  lastServices = services
  return lastClock
}

/** Calls `f` when the fiber ends, however it ends. */
export const onEnd = (fiber: Fiber, f: () => void): void => fiber.addObserver(f)
