/**
 * The overload simulation's scenarios, shared by its test (which pins the headline figures) and
 * by `test/simulation-report.ts` (which writes the table and the chart in docs/limiter.md).
 */
import { Limit } from "@circuitry/limiter"
import { DEPENDENCY, type Dependency, simulate, type Window } from "./simulation.js"

/** Sampling windows as Netflix runs its limits in servers, short enough for a 100 ms dependency. */
const windowed = (limit: Limit.Limit) => Limit.windowed(limit, { minWindow: "100 millis", maxWindow: "1 second" })

export const SUBJECTS = {
  "no limiter": () => undefined,
  "fixed 4C": () => Limit.fixed(4 * DEPENDENCY.capacity),
  gradient2: () => windowed(Limit.gradient2({ initial: 10, min: 1, max: 200, queueSize: 2, rttTolerance: 1.2 })),
  aimd: () => windowed(Limit.aimd({ initial: 10, min: 1, max: 200, timeout: "150 millis" })),
  vegas: () => Limit.vegas({ initial: 10, min: 1, max: 200 })
} as const

export type Subject = keyof typeof SUBJECTS

export const LOADS = [0.5, 1, 2, 4] as const

/** Steady load: 10 s to settle, then 20 s measured. */
export const steady = (subject: Subject, load: number): Window =>
  simulate(SUBJECTS[subject](), [{ seconds: 30, load }]).window(10, 30)

/** 2x load throughout; the capacity halves at 20 s and recovers at 40 s. */
export const CHANGES = [20, 40] as const
export const capacityChange = (subject: Subject) =>
  simulate(SUBJECTS[subject](), [
    { seconds: 20, load: 2 },
    { seconds: 20, load: 2, capacity: 0.5 },
    { seconds: 20, load: 2 }
  ])

/**
 * Seconds after a change until the limiter has settled: from then until the next change (or the
 * end), every 2-second window has goodput >= 90% of the capacity and p99 <= 2x base.
 */
export const settleSeconds = (run: ReturnType<typeof capacityChange>, change: number, until: number): number => {
  for (let s = change; s + 2 <= until; s++) {
    let ok = true
    for (let t = s; t + 2 <= until && ok; t++) {
      const w = run.window(t, t + 2)
      ok = w.goodput >= 0.9 && w.p99 <= 2 * DEPENDENCY.baseMillis
    }
    if (ok) return s - change
  }
  return Infinity
}

/**
 * 4x overload from two kinds of callers sending half the calls each: "a" is guaranteed 0.7 of the
 * limit (as `shares` says), "b" gets what "a" leaves (or its own share, when `shares` gives one).
 */
export const partitioned = (subject: Subject, shares: Record<string, number>) =>
  simulate(SUBJECTS[subject](), [{ seconds: 30, load: 4 }], {
    partitioned: {
      shares,
      mix: [
        ["a", 0.5],
        ["b", 0.5]
      ]
    }
  }).window(10, 30)

/**
 * A faster dependency, for the limits as users take them (every parameter left to its default):
 * 20 calls at once in 20 ms (1,000 calls per second), slower in proportion beyond, callers that
 * give up at 200 ms. Netflix's defaults (min 20) are made for a capacity of about 20 and more.
 */
export const FAST: Dependency = { capacity: 20, baseMillis: 20, deadlineMillis: 200 }

export const DEFAULTS = {
  "aimd()": () => Limit.aimd(),
  "gradient2()": () => Limit.gradient2(),
  "vegas()": () => Limit.vegas(),
  "windowed(aimd())": () => Limit.windowed(Limit.aimd()),
  "windowed(gradient2())": () => Limit.windowed(Limit.gradient2()),
  "windowed(vegas())": () => Limit.windowed(Limit.vegas())
} as const

export type DefaultSubject = keyof typeof DEFAULTS

export const DEFAULT_LOADS = [2, 4] as const

/**
 * Steady load on FAST: 20 s, the last 15 s measured (a windowed limit, one update per second, has
 * gone through a whole cycle by then; the per-call ones, through dozens).
 */
export const withDefaults = (subject: DefaultSubject, load: number): Window =>
  simulate(DEFAULTS[subject](), [{ seconds: 20, load }], { dependency: FAST }).window(5, 20)
