/**
 * The sizing of `pnpm bench`'s time limits (src/limits.ts, issue 24), fed numbers: nothing here is
 * timed.
 */
import { assert, describe, it } from "@effect/vitest"
import { calibration, calibrationText, limitFor, limits, limitsText, QUIET_MILLIS } from "../src/limits.js"

describe("time limits", () => {
  it("the calibration is the median of the workload's timings, as a ratio to the quiet machine's", () => {
    // One slow turn of the machine (400 ms) does not move it.
    const c = calibration([52, 400, 48, 55, 50], 50)
    assert.deepStrictEqual(c, { samples: [52, 400, 48, 55, 50], millis: 52, quietMillis: 50, ratio: 1.04 })
    assert.strictEqual(calibration([100]).quietMillis, QUIET_MILLIS)
  })

  it("scales each limit by the ratio on a loaded machine", () => {
    // The workload took 7 times its quiet time (load 13 on 2 cores): 150 s becomes 1,050 s.
    assert.strictEqual(limitFor(150_000, calibration([350], 50)), 1_050_000)
    assert.strictEqual(limitFor(120_000, calibration([350], 50)), 840_000)
    // A fraction of a millisecond rounds up.
    assert.strictEqual(limitFor(1_000, calibration([50.0004], 50)), 1_001)
  })

  it("never goes below the quiet machine's limit: a quiet or faster machine keeps it", () => {
    assert.strictEqual(limitFor(150_000, calibration([50], 50)), 150_000)
    assert.strictEqual(limitFor(150_000, calibration([20], 50)), 150_000)
  })

  it("sizes every kind, and says what it measured and decided", () => {
    const c = calibration([151.2, 148.9, 150, 149.6, 152.3], 50)
    const sized = limits(
      {
        timed: { what: "each timed group", quietMillis: 150_000 },
        memory: { what: "each memory group", quietMillis: 120_000 }
      },
      c
    )
    assert.deepStrictEqual(sized, {
      timed: { what: "each timed group", quietMillis: 150_000, millis: 450_000 },
      memory: { what: "each memory group", quietMillis: 120_000, millis: 360_000 }
    })
    assert.strictEqual(
      calibrationText(c),
      "a fixed CPU workload took 150 ms (median of 151, 149, 150, 150, 152 ms) against 50 ms on a quiet machine: 3.00x"
    )
    assert.strictEqual(
      limitsText(Object.values(sized)),
      "each timed group 450 s (150 s on a quiet machine); each memory group 360 s (120 s on a quiet machine)"
    )
  })
})
