/**
 * The fiber running a guard, on Effect 3 (fiber.effect4.ts has the same names; groups/limiter.ts
 * is their caller): the Clock looked up as @circuitry/limiter's fiber.effect3.ts looks it up, so
 * that the floor reading the Clock pays what the limiter pays for it.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as EffectFiber from "effect/Fiber"

export type Fiber = EffectFiber.RuntimeFiber<unknown, unknown>

/** Runs `f` with the fiber that runs the returned effect. */
export const withFiber = <A, E, R>(f: (fiber: Fiber) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime<A, E, R>(f)

// The default services rarely change between calls: remember the last lookup, as the limiter does.
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
