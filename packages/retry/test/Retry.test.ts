import { Rejection } from "@circuitry/core"
import * as Edition from "@circuitry/core/Edition"
import { Retry, RetryBudget } from "@circuitry/retry"
import { assert, counterCount, defectOf, describe, intersectSchedules, it, TestClock } from "@circuitry/testkit"
import { Clock, Effect, Exit, Fiber, Schedule } from "effect"
import { numbered } from "./numbered.js"

/** A rejection as `@circuitry/limiter` makes it (that package is not a dependency): it carries the TypeId. */
class LimiterRejected {
  readonly [Rejection.TypeId] = Rejection.TypeId
  readonly _tag = "LimiterRejectedError"
  constructor(readonly retryAfterMillis: number) {}
}

/** The same fields without the TypeId: not a rejection, an ordinary error. */
class LookAlike {
  readonly _tag = "LimiterRejectedError"
  constructor(readonly retryAfterMillis: number) {}
}

/** The effect died with `InvalidRetryOptions`, its message holding `message` (or being it, when `whole`). */
const diesWith = (exit: Exit.Exit<unknown, unknown>, message: string, whole = false) => {
  assert.isTrue(Exit.isFailure(exit))
  if (Exit.isFailure(exit)) {
    const defect = defectOf(exit.cause) as { _tag?: string; message?: string } | undefined
    assert.strictEqual(defect?._tag, "InvalidRetryOptions")
    if (whole) assert.strictEqual(defect?.message, message)
    else assert.include(defect?.message, message)
  }
}

describe("Retry.retry", () => {
  it.effect("without a budget it retries by the schedule and returns the last error", () =>
    Effect.gen(function* () {
      const dep = numbered()
      const error = yield* Effect.flip(dep.effect.pipe(Retry.retry({ schedule: Schedule.recurs(3) })))
      assert.strictEqual(error, 4)
      assert.strictEqual(dep.at.length, 4)
    })
  )

  it.effect("waits the schedule's delays on the Clock", () =>
    Effect.gen(function* () {
      const dep = numbered(3)
      const fiber = yield* Edition.forkChild(Retry.retry(dep.effect, { schedule: Schedule.spaced("1 second") }))
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
      const error = yield* Effect.flip(
        dep.effect.pipe(Retry.retry({ schedule: Schedule.recurs(10), while: (n) => n < 3 }))
      )
      assert.strictEqual(error, 3)
      let runs = 0
      const dying = Effect.suspend(() => {
        runs++
        return Effect.die("bug")
      })
      const exit = yield* Effect.exit(dying.pipe(Retry.retry({ schedule: Schedule.recurs(3) })))
      assert.isTrue(Exit.isFailure(exit) && defectOf(exit.cause) === "bug")
      assert.strictEqual(runs, 1)
    })
  )

  it.scoped("a retry with no token left does not happen: the caller gets the last error, the denial is counted", () =>
    Effect.gen(function* () {
      const name = "denial-test"
      const budget = yield* RetryBudget.make({ name, ratio: 0, minPerSecond: 2 })
      const dep = numbered()
      const error = yield* Effect.flip(dep.effect.pipe(Retry.retry({ schedule: Schedule.recurs(5), budget })))
      assert.strictEqual(error, 3) // two tokens: attempts 1, 2, 3
      const count = (outcome: string) => counterCount(RetryBudget.retriesTotal, { budget: name, outcome })
      assert.strictEqual(yield* count("allowed"), 2)
      assert.strictEqual(yield* count("denied"), 1)
      assert.strictEqual(yield* counterCount(RetryBudget.depositsTotal, { budget: name }), 1)
    })
  )

  it.effect("the budget may be a tag, and the types infer without casts", () =>
    Effect.gen(function* () {
      class Budget extends Edition.KeyClass<Budget, RetryBudget.RetryBudget>()("Budget") {}
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
      // The whole message: the same rule, words and value display as every constructor's options error.
      diesWith(
        yield* Effect.exit(ok.pipe(Retry.retry({ schedule: Schedule.recurs(1), maxRetryAfter: "-1 seconds" }))),
        'Retry.retry maxRetryAfter must be a finite duration >= 0, got "-1 seconds"',
        true
      )
      // A negative duration in Effect 4's object form (Effect 3 has no object form: it fails too).
      const negative = { seconds: -1 } as unknown as Edition.DurationInput
      diesWith(
        yield* Effect.exit(ok.pipe(Retry.retry({ schedule: Schedule.recurs(1), maxRetryAfter: negative }))),
        'Retry.retry maxRetryAfter must be a finite duration >= 0, got {"seconds":-1}',
        true
      )
      diesWith(
        yield* Effect.exit(
          ok.pipe(
            Retry.retry({ schedule: Schedule.recurs(1), maxRetryAfter: "Infinity" as unknown as Edition.DurationInput })
          )
        ),
        'Retry.retry maxRetryAfter must be a finite duration >= 0, got "Infinity"',
        true
      )
      diesWith(
        yield* Effect.exit(ok.pipe(Retry.retry({ schedule: "often" as unknown as Schedule.Schedule<number> }))),
        "schedule must be a Schedule"
      )
      diesWith(
        yield* Effect.exit(ok.pipe(Retry.retry(undefined as unknown as Retry.Options<never, number>))),
        "Retry.retry schedule must be a Schedule, got undefined",
        true
      )
      diesWith(
        yield* Effect.exit(ok.pipe(Retry.retry(3 as unknown as Retry.Options<never, number>))),
        "Retry.retry options must be an object, got 3",
        true
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
        "budget must be a RetryBudget or a service key"
      )
      diesWith(
        yield* Effect.exit(
          ok.pipe(Retry.retry({ schedule: Schedule.recurs(1), while: 3 as unknown as (e: never) => boolean }))
        ),
        "while must be a function"
      )
    })
  )

  it.effect("options that passed for a schedule are not taken for other values with the same schedule", () =>
    Effect.gen(function* () {
      const schedule = Schedule.recurs(3)
      let runs = 0
      const limited = Effect.suspend(() => {
        runs++
        return runs === 1 ? Effect.fail(new LimiterRejected(2_000)) : Effect.succeed("ok")
      })
      // 2 s is within maxRetryAfter 5 s: retried after it.
      const fiber = yield* Edition.forkChild(limited.pipe(Retry.retry({ schedule, maxRetryAfter: "5 seconds" })))
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(yield* Fiber.join(fiber), "ok")
      assert.strictEqual(runs, 2)
      // The same schedule without maxRetryAfter: the default 1 s, not the 5 s resolved before.
      runs = 0
      const again = yield* Edition.forkChild(Effect.exit(limited.pipe(Retry.retry({ schedule }))))
      yield* TestClock.adjust("2 seconds")
      assert.isTrue(Exit.isFailure(yield* Fiber.join(again)))
      assert.strictEqual(runs, 1)
      // A bad value after good ones with the same schedule is still refused, and good ones pass after it.
      diesWith(
        yield* Effect.exit(limited.pipe(Retry.retry({ schedule, maxRetryAfter: "-1 seconds" }))),
        'Retry.retry maxRetryAfter must be a finite duration >= 0, got "-1 seconds"',
        true
      )
      diesWith(
        yield* Effect.exit(
          limited.pipe(Retry.retry({ schedule, while: 3 as unknown as (e: LimiterRejected) => boolean }))
        ),
        "Retry.retry while must be a function of the error, got 3",
        true
      )
      const fake = { name: "fake" } as unknown as RetryBudget.RetryBudget
      diesWith(
        yield* Effect.exit(limited.pipe(Retry.retry({ schedule, budget: fake }))),
        'Retry.retry budget must be a RetryBudget or a service key (Context.Tag, Context.Key) of one, got {"name":"fake"}',
        true
      )
      runs = 1
      assert.strictEqual(yield* limited.pipe(Retry.retry({ schedule })), "ok")
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
        const fiber = yield* Edition.forkChild(limited.pipe(Retry.retry({ schedule: Schedule.recurs(3) })))
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

    it.effect("a look-alike without the TypeId is an ordinary error: retried by the schedule alone", () =>
      Effect.gen(function* () {
        const at: Array<number> = []
        const failing = (error: unknown) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => {
            at.push(now)
            return Effect.fail(error)
          })
        const schedule = intersectSchedules(Schedule.spaced("10 millis"), Schedule.recurs(2))
        // A real rejection past maxRetryAfter fails at once; the look-alike is retried at 10 and 20 ms.
        yield* Effect.exit(failing(new LimiterRejected(5_000)).pipe(Retry.retry({ schedule })))
        assert.deepStrictEqual(at, [0])
        at.length = 0
        const fiber = yield* Edition.forkChild(
          Effect.exit(failing(new LookAlike(5_000)).pipe(Retry.retry({ schedule })))
        )
        yield* TestClock.adjust("20 millis")
        yield* Fiber.join(fiber)
        assert.deepStrictEqual(at, [0, 10, 20])
      })
    )
  })
})
