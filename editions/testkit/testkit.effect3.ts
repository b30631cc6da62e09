/**
 * The test side of the edition layer on Effect 3 (testkit.effect4.ts has the same names): what a
 * test needs that differs between the majors. See docs/editions.md.
 */
import { it as it3 } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as TestContext from "effect/TestContext"

export { assert, describe } from "@effect/vitest"
export * as TestClock from "effect/TestClock"

/** `it` of @effect/vitest; `it.scoped` gives a test a Scope (Effect 4's `it.effect` always does). */
export const it = it3

/** Runs an effect outside `it` (in a property) with a fresh TestClock and a Scope. */
export const runTest = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>): Promise<A> =>
  Effect.runPromise(Effect.provide(Effect.scoped(effect), TestContext.TestContext))

/** The count of one series of a counter (tags on Effect 3, attributes on 4). */
export const counterCount = (
  counter: Metric.Metric.Counter<number>,
  attributes: Record<string, string>
): Effect.Effect<number> => {
  let tagged = counter
  for (const [key, value] of Object.entries(attributes)) tagged = Metric.tagged(tagged, key, value)
  return Effect.map(Metric.value(tagged), (state) => state.count)
}

/** The first defect in a cause, if any. */
export const defectOf = (cause: Cause.Cause<unknown>): unknown => Option.getOrUndefined(Cause.dieOption(cause))

/** Yields to the other fibers once. */
export const yieldNow: Effect.Effect<void> = Effect.yieldNow()

/** A fiber's exit if it is done, without waiting (`unsafePoll` on Effect 3, `pollUnsafe` on 4). */
export const pollUnsafe = <A, E>(fiber: Fiber.RuntimeFiber<A, E>): Exit.Exit<A, E> | undefined =>
  fiber.unsafePoll() ?? undefined
