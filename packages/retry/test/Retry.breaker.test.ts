// Retry against a real @circuitry/breaker, on both Effect majors; the same rules against a limiter's
// rejection are in Retry.test.ts.
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import * as Edition from "@circuitry/core/Edition"
import { Retry } from "@circuitry/retry"
import { assert, describe, it, TestClock } from "@circuitry/testkit"
import { Effect, Fiber, Schedule } from "effect"
import { numbered } from "./numbered.js"

describe("Retry.retry against a real breaker", () => {
  it.scoped("against a real open breaker: one attempt per retry-after, then the probe", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({ policy: Policy.consecutiveFailures(1), openFor: "500 millis" })
      const dep = numbered() // never recovers
      let attempts = 0
      const call = Effect.suspend(() => {
        attempts++
        return CircuitBreaker.withBreaker(dep.effect, breaker)
      })
      const fiber = yield* Edition.forkChild(Effect.flip(call.pipe(Retry.retry({ schedule: Schedule.recurs(6) }))))
      for (let i = 0; i < 40; i++) yield* TestClock.adjust("50 millis")
      // t=0: the dependency fails and opens the circuit; the retry at once is rejected (retry
      // after 500 ms); at 500 ms the probe fails and reopens it, and so on: the dependency sees
      // one call per open episode, and the breaker one rejected attempt per episode.
      assert.strictEqual(yield* Fiber.join(fiber), 4)
      assert.deepStrictEqual(dep.at, [0, 500, 1000, 1500])
      assert.strictEqual(attempts, 7)
    })
  )

  it.scoped("against a real open breaker: waits exactly its retryAfterMillis, then the probe succeeds", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({ policy: Policy.consecutiveFailures(1), openFor: "800 millis" })
      const dep = numbered(2)
      const fiber = yield* Edition.forkChild(
        CircuitBreaker.withBreaker(dep.effect, breaker).pipe(Retry.retry({ schedule: Schedule.recurs(3) }))
      )
      yield* TestClock.adjust("799 millis")
      assert.deepStrictEqual(dep.at, [0])
      assert.strictEqual((yield* breaker.state)._tag, "Open")
      yield* TestClock.adjust("1 milli")
      assert.strictEqual(yield* Fiber.join(fiber), "ok")
      assert.deepStrictEqual(dep.at, [0, 800])
      assert.strictEqual((yield* breaker.state)._tag, "Closed")
    })
  )

  it.scoped("against a breaker open longer than maxRetryAfter: fails at once with the rejection", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({ policy: Policy.consecutiveFailures(1), openFor: "30 seconds" })
      const dep = numbered()
      const error = yield* Effect.flip(
        CircuitBreaker.withBreaker(dep.effect, breaker).pipe(
          Retry.retry({ schedule: Schedule.recurs(3), maxRetryAfter: "5 seconds" })
        )
      )
      // No clock was moved: the call ended at t=0, after one real call and one rejection.
      assert.isTrue(error instanceof CircuitBreaker.BreakerOpenError)
      if (error instanceof CircuitBreaker.BreakerOpenError) assert.strictEqual(error.retryAfterMillis, 30_000)
      assert.deepStrictEqual(dep.at, [0])
    })
  )
})
