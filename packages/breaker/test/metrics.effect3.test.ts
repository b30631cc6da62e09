/**
 * Effect 3 only: this checks how src/internal/metrics.effect3.ts reaches into Effect 3's private
 * metric registry (its map of hooks, removable by key) and builds `MetricKey`s without Effect 3's
 * slow constructor. On Effect 4 the breaker's series are core's `MetricSeries` (metrics.effect4.ts),
 * whose reliance on Effect's internals packages/core/test/MetricSeries.test.ts pins. The behaviour
 * these internals serve (series released, bounded by maxBreakers) is tested on both majors in
 * metrics.test.ts.
 */
import { assert, describe, it } from "@circuitry/testkit"
import * as internalMetrics from "../src/internal/metrics.js"

describe("metrics", () => {
  it("the series are removable from Effect's registry and their keys are made without Effect's slow constructor", () => {
    assert.deepStrictEqual(internalMetrics.internals(), { removable: true, copiedKeys: true })
  })
})
