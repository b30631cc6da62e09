/**
 * The retry budget's contract as one suite for every backend (the in-memory `RetryBudget.make` of
 * `@circuitry/retry`, `RedisRetryBudget.make` of `@circuitry/redis`, and any future one), the way
 * the breaker-store suite runs one set of tests over several stores:
 *
 * ```ts
 * import { retryBudgetSuite } from "@circuitry/testkit/conformance/retryBudget"
 * retryBudgetSuite({ label: "memory", RetryBudget, make: RetryBudget.make, ... })
 * ```
 *
 * The port is `RetryBudget.RetryBudget`: `deposit`, `tryWithdraw`, `available` (and `name`, the
 * `TypeId`). What every backend keeps: a first attempt deposits `ratio` tokens that last one
 * `window` (ten buckets), a withdrawal spends one, from the deposits first and then from a floor of
 * `minPerSecond` a second (holding one second's worth, at least one token); none is given when
 * none is left; budgets of different names share nothing; time is the Effect Clock's; every
 * decision is counted in `RetryBudget`'s metrics; a bad option is the backend package's typed
 * error. What may differ is a parameter: whether budgets of one name share one balance (Redis:
 * every instance does), and how long a deposit takes to be seen (Redis sends it in the background).
 *
 * The testkit depends on no package, so the `RetryBudget` module is passed in, and the suite reads
 * a budget through `Budget`, the port's operations.
 */
import * as fc from "fast-check"
import { Effect } from "effect"
import type { Scope } from "effect"
import { assert, counterCount, describe, it, runTest, TestClock, yieldNow } from "@circuitry/testkit"

/** A budget as the suite uses it: `RetryBudget.RetryBudget` of `@circuitry/retry`, read by its operations. */
export interface Budget {
  readonly name: string
  readonly available: Effect.Effect<number>
  readonly deposit: Effect.Effect<void>
  readonly tryWithdraw: Effect.Effect<boolean>
}

/** The options the suite gives a backend: `RetryBudget.Options` (a backend adds its own, e.g. where Redis is). */
export interface BudgetOptions {
  readonly name?: string | undefined
  readonly ratio?: number | undefined
  readonly minPerSecond?: number | undefined
  readonly window?: unknown
}

type Counter = Parameters<typeof counterCount>[0]

/** What the suite needs of `RetryBudget` (`@circuitry/retry`), passed in: the guard and the metrics. */
export interface RetryBudgetModule {
  readonly isRetryBudget: (u: unknown) => boolean
  readonly depositsTotal: Counter
  readonly retriesTotal: Counter
}

/** A backend under test. */
export interface RetryBudgetBackend {
  /** Names the suite (`RetryBudget contract: <label>`) and the budgets its tests make. */
  readonly label: string
  readonly RetryBudget: RetryBudgetModule
  /** Makes a budget; every budget a test makes lives as long as the test. */
  make(options?: BudgetOptions): Effect.Effect<Budget, unknown, Scope.Scope>
  /** The error a bad option fails `make` with: its `_tag`, its class, and what its message starts with. */
  readonly optionsError: {
    readonly tag: string
    readonly class: new (...args: Array<any>) => unknown
    readonly messagePrefix: string
  }
  /**
   * Whether two budgets made with one name (in one place: the same Redis and prefix) share one
   * balance and one floor, as a fleet's instances do; otherwise each budget is its own.
   */
  readonly sharedByName: boolean
  /**
   * Waits until `condition` holds and says whether it did. A backend whose deposits are seen at
   * once (in memory) reads it once; one that sends them in the background (Redis) polls it, in
   * real time, for a bounded while.
   */
  readonly eventually: (condition: Effect.Effect<boolean>) => Effect.Effect<boolean>
  /** Runs of the concurrency property (default 100). */
  readonly propertyRuns?: number | undefined
  /** Each test's timeout, when the run's default (30 s) is too short for a backend on a busy machine. */
  readonly timeoutMillis?: number | undefined
}

/** Asks for `n` withdrawals, one after the other; how many were given. */
export const withdrawals = (budget: Budget, n: number): Effect.Effect<number> =>
  Effect.gen(function* () {
    let spent = 0
    for (let i = 0; i < n; i++) if (yield* budget.tryWithdraw) spent++
    return spent
  })

/** Records `n` first attempts. */
export const deposits = (budget: Budget, n: number): Effect.Effect<void> =>
  Effect.gen(function* () {
    for (let i = 0; i < n; i++) yield* budget.deposit
  })

let counter = 0
/** A budget name no other test (of this run, or an earlier one in this process) uses: the metrics are global. */
const freshName = (backend: RetryBudgetBackend, tag: string): string =>
  `${backend.label}-${tag}-${process.pid}-${counter++}`

/** Asserts that `budget` comes to have `expected` whole tokens available (at once, in memory). */
const availableComes = (backend: RetryBudgetBackend, budget: Budget, expected: number) =>
  Effect.gen(function* () {
    const seen = yield* backend.eventually(Effect.map(budget.available, (n) => n === expected))
    assert.isTrue(seen, `${budget.name}: available is ${yield* budget.available}, expected ${expected}`)
  })

/** What the metrics counted for the budgets of `name`: first attempts, and withdrawals by outcome. */
const counted = (backend: RetryBudgetBackend, name: string) =>
  Effect.all({
    deposits: counterCount(backend.RetryBudget.depositsTotal, { budget: name }),
    allowed: counterCount(backend.RetryBudget.retriesTotal, { budget: name, outcome: "allowed" }),
    denied: counterCount(backend.RetryBudget.retriesTotal, { budget: name, outcome: "denied" })
  })

/** One test of the contract: `run` against a backend fails (an assertion, as a defect) when it breaks it. */
export interface ContractTest {
  readonly group: string
  readonly name: string
  readonly run: (backend: RetryBudgetBackend) => Effect.Effect<void, unknown, Scope.Scope>
}

/** Options as a test names them (NaN and the infinities by name, where JSON has null). */
const show = (options: unknown): string =>
  JSON.stringify(options, (_, v: unknown) => (typeof v === "number" && !Number.isFinite(v) ? String(v) : v))

/** Options every backend refuses, with the rule its message names (after the backend's prefix). */
const badOptions: ReadonlyArray<readonly [unknown, string]> = [
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

/** The contract, test by test (`retryBudgetSuite` registers them; a test of the suite may run one alone). */
export const retryBudgetContract: ReadonlyArray<ContractTest> = [
  ...badOptions.map(([options, rule]): ContractTest => ({
    group: "options",
    name: `rejects ${show(options)}`,
    run: (backend) =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(backend.make(options as BudgetOptions))
        assert.instanceOf(error, backend.optionsError.class)
        assert.strictEqual((error as { _tag?: unknown })._tag, backend.optionsError.tag)
        assert.include((error as Error).message, backend.optionsError.messagePrefix + rule)
      })
  })),
  {
    group: "options",
    name: "a budget is recognisable by isRetryBudget, and named (`default` unless given a name)",
    run: (backend) =>
      Effect.gen(function* () {
        const budget = yield* backend.make()
        assert.isTrue(backend.RetryBudget.isRetryBudget(budget))
        assert.isFalse(backend.RetryBudget.isRetryBudget({ name: "x", available: Effect.succeed(1) }))
        assert.strictEqual(budget.name, "default")
        const name = freshName(backend, "named")
        assert.strictEqual((yield* backend.make({ name })).name, name)
      })
  },
  {
    group: "deposits and withdrawals",
    name: "each first attempt deposits `ratio` tokens; a withdrawal spends one; none is given once they are spent; all counted",
    run: (backend) =>
      Effect.gen(function* () {
        const name = freshName(backend, "ratio")
        const budget = yield* backend.make({ name, ratio: 0.1, minPerSecond: 0 })
        assert.strictEqual(yield* budget.available, 0)
        assert.isFalse(yield* budget.tryWithdraw)
        yield* deposits(budget, 100)
        yield* availableComes(backend, budget, 10)
        assert.strictEqual(yield* budget.available, 10) // reading it spends nothing
        assert.strictEqual(yield* withdrawals(budget, 11), 10)
        assert.strictEqual(yield* budget.available, 0)
        assert.deepStrictEqual(yield* counted(backend, name), { deposits: 100, allowed: 10, denied: 2 })
      })
  },
  {
    group: "deposits and withdrawals",
    name: "deposits expire after the window (kept as ten buckets), withdrawals with them, on the Effect Clock",
    run: (backend) =>
      Effect.gen(function* () {
        const budget = yield* backend.make({
          name: freshName(backend, "window"),
          ratio: 0.5,
          minPerSecond: 0,
          window: "10 seconds"
        })
        yield* deposits(budget, 10) // t = 0, bucket [0, 1 s)
        yield* availableComes(backend, budget, 5)
        yield* TestClock.adjust("9999 millis")
        assert.strictEqual(yield* budget.available, 5)
        assert.strictEqual(yield* withdrawals(budget, 2), 2) // t = 9.999 s, bucket [9 s, 10 s)
        assert.strictEqual(yield* budget.available, 3)
        yield* TestClock.adjust("1 milli") // t = 10 s: the deposits are gone, the withdrawals are not
        assert.strictEqual(yield* budget.available, 0)
        assert.isFalse(yield* budget.tryWithdraw)
        yield* deposits(budget, 10) // 5 tokens, less the 2 withdrawn in the window
        yield* availableComes(backend, budget, 3)
        yield* TestClock.adjust("9 seconds") // t = 19 s: the withdrawals at 9.999 s are gone
        assert.strictEqual(yield* budget.available, 5)
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* budget.available, 0)
      })
  },
  {
    group: "the floor",
    name: "minPerSecond retries every second with no deposits at all, and no more",
    run: (backend) =>
      Effect.gen(function* () {
        const budget = yield* backend.make({ name: freshName(backend, "floor"), ratio: 0.1, minPerSecond: 5 })
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
  },
  {
    group: "the floor",
    name: "a floor under one per second still allows one retry now and then",
    run: (backend) =>
      Effect.gen(function* () {
        const budget = yield* backend.make({ name: freshName(backend, "slow-floor"), ratio: 0, minPerSecond: 0.5 })
        assert.strictEqual(yield* withdrawals(budget, 3), 1)
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* withdrawals(budget, 3), 0)
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* withdrawals(budget, 3), 1)
      })
  },
  {
    group: "names",
    name: "budgets of different names share no deposits, no floor and no metrics",
    run: (backend) =>
      Effect.gen(function* () {
        const options = { ratio: 0.5, minPerSecond: 1 }
        const a = yield* backend.make({ ...options, name: freshName(backend, "isolated-a") })
        const b = yield* backend.make({ ...options, name: freshName(backend, "isolated-b") })
        yield* deposits(a, 10)
        yield* availableComes(backend, a, 6) // 5 from the deposits, 1 from the floor
        assert.strictEqual(yield* b.available, 1) // b's floor alone
        assert.strictEqual(yield* withdrawals(b, 3), 1)
        assert.strictEqual(yield* a.available, 6)
        assert.strictEqual(yield* withdrawals(a, 7), 6)
        assert.deepStrictEqual(yield* counted(backend, a.name), { deposits: 10, allowed: 6, denied: 1 })
        assert.deepStrictEqual(yield* counted(backend, b.name), { deposits: 0, allowed: 1, denied: 2 })
      })
  },
  {
    group: "names",
    name: "budgets of one name: one balance and one floor when the backend shares them, else each its own",
    run: (backend) =>
      Effect.gen(function* () {
        const name = freshName(backend, "one-name")
        const a = yield* backend.make({ name, ratio: 0.5, minPerSecond: 0 })
        const b = yield* backend.make({ name, ratio: 0.5, minPerSecond: 0 })
        yield* deposits(a, 10) // 5 tokens
        yield* availableComes(backend, a, 5)
        if (backend.sharedByName) {
          // What a deposits, b (which made no first attempt) may spend, and no more.
          yield* availableComes(backend, b, 5)
          assert.strictEqual(yield* withdrawals(b, 3), 3)
          assert.strictEqual(yield* withdrawals(a, 3), 2)
          assert.strictEqual(yield* a.available, 0)
          assert.strictEqual(yield* withdrawals(b, 1), 0)
          assert.deepStrictEqual(yield* counted(backend, name), { deposits: 10, allowed: 5, denied: 2 })
        } else {
          assert.strictEqual(yield* b.available, 0)
          assert.strictEqual(yield* withdrawals(b, 3), 0)
          assert.strictEqual(yield* withdrawals(a, 6), 5)
          assert.deepStrictEqual(yield* counted(backend, name), { deposits: 10, allowed: 5, denied: 4 })
        }
        // The floor: 4 a second for all budgets of the name together, or for each.
        const floorName = freshName(backend, "one-floor")
        const c = yield* backend.make({ name: floorName, ratio: 0, minPerSecond: 4 })
        const d = yield* backend.make({ name: floorName, ratio: 0, minPerSecond: 4 })
        assert.strictEqual((yield* withdrawals(c, 3)) + (yield* withdrawals(d, 3)), backend.sharedByName ? 4 : 6)
        yield* TestClock.adjust("500 millis")
        assert.strictEqual((yield* withdrawals(c, 3)) + (yield* withdrawals(d, 3)), backend.sharedByName ? 2 : 6)
      })
  },
  {
    group: "concurrency",
    name: "concurrent withdrawals never overspend, and spend all there is (property)",
    run: (backend) =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc.integer({ min: 0, max: 300 }),
            fc.integer({ min: 1, max: 400 }),
            fc.constantFrom(0, 0.05, 0.1, 0.3, 1),
            fc.integer({ min: 0, max: 20 }),
            fc.array(fc.boolean(), { minLength: 1, maxLength: 64 }),
            async (firsts, demand, ratio, minPerSecond, yields) => {
              const supply = Math.floor(ratio * firsts + 1e-9) + (minPerSecond === 0 ? 0 : Math.max(1, minPerSecond))
              const spent = await runTest(
                Effect.gen(function* () {
                  const budget = yield* backend.make({ name: freshName(backend, "concurrent"), ratio, minPerSecond })
                  yield* Effect.forEach(Array.from({ length: firsts }), () => budget.deposit, {
                    concurrency: "unbounded",
                    discard: true
                  })
                  yield* availableComes(backend, budget, supply)
                  const results = yield* Effect.forEach(
                    Array.from({ length: demand }, (_, i) => i),
                    (i) =>
                      yields[i % yields.length] ? Effect.andThen(yieldNow, budget.tryWithdraw) : budget.tryWithdraw,
                    { concurrency: "unbounded" }
                  )
                  return results.filter((b) => b).length
                })
              )
              return spent === Math.min(demand, supply)
            }
          ),
          { numRuns: backend.propertyRuns ?? 100 }
        )
      )
  }
]

/** Registers the contract's tests for `backend`. */
export const retryBudgetSuite = (backend: RetryBudgetBackend): void => {
  describe(`RetryBudget contract: ${backend.label}`, () => {
    for (const group of new Set(retryBudgetContract.map((test) => test.group))) {
      describe(group, () => {
        for (const test of retryBudgetContract.filter((t) => t.group === group)) {
          it.scoped(test.name, () => test.run(backend), backend.timeoutMillis)
        }
      })
    }
  })
}
