/**
 * The overload simulation (see simulation.ts, scenarios.ts): its headline figures, pinned. The
 * table in docs/limiter.md is the same runs (test/simulation-report.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { capacityChange, CHANGES, partitioned, settleSeconds, steady, type Subject } from "./scenarios.js"
import { DEPENDENCY } from "./simulation.js"

const base = DEPENDENCY.baseMillis

describe("overload simulation (capacity C = 10, base 100 ms, deadline 1 s)", () => {
  for (const subject of ["gradient2", "aimd"] as const satisfies ReadonlyArray<Subject>) {
    it(`${subject}: at 2x and 4x C, goodput >= 90% of C and p99 of admitted calls <= 2x base`, () => {
      for (const load of [2, 4]) {
        const w = steady(subject, load)
        expect(w.goodput, `goodput at ${load}x`).toBeGreaterThanOrEqual(0.9)
        expect(w.p99, `p99 at ${load}x`).toBeLessThanOrEqual(2 * base)
        expect(w.timeouts, `timeouts at ${load}x`).toBe(0)
      }
      // Under capacity nothing is shed.
      expect(steady(subject, 0.5).rejected).toBe(0)
    })

    it(`${subject}: settles within 10 s when C halves, and again when it recovers`, () => {
      const run = capacityChange(subject)
      expect(settleSeconds(run, CHANGES[0], CHANGES[1])).toBeLessThanOrEqual(10)
      expect(settleSeconds(run, CHANGES[1], 60)).toBeLessThanOrEqual(10)
      // The limit follows the capacity: about C' while it is halved, back up after.
      const halved = run.window(CHANGES[0] + 10, CHANGES[1])
      const recovered = run.window(CHANGES[1] + 10, 60)
      expect(halved.meanLimit).toBeLessThan(recovered.meanLimit * 0.75)
      expect(halved.meanLimit).toBeGreaterThanOrEqual(DEPENDENCY.capacity / 2)
    })
  }

  it("without a limiter the dependency collapses at 2x; a fixed limit of 4C keeps goodput at 4x base latency", () => {
    for (const load of [2, 4]) {
      const none = steady("no limiter", load)
      expect(none.goodput).toBeLessThan(0.05)
      expect(none.p99).toBe(DEPENDENCY.deadlineMillis)
      const fixed = steady("fixed 4C", load)
      expect(fixed.goodput).toBeGreaterThanOrEqual(0.9)
      expect(fixed.p99).toBeGreaterThanOrEqual(3.5 * base)
    }
  })

  it("partitions: at 4x overload the partition with share 0.7 keeps >= 70% of the admitted calls", () => {
    const shareOfA = (w: ReturnType<typeof partitioned>) => {
      const a = w.byPartition["a"] ?? 0
      return a / (a + (w.byPartition["b"] ?? 0))
    }
    for (const subject of ["gradient2", "aimd"] as const) {
      const w = partitioned(subject, { a: 0.7 })
      expect(shareOfA(w), subject).toBeGreaterThanOrEqual(0.7)
      expect(w.goodput, subject).toBeGreaterThanOrEqual(0.9)
      // When "b" has the other 0.3, the split is 70/30 up to whole slots (floor(0.7 x 16) = 11 of 16).
      const split = partitioned(subject, { a: 0.7, b: 0.3 })
      expect(shareOfA(split), subject).toBeGreaterThanOrEqual(0.66)
    }
    // Without partitions the flood takes its half.
    expect(shareOfA(partitioned("gradient2", {}))).toBeLessThan(0.55)
  })
})
