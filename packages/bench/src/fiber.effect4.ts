/**
 * The fiber running a guard, on Effect 4 (fiber.effect3.ts has the same names; groups/limiter.ts
 * is their caller): the Clock looked up as @circuitry/limiter's fiber.effect4.ts looks it up, so
 * that the floor reading the Clock pays what the limiter pays for it.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as EffectFiber from "effect/Fiber"

export type Fiber = EffectFiber.Fiber<unknown, unknown>

/** Runs `f` with the fiber that runs the returned effect. */
export const withFiber = <A, E, R>(f: (fiber: Fiber) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber<A, E, R>(f)

/** The fiber's Clock (a `Context.Reference`, read from the fiber's context). */
export const clockOf = (fiber: Fiber): Clock.Clock => fiber.getRef(Clock.Clock)
