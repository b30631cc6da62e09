/**
 * The test side of the edition layer on Effect 4 (testkit.effect3.ts has the same names): what a
 * test needs that differs between the majors. See docs/editions.md.
 */
import { it as it4 } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as Metric from "effect/Metric"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as TestClock from "effect/testing/TestClock"

export { assert, describe } from "@effect/vitest"
export * as TestClock from "effect/testing/TestClock"

/** `it` of @effect/vitest; `it.scoped` gives a test a Scope (Effect 4's `it.effect` always does). */
export const it = Object.assign(it4, { scoped: it4.effect })

/** Runs an effect outside `it` (in a property) with a fresh TestClock and a Scope. */
export const runTest = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>): Promise<A> =>
  Effect.runPromise(Effect.provide(Effect.scoped(effect), TestClock.layer()))

/** The count of one series of a counter (tags on Effect 3, attributes on 4). */
export const counterCount = (
  counter: Metric.Counter<number>,
  attributes: Record<string, string>
): Effect.Effect<number> => Effect.map(Metric.value(Metric.withAttributes(counter, attributes)), (state) => state.count)

/** The first defect in a cause, if any. */
export const defectOf = (cause: Cause.Cause<unknown>): unknown => {
  const found = Cause.findDefect(cause)
  return Result.isSuccess(found) ? found.success : undefined
}

/** Yields to the other fibers once. */
export const yieldNow: Effect.Effect<void> = Effect.yieldNow

/** A fiber's exit if it is done, without waiting (`unsafePoll` on Effect 3, `pollUnsafe` on 4). */
export const pollUnsafe = <A, E>(fiber: Fiber.Fiber<A, E>): Exit.Exit<A, E> | undefined => fiber.pollUnsafe()
