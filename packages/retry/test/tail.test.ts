/**
 * Hedging a dependency with a heavy tail, in virtual time: most calls take about 10 ms, a few
 * take a second. A p95 hedge within a budget brings the p99 down to a few times the p50, adds
 * load only within the budget, and interrupts every loser.
 */
import * as Edition from "@circuitry/core/Edition"
import { Hedging, RetryBudget } from "@circuitry/retry"
import { assert, describe, it, TestClock } from "@circuitry/testkit"
import { Clock, Duration, Effect, Fiber } from "effect"

const CALLS = 500
const BATCH = 5 // calls that start together, every 100 ms (50 calls a second)
const SLOW_SHARE = 0.05

/** A fixed pseudo-random sequence (a 32-bit LCG), so that every run sees the same latencies. */
const lcg = (seed: number) => () => {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0
  return seed / 2 ** 32
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!

const simulate = (hedged: boolean) =>
  Effect.gen(function* () {
    const random = lcg(42)
    const stats = { attempts: 0, interrupted: 0 }
    // Each attempt draws its own latency: 8-12 ms, or 1 s for SLOW_SHARE of them.
    const dependency = Effect.suspend(() => {
      stats.attempts++
      const millis = random() < SLOW_SHARE ? 1000 : 8 + 4 * random()
      return Effect.sleep(Duration.millis(millis)).pipe(
        Effect.onInterrupt(() => Effect.sync(() => stats.interrupted++))
      )
    })
    const budget = yield* RetryBudget.make({ name: "tail", ratio: 0.1, minPerSecond: 1 })
    const hedging = yield* Hedging.make({
      name: "tail",
      delay: { percentile: 95, max: "100 millis" },
      budget
    })
    const call = hedged ? dependency.pipe(Hedging.withHedging(hedging)) : dependency
    const latencies: Array<number> = []
    const timedCall = Effect.gen(function* () {
      const start = yield* Clock.currentTimeMillis
      yield* call
      latencies.push((yield* Clock.currentTimeMillis) - start)
    })
    const fibers: Array<Edition.Fiber<void, never>> = []
    for (let i = 0; i < CALLS / BATCH; i++) {
      for (let j = 0; j < BATCH; j++) fibers.push(yield* Edition.forkChild(timedCall))
      // In steps: Effect 4's TestClock.adjust runs only the sleeps registered one scheduler turn
      // after it starts, and the hedge timer's sweeper arms its sleep a turn after a call starts.
      for (let t = 0; t < 100; t += 10) yield* TestClock.adjust("10 millis")
    }
    yield* TestClock.adjust("2 seconds")
    yield* Fiber.joinAll(fibers)
    const sorted = [...latencies].sort((a, b) => a - b)
    return {
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      max: sorted[sorted.length - 1]!,
      extra: stats.attempts - CALLS,
      interrupted: stats.interrupted,
      seconds: (CALLS / BATCH) * 0.1 + 2
    }
  })

describe("hedging a heavy tail", () => {
  it.scoped(
    "p99 with a p95 hedge is at most 3x the p50; extra load within the budget; losers interrupted",
    () =>
      Effect.gen(function* () {
        const plain = yield* simulate(false)
        const hedged = yield* simulate(true)
        const ms = (n: number) => `${n.toFixed(1)} ms`
        console.log(
          [
            "",
            "| | no hedging | p95 hedge, budget ratio 0.1 |",
            "| --- | ---: | ---: |",
            `| p50 | ${ms(plain.p50)} | ${ms(hedged.p50)} |`,
            `| p99 | ${ms(plain.p99)} | ${ms(hedged.p99)} |`,
            `| slowest call | ${ms(plain.max)} | ${ms(hedged.max)} |`,
            `| extra attempts (hedges) | ${plain.extra} | ${hedged.extra} (${((100 * hedged.extra) / CALLS).toFixed(1)}%) |`,
            `| losers interrupted | ${plain.interrupted} | ${hedged.interrupted} |`,
            ""
          ].join("\n")
        )
        assert.strictEqual(plain.p99, 1000) // the tail, unhedged
        assert.isAtMost(hedged.p99, 3 * hedged.p50)
        // The budget: 0.1 per call, plus the floor of 1 a second (and its first token).
        assert.isAtMost(hedged.extra, 0.1 * CALLS + Math.ceil(hedged.seconds) + 1)
        assert.isAbove(hedged.extra, 0)
        // Every hedged call has exactly one loser, and each was interrupted (its finalizer ran).
        assert.strictEqual(hedged.interrupted, hedged.extra)
      }),
    // A hang guard, not a measure: 2,000 TestClock steps, each a few real turns of the event loop,
    // which a busy machine hands out late. 18 s at load 18 (5.8 s of CPU), 30 s timed out at load 14
    // during a whole run.
    120_000
  )
})
