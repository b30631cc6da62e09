/**
 * The budget's ring against a reference model that keeps every event in a list: the same
 * decisions, for random sequences of deposits, withdrawals and waits (a mutant of the ring's
 * bucket arithmetic, its expiry or its floor makes them differ).
 */
import { RetryBudget } from "@circuitry/retry"
import { describe, it, runTest, TestClock } from "@circuitry/testkit"
import { Effect } from "effect"
import * as fc from "fast-check"
import { Latencies } from "../src/internal/latencies.js"

interface Model {
  readonly ratio: number
  readonly minPerSecond: number
  readonly bucketMillis: number
  deposits: Array<number>
  withdrawals: Array<number>
  tokens: number
  at: number
}

const live = (m: Model, times: ReadonlyArray<number>, now: number) => {
  const current = Math.floor(now / m.bucketMillis)
  return times.filter((t) => Math.floor(t / m.bucketMillis) > current - 10).length
}

const capacity = (m: Model) => (m.minPerSecond === 0 ? 0 : Math.max(1, m.minPerSecond))

const modelWithdraw = (m: Model, now: number): boolean => {
  if (live(m, m.deposits, now) * m.ratio - live(m, m.withdrawals, now) + 1e-9 >= 1) {
    m.withdrawals.push(now)
    return true
  }
  if (now > m.at) {
    m.tokens = Math.min(capacity(m), m.tokens + ((now - m.at) * m.minPerSecond) / 1000)
    m.at = now
  }
  if (m.tokens + 1e-9 < 1) return false
  m.tokens -= 1
  return true
}

type Step =
  | { readonly _tag: "deposit"; readonly n: number }
  | { readonly _tag: "withdraw"; readonly n: number }
  | {
      readonly _tag: "wait"
      readonly millis: number
    }

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ _tag: fc.constant("deposit" as const), n: fc.integer({ min: 1, max: 30 }) }),
  fc.record({ _tag: fc.constant("withdraw" as const), n: fc.integer({ min: 1, max: 10 }) }),
  fc.record({ _tag: fc.constant("wait" as const), millis: fc.integer({ min: 1, max: 4000 }) })
)

describe("RetryBudget against a reference model", () => {
  it.effect("every withdrawal is decided as the model decides it", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          fc.constantFrom(0, 0.1, 0.25, 1),
          fc.constantFrom(0, 0.5, 2, 10),
          fc.constantFrom(1000, 2500, 10_000),
          fc.array(step, { minLength: 1, maxLength: 60 }),
          async (ratio, minPerSecond, window, steps) =>
            runTest(
              Effect.gen(function* () {
                const budget = yield* RetryBudget.make({ ratio, minPerSecond, window })
                const m: Model = {
                  ratio,
                  minPerSecond,
                  bucketMillis: window / 10,
                  deposits: [],
                  withdrawals: [],
                  tokens: minPerSecond === 0 ? 0 : Math.max(1, minPerSecond),
                  at: 0
                }
                let now = 0
                for (const s of steps) {
                  if (s._tag === "wait") {
                    yield* TestClock.adjust(s.millis)
                    now += s.millis
                  } else if (s._tag === "deposit") {
                    for (let i = 0; i < s.n; i++) yield* budget.deposit
                    for (let i = 0; i < s.n; i++) m.deposits.push(now)
                  } else {
                    for (let i = 0; i < s.n; i++) {
                      if ((yield* budget.tryWithdraw) !== modelWithdraw(m, now)) return false
                    }
                  }
                }
                return true
              })
            )
        ),
        { numRuns: 150 }
      )
    )
  )
})

describe("the latency estimator", () => {
  it("its percentile is the nearest-rank percentile of the last 1,024 samples", () =>
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 5000, noNaN: true }), { minLength: 32, maxLength: 3000 }),
        fc.constantFrom(0.5, 0.9, 0.95, 0.99),
        (samples, quantile) => {
          const latencies = new Latencies(quantile)
          let last: number | undefined
          samples.forEach((s, i) => {
            latencies.record(s)
            // recomputed every 32 samples: compare right after a recomputation
            if ((i + 1) % 32 === 0) {
              const recent = samples.slice(Math.max(0, i + 1 - 1024), i + 1).sort((a, b) => a - b)
              last = recent[Math.min(recent.length - 1, Math.ceil(quantile * recent.length) - 1)]
              if (latencies.percentile !== last) throw new Error(`${latencies.percentile} !== ${last}`)
            }
          })
          return samples.length < 32 || latencies.percentile === last
        }
      ),
      { numRuns: 200 }
    ))
})
