/**
 * The retry storm, in virtual time: callers at a steady rate against a dependency that fails every
 * call for a minute and then recovers. `Schedule.recurs(3)` alone multiplies the load on the
 * failing dependency by four; the same schedule within a budget of ratio 0.1 adds at most a tenth,
 * plus the floor of `minPerSecond`. The figures are printed as the table in docs/retry.md.
 */
import { Retry, RetryBudget } from "@circuitry/retry"
import { assert, describe, it, TestClock } from "@circuitry/testkit"
import { Clock, Effect, Exit, Schedule } from "effect"

const CALLS_PER_SECOND = 200
const OUTAGE_SECONDS = 60
const TOTAL_SECONDS = 90
const MIN_PER_SECOND = 10
const TICK_MILLIS = 100

interface Figures {
  readonly firsts: number
  readonly attempts: number
  readonly peakPerSecond: number
  readonly failedCalls: number
  /** Seconds after the recovery until the first call succeeded. */
  readonly firstSuccessAfter: number
  /** Calls after the recovery that succeeded, and whether each did at its first attempt. */
  readonly recoveredCalls: number
  readonly recoveredOk: number
  readonly recoveredAtFirstAttempt: number
}

const simulate = (budgeted: boolean) =>
  Effect.gen(function* () {
    const budget = budgeted
      ? yield* RetryBudget.make({ name: "storm", ratio: 0.1, minPerSecond: MIN_PER_SECOND })
      : undefined
    const perSecond = new Array<number>(TOTAL_SECONDS).fill(0)
    let attemptsOfCall = 0
    const start = yield* Clock.currentTimeMillis
    const elapsed = Effect.map(Clock.currentTimeMillis, (now) => now - start)
    const dependency = Effect.flatMap(elapsed, (now) => {
      perSecond[Math.floor(now / 1000)]!++
      attemptsOfCall++
      return now < OUTAGE_SECONDS * 1000 ? Effect.fail("unavailable" as const) : Effect.succeed("ok" as const)
    })
    const call = dependency.pipe(Retry.retry({ schedule: Schedule.recurs(3), ...(budget ? { budget } : {}) }))
    let firsts = 0
    let failedCalls = 0
    let recoveredCalls = 0
    let recoveredOk = 0
    let recoveredAtFirstAttempt = 0
    let firstSuccessAt = Number.POSITIVE_INFINITY
    // Calls go out in ticks of 100 ms (20 a tick), one after another at the tick's instant; time
    // moves only through TestClock.adjust.
    for (let tick = 0; tick < (TOTAL_SECONDS * 1000) / TICK_MILLIS; tick++) {
      const now = yield* elapsed
      for (let i = 0; i < (CALLS_PER_SECOND * TICK_MILLIS) / 1000; i++) {
        attemptsOfCall = 0
        const result = yield* Effect.exit(call)
        if (now < OUTAGE_SECONDS * 1000) {
          firsts++
          if (Exit.isFailure(result)) failedCalls++
        } else {
          recoveredCalls++
          if (Exit.isSuccess(result)) {
            recoveredOk++
            firstSuccessAt = Math.min(firstSuccessAt, now)
            if (attemptsOfCall === 1) recoveredAtFirstAttempt++
          }
        }
      }
      yield* TestClock.adjust(TICK_MILLIS)
    }
    const outage = perSecond.slice(0, OUTAGE_SECONDS)
    const figures: Figures = {
      firsts,
      attempts: outage.reduce((a, b) => a + b, 0),
      peakPerSecond: Math.max(...outage),
      failedCalls,
      firstSuccessAfter: (firstSuccessAt - OUTAGE_SECONDS * 1000) / 1000,
      recoveredCalls,
      recoveredOk,
      recoveredAtFirstAttempt
    }
    return figures
  })

const table = (plain: Figures, budgeted: Figures): string => {
  const x = (f: Figures) => `${(f.attempts / f.firsts).toFixed(2)}x`
  const rows: Array<[string, string, string]> = [
    ["first attempts in the outage (200/s for 60 s)", String(plain.firsts), String(budgeted.firsts)],
    ["attempts the failing dependency saw", String(plain.attempts), String(budgeted.attempts)],
    ["load on the failing dependency / first attempts", x(plain), x(budgeted)],
    ["busiest second of the outage, attempts", String(plain.peakPerSecond), String(budgeted.peakPerSecond)],
    [
      "after the recovery: calls that succeeded at their first attempt",
      `${plain.recoveredAtFirstAttempt} / ${plain.recoveredCalls}`,
      `${budgeted.recoveredAtFirstAttempt} / ${budgeted.recoveredCalls}`
    ],
    ["first success after the recovery", `${plain.firstSuccessAfter} s`, `${budgeted.firstSuccessAfter} s`]
  ]
  return [
    "| | `Schedule.recurs(3)` | `Schedule.recurs(3)` + `RetryBudget` (ratio 0.1, minPerSecond 10) |",
    "| --- | ---: | ---: |",
    ...rows.map((r) => `| ${r.join(" | ")} |`)
  ].join("\n")
}

describe("retry storm", () => {
  it.scoped(
    "a minute of 100% failures: recurs(3) alone quadruples the load; within a budget it stays under 1.1x + the floor",
    () =>
      Effect.gen(function* () {
        const plain = yield* simulate(false)
        const budgeted = yield* simulate(true)
        console.log(`\n${table(plain, budgeted)}\n`)

        const firsts = CALLS_PER_SECOND * OUTAGE_SECONDS
        assert.strictEqual(plain.firsts, firsts)
        assert.strictEqual(budgeted.firsts, firsts)
        // Without a budget every call is tried four times.
        assert.strictEqual(plain.attempts, 4 * firsts)
        // Within the budget: at most a tenth more, plus minPerSecond for each second (and the floor's
        // first bucket, full when the budget is made).
        const bound = 1.1 * firsts + MIN_PER_SECOND * (OUTAGE_SECONDS + 1)
        assert.isAtMost(budgeted.attempts, bound)
        // ... and the budget is spent, not hoarded: every token the deposits gave was used.
        assert.isAtLeast(budgeted.attempts, 1.1 * firsts + MIN_PER_SECOND * (OUTAGE_SECONDS - 1))
        assert.isAtMost(budgeted.peakPerSecond, 1.1 * CALLS_PER_SECOND + 3 * MIN_PER_SECOND)
        assert.strictEqual(budgeted.failedCalls, firsts)
        // The recovery is not delayed: from the first second after it every call succeeds, at once.
        for (const f of [plain, budgeted]) {
          assert.strictEqual(f.firstSuccessAfter, 0)
          assert.strictEqual(f.recoveredOk, f.recoveredCalls)
          assert.strictEqual(f.recoveredAtFirstAttempt, f.recoveredCalls)
          assert.strictEqual(f.recoveredCalls, CALLS_PER_SECOND * (TOTAL_SECONDS - OUTAGE_SECONDS))
        }
      })
  )
})
