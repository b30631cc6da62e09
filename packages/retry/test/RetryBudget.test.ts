import * as Edition from "@circuitry/core/Edition"
import { Retry, RetryBudget } from "@circuitry/retry"
import { assert, counterCount, describe, it, runTest, TestClock, yieldNow } from "@circuitry/testkit"
import { Effect, Exit, Fiber, Schedule } from "effect"
import * as fc from "fast-check"

const withdrawals = (budget: RetryBudget.RetryBudget, n: number) =>
  Effect.gen(function* () {
    let spent = 0
    for (let i = 0; i < n; i++) if (yield* budget.tryWithdraw) spent++
    return spent
  })

const deposits = (budget: RetryBudget.RetryBudget, n: number) =>
  Effect.gen(function* () {
    for (let i = 0; i < n; i++) yield* budget.deposit
  })

const counter = (metric: typeof RetryBudget.retriesTotal, budget: string, outcome?: string) =>
  counterCount(metric, outcome === undefined ? { budget } : { budget, outcome })

describe("RetryBudget", () => {
  describe("options", () => {
    const bad: ReadonlyArray<[unknown, string]> = [
      ["nope", "options must be an object"],
      [{ name: "" }, "name must be a non-empty string"],
      [{ ratio: -0.1 }, "ratio must be a finite number >= 0, got -0.1"],
      [{ ratio: Number.NaN }, "ratio must be a finite number >= 0, got NaN"],
      [{ minPerSecond: -1 }, "minPerSecond must be a finite number >= 0, got -1"],
      [{ minPerSecond: Number.POSITIVE_INFINITY }, "minPerSecond must be a finite number >= 0"],
      [{ window: "-1 second" }, "window must be a finite duration of at least 10 ms"],
      [{ window: "5 millis" }, "window must be a finite duration of at least 10 ms"],
      [{ window: "soon" }, "window must be a finite duration"]
    ]
    for (const [options, message] of bad) {
      it.scoped(`rejects ${JSON.stringify(options)}`, () =>
        Effect.gen(function* () {
          const error = yield* Effect.flip(RetryBudget.make(options as RetryBudget.Options))
          assert.strictEqual(error._tag, "InvalidRetryOptions")
          assert.include(error.message, message)
        })
      )
    }

    it.scoped("a budget is recognisable", () =>
      Effect.gen(function* () {
        const budget = yield* RetryBudget.make()
        assert.isTrue(RetryBudget.isRetryBudget(budget))
        assert.isFalse(RetryBudget.isRetryBudget({ name: "x", available: Effect.succeed(1) }))
        assert.strictEqual(budget.name, "default")
      })
    )
  })

  describe("semantics", () => {
    it.scoped("each first attempt deposits `ratio` tokens; a retry spends one; denials are counted", () =>
      Effect.gen(function* () {
        const name = "ratio-test"
        const budget = yield* RetryBudget.make({ name, ratio: 0.1, minPerSecond: 0 })
        assert.strictEqual(yield* budget.available, 0)
        yield* deposits(budget, 100)
        assert.strictEqual(yield* budget.available, 10)
        assert.strictEqual(yield* withdrawals(budget, 11), 10)
        assert.strictEqual(yield* budget.available, 0)
        assert.strictEqual(yield* counter(RetryBudget.depositsTotal, name), 100)
        assert.strictEqual(yield* counter(RetryBudget.retriesTotal, name, "allowed"), 10)
        assert.strictEqual(yield* counter(RetryBudget.retriesTotal, name, "denied"), 1)
      })
    )

    it.scoped("deposits expire after the window (kept as ten buckets), withdrawals with them", () =>
      Effect.gen(function* () {
        const budget = yield* RetryBudget.make({ ratio: 0.5, minPerSecond: 0, window: "10 seconds" })
        yield* deposits(budget, 10) // t = 0, bucket [0, 1 s)
        yield* TestClock.adjust("9999 millis")
        assert.strictEqual(yield* budget.available, 5)
        assert.strictEqual(yield* withdrawals(budget, 2), 2) // t = 9.999 s, bucket [9 s, 10 s)
        assert.strictEqual(yield* budget.available, 3)
        yield* TestClock.adjust("1 milli") // t = 10 s: the deposits are gone, the withdrawals are not
        assert.strictEqual(yield* budget.available, 0)
        yield* deposits(budget, 10) // 5 tokens, less the 2 withdrawn in the window
        assert.strictEqual(yield* budget.available, 3)
        yield* TestClock.adjust("9 seconds") // t = 19 s: the withdrawals at 9.999 s are gone
        assert.strictEqual(yield* budget.available, 5)
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* budget.available, 0)
      })
    )

    it.scoped("the floor holds: minPerSecond retries every second with no deposits at all, and no more", () =>
      Effect.gen(function* () {
        const budget = yield* RetryBudget.make({ ratio: 0.1, minPerSecond: 5 })
        const perSecond: Array<number> = []
        for (let second = 0; second < 20; second++) {
          let allowed = 0
          for (let tick = 0; tick < 10; tick++) {
            allowed += yield* withdrawals(budget, 3) // asks 30 per second
            yield* TestClock.adjust("100 millis")
          }
          perSecond.push(allowed)
        }
        // A full bucket to start with (5), plus 4.5 refilled by the last tick of the first second;
        // then 5 a second.
        assert.strictEqual(perSecond[0], 9)
        assert.deepStrictEqual(
          perSecond.slice(1),
          Array.from({ length: 19 }, () => 5)
        )
      })
    )

    it.scoped("a floor under one per second still allows one retry now and then", () =>
      Effect.gen(function* () {
        const budget = yield* RetryBudget.make({ ratio: 0, minPerSecond: 0.5 })
        assert.strictEqual(yield* withdrawals(budget, 3), 1)
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* withdrawals(budget, 3), 0)
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* withdrawals(budget, 3), 1)
      })
    )

    it.effect("concurrent withdrawals never overspend (property)", () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc.integer({ min: 0, max: 300 }),
            fc.integer({ min: 1, max: 400 }),
            fc.constantFrom(0, 0.05, 0.1, 0.3, 1),
            fc.integer({ min: 0, max: 20 }),
            fc.array(fc.boolean(), { minLength: 1, maxLength: 64 }),
            async (firsts, demand, ratio, minPerSecond, yields) => {
              const spent = await runTest(
                Effect.gen(function* () {
                  const budget = yield* RetryBudget.make({ ratio, minPerSecond })
                  yield* Effect.forEach(Array.from({ length: firsts }), () => budget.deposit, {
                    concurrency: "unbounded",
                    discard: true
                  })
                  const results = yield* Effect.forEach(
                    Array.from({ length: demand }, (_, i) => i),
                    (i) =>
                      yields[i % yields.length] ? Effect.andThen(yieldNow, budget.tryWithdraw) : budget.tryWithdraw,
                    { concurrency: "unbounded" }
                  )
                  return results.filter((b) => b).length
                })
              )
              const supply = Math.floor(ratio * firsts + 1e-9) + (minPerSecond === 0 ? 0 : Math.max(1, minPerSecond))
              return spent === Math.min(demand, supply)
            }
          ),
          { numRuns: 100 }
        )
      )
    )

    it.scoped("concurrent retries through Retry.retry never overspend the budget", () =>
      Effect.gen(function* () {
        const budget = yield* RetryBudget.make({ ratio: 0.1, minPerSecond: 3 })
        let attempts = 0
        const failing = Effect.suspend(() => {
          attempts++
          return Effect.andThen(yieldNow, Effect.fail("down"))
        })
        const calls = 200
        yield* Effect.forEach(
          Array.from({ length: calls }),
          () => Effect.exit(failing.pipe(Retry.retry({ schedule: Schedule.recurs(3), budget }))),
          { concurrency: "unbounded", discard: true }
        )
        // At most 0.1 per first attempt (20) plus the floor's bucket (3), and all of it spent.
        assert.strictEqual(attempts - calls, 23)
        assert.strictEqual(yield* budget.available, 0)
      })
    )

    it.scoped("a retry interrupted while it waits spends nothing", () =>
      Effect.gen(function* () {
        const budget = yield* RetryBudget.make({ ratio: 1, minPerSecond: 0 })
        let attempts = 0
        const failing = Effect.suspend(() => {
          attempts++
          return Effect.fail("down")
        })
        const retried = failing.pipe(Retry.retry({ schedule: Schedule.spaced("1 second"), budget }))
        const fiber = yield* Edition.forkChild(retried)
        yield* TestClock.adjust("500 millis")
        assert.strictEqual(attempts, 1)
        assert.strictEqual(yield* budget.available, 1) // the first attempt's deposit, unspent
        yield* Fiber.interrupt(fiber)
        yield* TestClock.adjust("5 seconds")
        assert.strictEqual(attempts, 1)
        assert.strictEqual(yield* budget.available, 1)
        // The same call left alone spends its token when the retry starts.
        const second = yield* Edition.forkChild(retried)
        yield* TestClock.adjust("1 second")
        assert.strictEqual(attempts, 3)
        yield* TestClock.adjust("5 seconds")
        const exit = yield* Fiber.await(second)
        assert.isTrue(Exit.isFailure(exit))
        assert.strictEqual(attempts, 4) // two deposits, two tokens: the second call retried twice
      })
    )
  })
})
