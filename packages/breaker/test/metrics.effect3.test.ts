/**
 * Effect 3 only: this checks how src/internal/metrics.ts reaches into Effect 3's private metric
 * registry (its map of hooks, removable by key) and builds `MetricKey`s without Effect 3's slow
 * constructor. Effect 4 has no such internals to reach: its `Metric.MetricRegistry` is a public
 * `Map` with `removeUnsafe`, so its edition of the module has nothing of this kind to check. The
 * behaviour these internals serve (series released, bounded by maxBreakers) is tested on both
 * majors in metrics.test.ts.
 */
import { assert, describe, it } from "@circuitry/testkit"
import * as internalMetrics from "../src/internal/metrics.js"

describe("metrics", () => {
  it("the series are removable from Effect's registry and their keys are made without Effect's slow constructor", () => {
    assert.deepStrictEqual(internalMetrics.internals(), { removable: true, copiedKeys: true })
  })
})
