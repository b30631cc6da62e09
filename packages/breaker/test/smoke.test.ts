import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, TestClock } from "effect"

describe("smoke", () => {
  it.scoped("opens after threshold and half-opens after openFor", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({ policy: Policy.consecutiveFailures(2), openFor: "10 seconds" })
      let runs = 0
      const failing = Effect.suspend(() => {
        runs++
        return Effect.fail("boom" as const)
      })
      yield* Effect.either(CircuitBreaker.withBreaker(failing, breaker))
      yield* Effect.either(CircuitBreaker.withBreaker(failing, breaker))
      assert.strictEqual((yield* breaker.state)._tag, "Open")
      const rejected = yield* Effect.either(CircuitBreaker.withBreaker(failing, breaker))
      assert.isTrue(Either.isLeft(rejected))
      assert.strictEqual(runs, 2)
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual((yield* breaker.state)._tag, "HalfOpen")
    })
  )
})
