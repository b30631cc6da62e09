import { RedisRetryBudget } from "@circuitry/redis"
import { Retry, RetryBudget } from "@circuitry/retry"
import * as Edition from "@circuitry/core/Edition"
import { MetricSeries } from "@circuitry/core"
import { assert, counterCount, describe, it, metricSeries, Result, result, TestClock } from "@circuitry/testkit"
import { deposits, retryBudgetSuite, withdrawals } from "@circuitry/testkit/conformance/retryBudget"
import { Effect, Exit, Fiber, Option, Schedule, Scope } from "effect"
import { Redis } from "ioredis"
import { cleanup, eventually, startServer, uniquePrefix } from "./utils/server.js"

const URL = "redis://127.0.0.1:6379"

/** A prefix on the shared test Redis, emptied when the test ends (a fresh one unless given). */
const scratch = (prefix = uniquePrefix("retry-budget")) =>
  Effect.as(
    Effect.acquireRelease(
      Effect.sync(() => new Redis(URL)),
      (client) => Effect.promise(() => cleanup(client, prefix).finally(() => client.disconnect()))
    ),
    prefix
  )

// The contract every backend keeps, on the shared test Redis: budgets of one name are one budget
// (one prefix for the suite), and deposits reach Redis in the background.
const suitePrefix = uniquePrefix("retry-budget-contract")
retryBudgetSuite({
  label: "Redis",
  RetryBudget,
  make: (options) =>
    Effect.andThen(
      scratch(suitePrefix),
      RedisRetryBudget.make(
        // A non-object is passed as it is: the suite checks that it is refused.
        (typeof options === "object" && options !== null
          ? { ...options, url: URL, prefix: suitePrefix }
          : options) as RedisRetryBudget.Options
      )
    ),
  optionsError: {
    tag: "InvalidRedisOptions",
    class: RedisRetryBudget.InvalidRedisOptions,
    messagePrefix: "RedisRetryBudget "
  },
  sharedByName: true,
  eventually: (condition) => eventually(condition),
  // Each run connects a budget of its own to Redis: 30 runs keep the test within seconds on Effect 3.
  propertyRuns: 30,
  // On Effect 3 every withdrawal leaves its deadline's sleep on the TestClock, which each later
  // adjust steps through: the floor test's 600 withdrawals took 8-10 s at a load average of 12-15.
  timeoutMillis: 60_000
})

describe("RedisRetryBudget", () => {
  it.scoped("the fleet's deposits expire with the window, on the Effect Clock", () =>
    Effect.gen(function* () {
      const prefix = yield* scratch()
      const options: RedisRetryBudget.Options = {
        name: "window",
        prefix,
        ratio: 1,
        minPerSecond: 0,
        window: "10 seconds"
      }
      const a = yield* RedisRetryBudget.make(options)
      const b = yield* RedisRetryBudget.make(options)
      yield* deposits(a, 4)
      assert.isTrue(yield* eventually(Effect.map(b.available, (n) => n === 4)))
      yield* TestClock.adjust("9 seconds")
      assert.strictEqual(yield* b.available, 4)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* b.available, 0)
      assert.strictEqual(yield* withdrawals(b, 1), 0)
    })
  )

  it.scoped("Redis down: each instance falls back to its local budget, and no call fails because of Redis", () =>
    Effect.gen(function* () {
      const server = yield* startServer
      const options = { name: "down", url: server.url, prefix: uniquePrefix("down"), ratio: 0.5, minPerSecond: 0 }
      const a = yield* RedisRetryBudget.make(options)
      const b = yield* RedisRetryBudget.make(options)
      yield* deposits(a, 2) // 1 fleet token while Redis is up
      assert.isTrue(yield* eventually(Effect.map(b.available, (n) => n === 1)))
      yield* server.kill

      // a's local budget holds a's own deposits; b has made none.
      yield* deposits(a, 8)
      assert.strictEqual(yield* a.available, 5)
      assert.strictEqual(yield* b.available, 0)
      assert.strictEqual(yield* withdrawals(a, 6), 5)
      assert.strictEqual(yield* withdrawals(b, 1), 0)

      // A retried call through a budget whose Redis is gone behaves as with a local budget.
      let attempts = 0
      const failing = Effect.suspend(() => {
        attempts++
        return Effect.fail("unavailable" as const)
      })
      const outcome = yield* result(failing.pipe(Retry.retry({ schedule: Schedule.recurs(3), budget: a })))
      assert.deepStrictEqual(outcome, Result.fail("unavailable"))
      assert.strictEqual(attempts, 1) // its deposit of 0.5 is not a whole token

      // A budget made while Redis is down builds, and works locally.
      const late = yield* RedisRetryBudget.make(options)
      yield* deposits(late, 2)
      assert.strictEqual(yield* withdrawals(late, 2), 1)
    })
  )

  it.scoped("a paused Redis delays a retry by at most `deadline`, then the instance decides locally", () =>
    Effect.gen(function* () {
      const server = yield* startServer
      const options: RedisRetryBudget.Options = {
        name: "paused",
        url: server.url,
        prefix: uniquePrefix("paused"),
        ratio: 1,
        minPerSecond: 0,
        deadline: "100 millis"
      }
      const a = yield* RedisRetryBudget.make(options)
      yield* deposits(a, 3)
      assert.isTrue(yield* eventually(Effect.map(a.available, (n) => n === 3)))
      yield* server.pause
      const fiber = yield* Edition.forkChild(a.tryWithdraw)
      yield* TestClock.adjust("100 millis")
      const spent = yield* Fiber.await(fiber)
      assert.deepStrictEqual(spent._tag, "Success")
      // Decided locally (a's own deposits), and locally again within the next second, at once.
      assert.strictEqual(yield* withdrawals(a, 3), 2)
      yield* server.resume
    })
  )

  it.scoped("bad Redis options fail with InvalidRedisOptions (the budget's own rules: the suite)", () =>
    Effect.gen(function* () {
      for (const [options, message] of [
        [{ url: "http://x" }, 'RedisRetryBudget url must be a redis:// or rediss:// URL, got "http://x"'],
        [{ deadline: "0 millis" }, 'RedisRetryBudget deadline must be a finite duration > 0, got "0 millis"'],
        [{ timeout: -5 }, "RedisRetryBudget timeout must be a finite duration > 0, got -5"],
        [
          { deadline: "1 second", timeout: "1 second" },
          "deadline and timeout (its deprecated old name) are one option"
        ],
        [{ prefix: 7 }, "RedisRetryBudget prefix must be a string, got 7"]
      ] as const) {
        const outcome = yield* result(RedisRetryBudget.make(options as RedisRetryBudget.Options))
        assert.isTrue(Result.isFailure(outcome), JSON.stringify(options))
        const error = Option.getOrUndefined(Result.getFailure(outcome))
        assert.instanceOf(error, RedisRetryBudget.InvalidRedisOptions)
        assert.strictEqual(error?._tag, "InvalidRedisOptions")
        assert.include(error?.message, message)
      }
    })
  )

  it.scoped("timeout, the deprecated name of deadline, is still read", () =>
    Effect.gen(function* () {
      const server = yield* startServer
      const budget = yield* RedisRetryBudget.make({
        name: "old-name",
        url: server.url,
        prefix: uniquePrefix("old-name"),
        ratio: 1,
        minPerSecond: 0,
        timeout: "50 millis"
      })
      yield* deposits(budget, 1)
      assert.isTrue(yield* eventually(Effect.map(budget.available, (n) => n === 1)))
      yield* server.pause
      const fiber = yield* Edition.forkChild(budget.tryWithdraw)
      // The limit is timeout's 50 ms: with the default 100 ms, the clock never gets there and this waits.
      yield* TestClock.adjust("50 millis")
      assert.deepStrictEqual((yield* Fiber.await(fiber))._tag, "Success")
      yield* server.resume
    })
  )
})

/** The retry budget series labelled with a budget name that starts with `prefix` (name and outcome). */
const budgetSeries = (prefix: string) =>
  Effect.map(metricSeries, (all) =>
    all
      .filter((s) => s.name.startsWith("circuitry_retry_budget_") && s.attributes.budget?.startsWith(prefix) === true)
      .map(
        (s) => `${s.attributes.budget} ${s.name}${s.attributes.outcome === undefined ? "" : ` ${s.attributes.outcome}`}`
      )
      .sort()
  )
const held = Effect.map(MetricSeries.currentRegistry, (registry) => MetricSeries.heldCount(registry))

describe("RedisRetryBudget metric series", () => {
  it.scoped(
    "200 budgets of distinct names, made and used in scopes that close, leave none of their series",
    () =>
      Effect.gen(function* () {
        const prefix = yield* scratch()
        const before = (yield* budgetSeries("")).length
        const heldBefore = yield* held
        for (let i = 0; i < 200; i++) {
          const name = `redis-churn-${i}`
          yield* Effect.scoped(
            Effect.gen(function* () {
              // One floor token in Redis: a retry allowed there, the next denied there.
              const budget = yield* RedisRetryBudget.make({ name, url: URL, prefix, ratio: 0, minPerSecond: 1 })
              yield* budget.deposit
              assert.deepStrictEqual([yield* budget.tryWithdraw, yield* budget.tryWithdraw], [true, false])
              if (i === 0) {
                assert.deepStrictEqual(yield* budgetSeries(name), [
                  `${name} circuitry_retry_budget_deposits_total`,
                  `${name} circuitry_retry_budget_retries_total allowed`,
                  `${name} circuitry_retry_budget_retries_total denied`
                ])
              }
            })
          )
        }
        assert.deepStrictEqual(yield* budgetSeries("redis-churn-"), [])
        assert.strictEqual((yield* budgetSeries("")).length, before)
        assert.strictEqual(yield* held, heldBefore)
      }),
    60_000
  )

  it.scoped("Redis budgets sharing a name share its series until the last one's scope closes", () =>
    Effect.gen(function* () {
      const prefix = yield* scratch()
      const name = "redis-shared"
      const options: RedisRetryBudget.Options = { name, url: URL, prefix, ratio: 0, minPerSecond: 100 }
      const first = yield* Scope.make()
      const second = yield* Scope.make()
      const a = yield* RedisRetryBudget.make(options).pipe(Effect.provideService(Scope.Scope, first))
      const b = yield* RedisRetryBudget.make(options).pipe(Effect.provideService(Scope.Scope, second))
      assert.isTrue(yield* a.tryWithdraw)
      assert.isTrue(yield* b.tryWithdraw)
      const allowed = counterCount(RetryBudget.retriesTotal, { budget: name, outcome: "allowed" })
      assert.strictEqual(yield* allowed, 2)
      yield* Scope.close(first, Exit.void)
      assert.isTrue(yield* b.tryWithdraw)
      assert.strictEqual(yield* allowed, 3)
      assert.deepStrictEqual(yield* budgetSeries(name), [`${name} circuitry_retry_budget_retries_total allowed`])
      yield* Scope.close(second, Exit.void)
      assert.deepStrictEqual(yield* budgetSeries(name), [])
    })
  )
})
