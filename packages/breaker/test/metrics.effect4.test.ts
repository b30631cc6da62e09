/**
 * Effect 4 only: src/internal/metrics.effect4.ts updates a series through its entry in Effect's
 * `Metric.MetricRegistry`, found under the key Effect 4 writes (Effect does not export it), while
 * the registry still holds that entry. If an Effect upgrade writes keys otherwise, updates still
 * land (through `updateUnsafe`) but slower: the first test fails so that it does not go unnoticed.
 * The second checks that an entry taken out of the registry by someone else is made again on the
 * next update, as `updateUnsafe` does, rather than updated where no one reads it.
 */
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { assert, describe, it, withAttributes } from "@circuitry/testkit"
import { Context, Effect, Metric } from "effect"
import * as internalMetrics from "../src/internal/metrics.js"
import { call, succeed } from "./utils.js"

const successes = (breaker: string) =>
  Metric.value(withAttributes(CircuitBreaker.callsTotal, { breaker, outcome: "success" })).pipe(
    Effect.map((state) => state.count)
  )

describe("metrics (Effect 4)", () => {
  it("a series finds its entry in Effect's registry under the key it works out", () => {
    assert.deepStrictEqual(internalMetrics.internals(), { directUpdates: true })
  })

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
