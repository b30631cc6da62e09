import * as Edition from "@circuitry/core/Edition"
import { Retry, RetryBudget } from "@circuitry/retry"
import { assert, defectOf, describe, it, TestClock, yieldNow } from "@circuitry/testkit"
import {
  retryBudgetContract,
  type RetryBudgetBackend,
  retryBudgetSuite
} from "@circuitry/testkit/conformance/retryBudget"
import { Effect, Exit, Fiber, Schedule } from "effect"

// The contract every backend keeps, on the in-memory budget: deposits seen at once, each budget its own.
const memory: RetryBudgetBackend = {
  label: "memory",
  RetryBudget,
  make: (options) => RetryBudget.make(options as RetryBudget.Options),
  optionsError: { tag: "InvalidRetryOptions", class: RetryBudget.InvalidRetryOptions, messagePrefix: "RetryBudget " },
  sharedByName: false,
  eventually: (condition) => condition
}
retryBudgetSuite(memory)

describe("RetryBudget", () => {
  describe("the conformance suite", () => {
    it.scoped("fails a budget that allows one withdrawal too many", () =>
      Effect.gen(function* () {
        // Each budget gives one withdrawal more than it has, and counts it as allowed.
        const overspending: RetryBudgetBackend = {
          ...memory,
          label: "overspending",
          make: (options) =>
            Effect.map(memory.make(options), (budget) => {
              let extra = 1
              return {
                name: budget.name,
                deposit: budget.deposit,
                available: budget.available,
                tryWithdraw: Effect.map(budget.tryWithdraw, (given) => given || extra-- > 0)
              }
            })
        }
        const test = retryBudgetContract.find((t) => t.name.startsWith("each first attempt deposits"))!
        assert.isTrue(Exit.isSuccess(yield* Effect.exit(test.run(memory))))
        const exit = yield* Effect.exit(test.run(overspending))
        assert.isTrue(Exit.isFailure(exit))
        // An assertion of the suite failed (not the wrapper).
        const defect = Exit.isFailure(exit) ? defectOf(exit.cause) : undefined
        assert.strictEqual((defect as Error | undefined)?.name, "AssertionError", String(defect))
      })
    )
  })

  it.effect("a bad option's message in full: the option, the rule, the value as given, the budget", () =>
    Effect.gen(function* () {
      const bad: ReadonlyArray<[unknown, string]> = [
        ["nope", 'RetryBudget options must be an object, got "nope"'],
        [{ name: 3 }, "RetryBudget name must be a non-empty string, got 3"],
        // null is no option's value (their types say so): refused, not read as the default.
        [{ name: null }, "RetryBudget name must be a non-empty string, got null"],
        [{ ratio: null }, 'RetryBudget ratio must be a finite number >= 0, got null (budget "default")'],
        // A message about the name has no budget to name, whichever option comes first.
        [{ ratio: -1, name: "" }, 'RetryBudget name must be a non-empty string, got ""'],
        [{ ratio: "1" }, 'RetryBudget ratio must be a finite number >= 0, got "1" (budget "default")'],
        [
          { name: "payments", minPerSecond: Number.POSITIVE_INFINITY },
          'RetryBudget minPerSecond must be a finite number >= 0, got Infinity (budget "payments")'
        ],
        [
          { name: "payments", window: { seconds: -1 } },
          'RetryBudget window must be a finite duration of at least 10 ms, got {"seconds":-1} (budget "payments")'
        ],
        [
          { window: "Infinity" },
          'RetryBudget window must be a finite duration of at least 10 ms, got "Infinity" (budget "default")'
        ]
      ]
      for (const [options, message] of bad) {
        const error = yield* Effect.flip(Effect.scoped(RetryBudget.make(options as RetryBudget.Options)))
        assert.strictEqual(error.message, message, JSON.stringify(options))
      }
      // Options of another package's budget built on this one (RedisRetryBudget) are no concern of it.
      const budget = yield* Effect.scoped(RetryBudget.make({ ratio: 1, url: "redis://x" } as RetryBudget.Options))
      assert.strictEqual(budget.name, "default")
    })
  )

  it.effect("a budget takes a window of exactly 10 ms, and its defaults without options", () =>
    Effect.gen(function* () {
      const budget = yield* Effect.scoped(RetryBudget.make({ window: "10 millis", ratio: 0, minPerSecond: 0 }))
      assert.strictEqual(yield* budget.available, 0)
      const byDefault = yield* Effect.scoped(RetryBudget.make())
      // The floor: minPerSecond 10, one second's worth.
      assert.strictEqual(yield* byDefault.available, 10)
    })
  )

  describe("with Retry.retry", () => {
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
