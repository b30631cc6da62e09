/**
 * The fiber that runs a call through a limiter, on Effect 4 (fiber.effect3.ts has the same names;
 * limiter.ts is their caller): the admitted path reads its Clock and watches its end without an
 * effect of its own.
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

/** Calls `f` when the fiber ends, however it ends. */
export const onEnd = (fiber: Fiber, f: () => void): void => {
  fiber.addObserver(f)
}
