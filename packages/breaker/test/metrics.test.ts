import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Metric, TestClock } from "effect"
import { call, fail, succeed } from "./utils.js"

const calls = (breaker: string, outcome: string) =>
  Metric.value(
    CircuitBreaker.callsTotal.pipe(Metric.tagged("breaker", breaker), Metric.tagged("outcome", outcome))
  ).pipe(Effect.map((state) => state.count))

describe("metrics", () => {
  it.scoped("count calls by outcome, transitions and the current state, labelled by breaker", () =>
    Effect.gen(function* () {
      const name = "metrics-test"
      const breaker = yield* CircuitBreaker.make({ name, policy: Policy.consecutiveFailures(2), openFor: "1 second" })
      yield* call(breaker, succeed)
      yield* call(breaker, fail)
      yield* call(breaker, fail) // opens
      yield* call(breaker, succeed) // rejected
      yield* call(breaker, CircuitBreaker.repairing(succeed)) // repair while open
      // Inspecting records nothing.
      yield* breaker.state
      yield* breaker.isCallAllowed
      yield* breaker.snapshot
      assert.strictEqual(yield* calls(name, "success"), 1)
      assert.strictEqual(yield* calls(name, "failure"), 2)
      assert.strictEqual(yield* calls(name, "rejected"), 1)
      assert.strictEqual(yield* calls(name, "repair"), 1)
      const gauge = Metric.value(CircuitBreaker.stateGauge.pipe(Metric.tagged("breaker", name)))
      assert.strictEqual((yield* gauge).value, 1)
      yield* TestClock.adjust("1 second")
      yield* call(breaker, succeed) // probe closes it
      assert.strictEqual((yield* gauge).value, 0)
      assert.strictEqual(yield* calls(name, "success"), 2)
      const opened = Metric.value(
        CircuitBreaker.transitionsTotal.pipe(
          Metric.tagged("breaker", name),
          Metric.tagged("from", "Closed"),
          Metric.tagged("to", "Open")
        )
      )
      assert.strictEqual((yield* opened).count, 1)
    })
  )

  it.scoped("the caller's span is annotated with the breaker's name and the state it found", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({ name: "traced", policy: Policy.consecutiveFailures(1) })
      const attributes = (effect: Effect.Effect<unknown, unknown>) =>
        Effect.gen(function* () {
          yield* Effect.either(CircuitBreaker.withBreaker(effect, breaker))
          const span = yield* Effect.currentSpan
          return Object.fromEntries(span.attributes)
        }).pipe(Effect.withSpan("call"))
      assert.deepStrictEqual(yield* attributes(fail), {
        "circuitry.breaker": "traced",
        "circuitry.breaker.state": "Closed"
      })
      assert.deepStrictEqual(yield* attributes(succeed), {
        "circuitry.breaker": "traced",
        "circuitry.breaker.state": "Open"
      })
    })
  )
})
