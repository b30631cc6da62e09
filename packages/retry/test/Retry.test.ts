import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { Retry, RetryBudget } from "@circuitry/retry"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Clock, Context, Effect, Either, Exit, Fiber, Metric, Option, Schedule, TestClock } from "effect"

/** A dependency that fails with the number of the attempt (1, 2, ...) and records when it ran. */
const numbered = (succeedOn = Number.POSITIVE_INFINITY) => {
  const at: Array<number> = []
  const effect = Effect.flatMap(Clock.currentTimeMillis, (now) => {
    at.push(now)
    return at.length >= succeedOn ? Effect.succeed("ok" as const) : Effect.fail(at.length)
  })
  return { at, effect }
}

/** A rejection as `@circuitry/limiter` makes it (that package is not a dependency). */
class LimiterRejected {
  readonly _tag = "LimiterRejectedError"
  constructor(readonly retryAfterMillis: number) {}
}

const diesWith = (exit: Exit.Exit<unknown, unknown>, message: string) => {
  assert.isTrue(Exit.isFailure(exit))
  if (Exit.isFailure(exit)) {
    const defect = Option.getOrUndefined(Cause.dieOption(exit.cause)) as { _tag?: string; message?: string }
    assert.strictEqual(defect?._tag, "InvalidRetryOptions")
    assert.include(defect?.message, message)
  }
}

describe("Retry.retry", () => {
  it.effect("without a budget it retries by the schedule and returns the last error", () =>
    Effect.gen(function* () {
      const dep = numbered()
      const result = yield* Effect.either(dep.effect.pipe(Retry.retry({ schedule: Schedule.recurs(3) })))
      assert.deepStrictEqual(result, Either.left(4))
      assert.strictEqual(dep.at.length, 4)
    })
  )

  it.effect("waits the schedule's delays on the Clock", () =>
    Effect.gen(function* () {
      const dep = numbered(3)
      const fiber = yield* Effect.fork(Retry.retry(dep.effect, { schedule: Schedule.spaced("1 second") }))
      yield* TestClock.adjust("999 millis")
      assert.deepStrictEqual(dep.at, [0])
      yield* TestClock.adjust("1001 millis")
      assert.strictEqual(yield* Fiber.join(fiber), "ok")
      assert.deepStrictEqual(dep.at, [0, 1000, 2000])
    })
  )

  it.effect("`while` decides which errors are retried; defects never are", () =>
    Effect.gen(function* () {
      const dep = numbered()
      const result = yield* Effect.either(
        dep.effect.pipe(Retry.retry({ schedule: Schedule.recurs(10), while: (n) => n < 3 }))
      )
      assert.deepStrictEqual(result, Either.left(3))
      let runs = 0
      const dying = Effect.suspend(() => {
        runs++
        return Effect.die("bug")
      })
      const exit = yield* Effect.exit(dying.pipe(Retry.retry({ schedule: Schedule.recurs(3) })))
      assert.isTrue(Exit.isFailure(exit) && Cause.isDie(exit.cause))
      assert.strictEqual(runs, 1)
    })
  )

  it.scoped("a retry with no token left does not happen: the caller gets the last error, the denial is counted", () =>
    Effect.gen(function* () {
      const name = "denial-test"
      const budget = yield* RetryBudget.make({ name, ratio: 0, minPerSecond: 2 })
      const dep = numbered()
      const result = yield* Effect.either(dep.effect.pipe(Retry.retry({ schedule: Schedule.recurs(5), budget })))
      assert.deepStrictEqual(result, Either.left(3)) // two tokens: attempts 1, 2, 3
      const count = (outcome: string) =>
        Metric.value(
          RetryBudget.retriesTotal.pipe(Metric.tagged("budget", name), Metric.tagged("outcome", outcome))
        ).pipe(Effect.map((s) => s.count))
      assert.strictEqual(yield* count("allowed"), 2)
      assert.strictEqual(yield* count("denied"), 1)
      const deposits = Metric.value(RetryBudget.depositsTotal.pipe(Metric.tagged("budget", name)))
      assert.strictEqual((yield* deposits).count, 1)
    })
  )

  it.effect("the budget may be a tag, and the types infer without casts", () =>
    Effect.gen(function* () {
      class Budget extends Context.Tag("Budget")<Budget, RetryBudget.RetryBudget>() {}
      const dep = numbered(2)
      const retried: Effect.Effect<"ok", number, Budget> = dep.effect.pipe(
        Retry.retry({ schedule: Schedule.recurs(1), budget: Budget, while: (n) => n > 0 })
      )
      const result = yield* retried.pipe(Effect.provide(RetryBudget.layer(Budget, { ratio: 1 })))
      assert.strictEqual(result, "ok")
    })
  )

  it.effect("bad options make the effect die with InvalidRetryOptions naming the option", () =>
    Effect.gen(function* () {
      const ok = Effect.succeed(1)
      diesWith(
        yield* Effect.exit(ok.pipe(Retry.retry({ schedule: Schedule.recurs(1), maxRetryAfter: "-1 seconds" }))),
        "maxRetryAfter must be a finite duration >= 0"
      )
      diesWith(
        yield* Effect.exit(ok.pipe(Retry.retry({ schedule: "often" as unknown as Schedule.Schedule<number> }))),
        "schedule must be a Schedule"
      )
      diesWith(
        yield* Effect.exit(
          ok.pipe(
            Retry.retry({
              schedule: Schedule.recurs(1),
              budget: { name: "fake" } as unknown as RetryBudget.RetryBudget
            })
          )
        ),
        "budget must be a RetryBudget or a Context.Tag"
      )
      diesWith(
        yield* Effect.exit(
          ok.pipe(Retry.retry({ schedule: Schedule.recurs(1), while: 3 as unknown as (e: never) => boolean }))
        ),
        "while must be a function"
      )
    })
  )

  describe("rejections", () => {
    it.effect("a LimiterRejectedError is retried only after its retryAfterMillis", () =>
      Effect.gen(function* () {
        const at: Array<number> = []
        const limited = Effect.flatMap(Clock.currentTimeMillis, (now) => {
          at.push(now)
          return at.length === 1 ? Effect.fail(new LimiterRejected(200)) : Effect.succeed("ok")
        })
        const fiber = yield* Effect.fork(limited.pipe(Retry.retry({ schedule: Schedule.recurs(3) })))
        yield* TestClock.adjust("199 millis")
        assert.deepStrictEqual(at, [0])
        yield* TestClock.adjust("1 milli")
        assert.strictEqual(yield* Fiber.join(fiber), "ok")
        assert.deepStrictEqual(at, [0, 200])
      })
    )

    it.effect("past maxRetryAfter, or with retryAfterMillis 0 (not known), it fails at once", () =>
      Effect.gen(function* () {
        for (const [after, max] of [
          [1500, "1 second"],
          [0, "1 second"],
          [50, "0 millis"]
        ] as const) {
          let runs = 0
          const limited = Effect.suspend(() => {
            runs++
            return Effect.fail(new LimiterRejected(after))
          })
          const exit = yield* Effect.exit(
            limited.pipe(Retry.retry({ schedule: Schedule.recurs(3), maxRetryAfter: max }))
          )
          assert.isTrue(Exit.isFailure(exit))
          assert.strictEqual(runs, 1, `retryAfterMillis ${after}, maxRetryAfter ${max}`)
        }
      })
    )

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
})
