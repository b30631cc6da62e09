/**
 * Effect 4 only: a breaker's series whose entry someone else took out of Effect's
 * `Metric.MetricRegistry` (a public `Map`) is made again on the breaker's next update, as
 * `updateUnsafe` does, rather than updated where no one reads it. Core's `MetricSeries` updates a
 * series through the entry it last found; that it finds entries under the keys Effect writes is
 * pinned by packages/core/test/MetricSeries.test.ts (`MetricSeries.internals()`). Effect 3's
 * registry is private: no one else can take an entry out of it.
 */
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { assert, describe, it, withAttributes } from "@circuitry/testkit"
import { Context, Effect, Metric } from "effect"
import { call, succeed } from "./utils.js"

const successes = (breaker: string) =>
  Metric.value(withAttributes(CircuitBreaker.callsTotal, { breaker, outcome: "success" })).pipe(
    Effect.map((state) => state.count)
  )

describe("metrics (Effect 4)", () => {
  it.scoped("a series whose registry entry was removed makes it again on its next update", () =>
    Effect.gen(function* () {
      const name = "metrics-entry-removed"
      const breaker = yield* CircuitBreaker.make({ name, policy: Policy.consecutiveFailures(5) })
      yield* call(breaker, succeed)
      yield* call(breaker, succeed)
      assert.strictEqual(yield* successes(name), 2)
      const registry = Context.get(Context.empty(), Metric.MetricRegistry)
      for (const key of [...registry.keys()]) if (key.includes(`"${name}"`)) registry.delete(key)
      yield* call(breaker, succeed)
      assert.strictEqual(yield* successes(name), 1)
    })
  )
})
