/**
 * Bounded metric memory: a retry budget's series and a hedging's leave the metric registry when
 * the scope they were made in closes. Before, every budget or hedging name ever used kept its
 * series in the registry for the life of the process (one name per tenant grew it without bound).
 */
import { MetricSeries } from "@circuitry/core"
import * as Edition from "@circuitry/core/Edition"
import { Hedging, Retry, RetryBudget } from "@circuitry/retry"
import { assert, counterCount, describe, it, metricSeries, TestClock, yieldNow } from "@circuitry/testkit"
import { Deferred, Duration, Effect, Exit, Fiber, Schedule, Scope } from "effect"

const seriesOf = (prefix: string) => Effect.map(metricSeries, (all) => all.filter((s) => s.name.startsWith(prefix)))
const budgetSeries = seriesOf("circuitry_retry_budget_")
const hedgingSeries = seriesOf("circuitry_hedging_")
/** The series (name and outcome) labelled `label` = `value`, of every circuitry metric. */
const labelled = (label: string, value: string) =>
  Effect.map(seriesOf("circuitry_"), (all) =>
    all
      .filter((s) => s.attributes[label] === value)
      .map((s) => `${s.name}${s.attributes.outcome === undefined ? "" : `{${s.attributes.outcome}}`}`)
      .sort()
  )
/** The series of every circuitry metric labelled `label` with a value that starts with `prefix`. */
const labelledFrom = (label: string, prefix: string) =>
  Effect.map(seriesOf("circuitry_"), (all) => all.filter((s) => s.attributes[label]?.startsWith(prefix) === true))
const held = Effect.map(MetricSeries.currentRegistry, (registry) => MetricSeries.heldCount(registry))

/** A call that always fails, retried through `budget` (one deposit, then one withdrawal per retry). */
const failing = Effect.fail("down" as const)

/** Runs `effect` in a fiber of its own while the Test Clock moves 10 ms at a time for `millis`. */
const during = <A, E>(effect: Effect.Effect<A, E>, millis: number) =>
  Effect.gen(function* () {
    const fiber = yield* Edition.forkChild(effect)
    for (let t = 0; t < millis; t += 10) yield* TestClock.adjust("10 millis")
    return yield* Fiber.join(fiber)
  })

/** A call whose first copy answers after 30 ms and any hedge after 5 ms (a hedge at 10 ms wins). */
const slowThenFast = () => {
  let calls = 0
  return Effect.suspend(() => Effect.as(Effect.sleep(Duration.millis(calls++ === 0 ? 30 : 5)), calls))
}

/** A call whose first copy answers when `gate` opens, and any hedge at once (a hedge wins). */
const gated = (gate: Deferred.Deferred<void>) => {
  let calls = 0
  return Effect.suspend(() => (calls++ === 0 ? Effect.as(Deferred.await(gate), 0) : Effect.succeed(calls)))
}

/**
 * A budget of `name` with no token, asked through its effects (as a Redis budget is, in a fiber of
 * the hedging's): `asked` is done once it has denied a hedge.
 */
const emptyBudget = (name: string, asked: Deferred.Deferred<void>) =>
  Effect.map(RetryBudget.make({ name, ratio: 0, minPerSecond: 0 }), (local): RetryBudget.RetryBudget => ({
    [RetryBudget.TypeId]: RetryBudget.TypeId,
    name,
    available: local.available,
    deposit: local.deposit,
    tryWithdraw: Effect.tap(local.tryWithdraw, () => Deferred.succeed(asked, undefined))
  }))

describe("metric series", () => {
  it.effect(
    "2,000 budgets of distinct names, made and used in scopes that close, leave none of their series",
    () =>
      Effect.gen(function* () {
        const before = (yield* budgetSeries).length
        const heldBefore = yield* held
        for (let i = 0; i < 2_000; i++) {
          const name = `churn-budget-${i}`
          yield* Effect.scoped(
            Effect.gen(function* () {
              // One floor token: a retry allowed, the next denied.
              const budget = yield* RetryBudget.make({ name, ratio: 0, minPerSecond: 1 })
              const outcome = yield* Effect.exit(failing.pipe(Retry.retry({ schedule: Schedule.recurs(3), budget })))
              assert.isTrue(Exit.isFailure(outcome))
              if (i === 0) {
                assert.deepStrictEqual(yield* labelled("budget", name), [
                  "circuitry_retry_budget_deposits_total",
                  "circuitry_retry_budget_retries_total{allowed}",
                  "circuitry_retry_budget_retries_total{denied}"
                ])
                assert.strictEqual(
                  yield* counterCount(RetryBudget.retriesTotal, { budget: name, outcome: "denied" }),
                  1
                )
              }
            })
          )
        }
        assert.deepStrictEqual(yield* labelledFrom("budget", "churn-budget-"), [])
        assert.strictEqual((yield* budgetSeries).length, before)
        assert.strictEqual(yield* held, heldBefore)
      }),
    120_000
  )

  it.effect("budgets sharing a name share its series until the last one's scope closes", () =>
    Effect.gen(function* () {
      const name = "shared-budget"
      const first = yield* Scope.make()
      const second = yield* Scope.make()
      const a = yield* RetryBudget.make({ name }).pipe(Effect.provideService(Scope.Scope, first))
      const b = yield* RetryBudget.make({ name }).pipe(Effect.provideService(Scope.Scope, second))
      // An idle budget holds no series.
      assert.deepStrictEqual(yield* labelled("budget", name), [])
      yield* a.deposit
      yield* b.deposit
      const deposits = counterCount(RetryBudget.depositsTotal, { budget: name })
      assert.strictEqual(yield* deposits, 2)
      yield* Scope.close(first, Exit.void)
      yield* b.deposit
      assert.strictEqual(yield* deposits, 3)
      // a budget used after its scope closed keeps working, and records nowhere
      yield* a.deposit
      assert.isTrue(yield* a.tryWithdraw)
      assert.strictEqual(yield* deposits, 3)
      assert.deepStrictEqual(yield* labelled("budget", name), ["circuitry_retry_budget_deposits_total"])
      yield* Scope.close(second, Exit.void)
      assert.deepStrictEqual(yield* labelled("budget", name), [])
    })
  )

  it.effect(
    "2,000 hedgings of distinct names, 500 live at a time, leave none of their series once their scopes close",
    () =>
      Effect.gen(function* () {
        const before = { hedging: (yield* hedgingSeries).length, budget: (yield* budgetSeries).length }
        const heldBefore = yield* held
        for (let round = 0; round < 4; round++) {
          const closes: Array<Effect.Effect<void>> = []
          const calls: Array<Fiber.Fiber<number>> = []
          /** What says each call's hedge was decided: the call's end (won), or its denial. */
          const decided: Array<Effect.Effect<unknown>> = []
          const gate = yield* Deferred.make<void>()
          for (let i = round * 500; i < (round + 1) * 500; i++) {
            const name = `churn-hedging-${i}`
            const scope = yield* Scope.make()
            closes.push(Scope.close(scope, Exit.void))
            const asked = yield* Deferred.make<void>()
            // Every other one has an empty budget of its name: its hedge is denied.
            const budget =
              i % 2 === 0 ? undefined : yield* emptyBudget(name, asked).pipe(Effect.provideService(Scope.Scope, scope))
            // Due at once: no sleep on the Test Clock (where each costs real time on Effect 3).
            const hedging = yield* Hedging.make({ name, delay: "0 millis", budget }).pipe(
              Effect.provideService(Scope.Scope, scope)
            )
            const call = yield* Edition.forkChild(gated(gate).pipe(Hedging.withHedging(hedging)))
            calls.push(call)
            decided.push(budget === undefined ? Fiber.join(call) : Deferred.await(asked))
          }
          for (const done of decided) yield* done
          // A denial is counted when the budget's fiber ends, after `asked` is done: on Effect 4 the
          // waiter resumes inside that fiber, so one yield lets it end first (on Effect 3 it has).
          yield* yieldNow
          yield* Deferred.succeed(gate, undefined)
          for (const call of calls) yield* Fiber.join(call)
          if (round === 0) {
            assert.deepStrictEqual(yield* labelled("hedging", "churn-hedging-0"), [
              "circuitry_hedging_hedges_total{started}",
              "circuitry_hedging_hedges_total{won}"
            ])
            assert.deepStrictEqual(yield* labelled("hedging", "churn-hedging-1"), [
              "circuitry_hedging_hedges_total{denied}"
            ])
            assert.deepStrictEqual(yield* labelled("budget", "churn-hedging-1"), [
              "circuitry_retry_budget_deposits_total",
              "circuitry_retry_budget_retries_total{denied}"
            ])
          }
          // 250 started and won, 250 denied (each with its budget's deposits and denials).
          assert.strictEqual((yield* labelledFrom("hedging", "churn-hedging-")).length, 750)
          assert.strictEqual((yield* labelledFrom("budget", "churn-hedging-")).length, 500)
          for (const close of closes) yield* close
          assert.deepStrictEqual(yield* labelledFrom("hedging", "churn-hedging-"), [])
          assert.deepStrictEqual(yield* labelledFrom("budget", "churn-hedging-"), [])
        }
        assert.deepStrictEqual({ hedging: (yield* hedgingSeries).length, budget: (yield* budgetSeries).length }, before)
        assert.strictEqual(yield* held, heldBefore)
      }),
    120_000
  )

  it.effect("hedgings sharing a name share its series until the last one's scope closes", () =>
    Effect.gen(function* () {
      const name = "shared-hedging"
      const first = yield* Scope.make()
      const second = yield* Scope.make()
      const a = yield* Hedging.make({ name, delay: "10 millis" }).pipe(Effect.provideService(Scope.Scope, first))
      const b = yield* Hedging.make({ name, delay: "10 millis" }).pipe(Effect.provideService(Scope.Scope, second))
      assert.deepStrictEqual(yield* labelled("hedging", name), [])
      yield* during(slowThenFast().pipe(Hedging.withHedging(a)), 30)
      yield* during(slowThenFast().pipe(Hedging.withHedging(b)), 30)
      const started = counterCount(Hedging.hedgesTotal, { hedging: name, outcome: "started" })
      assert.strictEqual(yield* started, 2)
      yield* Scope.close(first, Exit.void)
      yield* during(slowThenFast().pipe(Hedging.withHedging(b)), 30)
      assert.strictEqual(yield* started, 3)
      assert.deepStrictEqual(yield* labelled("hedging", name), [
        "circuitry_hedging_hedges_total{started}",
        "circuitry_hedging_hedges_total{won}"
      ])
      yield* Scope.close(second, Exit.void)
      assert.deepStrictEqual(yield* labelled("hedging", name), [])
    })
  )
})
