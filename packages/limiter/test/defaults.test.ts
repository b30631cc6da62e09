/**
 * The adaptive limits with every parameter left to its default, in the overload simulation (see
 * scenarios.ts: FAST, 20 calls at once in 20 ms, callers' deadline 200 ms) at 2x and 4x the
 * capacity. The table in docs/limiter.md is the same runs (test/simulation-report.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { DEFAULT_LOADS, DEFAULTS, FAST, withDefaults, type DefaultSubject } from "./scenarios.js"

// Virtual time: a run's wall time is only its CPU time, which a busy shared machine stretches.
const TIMEOUT = 120_000

describe("overload simulation, the defaults (capacity C = 20, base 20 ms, deadline 200 ms)", () => {
  for (const subject of Object.keys(DEFAULTS) as ReadonlyArray<DefaultSubject>) {
    for (const load of DEFAULT_LOADS) {
      it(
        `${subject} at ${load}x C: goodput >= 90% of C, p99 of admitted calls <= 2x base, no timeout`,
        () => {
          const w = withDefaults(subject, load)
          expect(w.goodput, "goodput").toBeGreaterThanOrEqual(0.9)
          expect(w.p99 / FAST.baseMillis, "p99 / base").toBeLessThanOrEqual(2)
          expect(w.timeouts, "timeouts").toBe(0)
        },
        TIMEOUT
      )
    }
  }
})
