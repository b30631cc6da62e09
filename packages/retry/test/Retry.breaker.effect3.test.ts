// Retry against a real @circuitry/breaker. Effect 3 only until @circuitry/breaker is ported to one
// source on both majors (docs/editions.md); the same behaviour against a rejection is tested on both
// majors in Retry.test.ts with a LimiterRejectedError.
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { Retry } from "@circuitry/retry"
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Either, Fiber, Schedule, TestClock } from "effect"

/** A dependency that fails with the number of the attempt (1, 2, ...) and records when it ran. */
const numbered = (succeedOn = Number.POSITIVE_INFINITY) => {
  const at: Array<number> = []
  const effect = Effect.flatMap(Clock.currentTimeMillis, (now) => {
    at.push(now)
    return at.length >= succeedOn ? Effect.succeed("ok" as const) : Effect.fail(at.length)
  })
  return { at, effect }
}

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
      const fiber = yield* Effect.fork(Effect.either(call.pipe(Retry.retry({ schedule: Schedule.recurs(6) }))))
      for (let i = 0; i < 40; i++) yield* TestClock.adjust("50 millis")
      // t=0: the dependency fails and opens the circuit; the retry at once is rejected (retry
      // after 500 ms); at 500 ms the probe fails and reopens it, and so on: the dependency sees
      // one call per open episode, and the breaker one rejected attempt per episode.
      assert.deepStrictEqual(yield* Fiber.join(fiber), Either.left(4))
      assert.deepStrictEqual(dep.at, [0, 500, 1000, 1500])
      assert.strictEqual(attempts, 7)
    })
  )

  it.scoped("against a real open breaker: waits exactly its retryAfterMillis, then the probe succeeds", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({ policy: Policy.consecutiveFailures(1), openFor: "800 millis" })
      const dep = numbered(2)
      const fiber = yield* Effect.fork(
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
      const result = yield* Effect.either(
        CircuitBreaker.withBreaker(dep.effect, breaker).pipe(
          Retry.retry({ schedule: Schedule.recurs(3), maxRetryAfter: "5 seconds" })
        )
      )
      // No clock was moved: the call ended at t=0, after one real call and one rejection.
      assert.isTrue(Either.isLeft(result) && result.left instanceof CircuitBreaker.BreakerOpenError)
      if (Either.isLeft(result) && result.left instanceof CircuitBreaker.BreakerOpenError) {
        assert.strictEqual(result.left.retryAfterMillis, 30_000)
      }
      assert.deepStrictEqual(dep.at, [0])
    })
  )
})
