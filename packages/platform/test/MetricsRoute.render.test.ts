/**
 * `MetricsRoute.render` on what the major's registry holds (`MetricPair`s on Effect 3, `Metric.Snapshot`s
 * on 4), made by real metrics here and read back through the platform's `#metrics` pair: the rules
 * are one source in internal/metricsRoute.ts, so the page is the same text on both majors. Effect
 * 3's states that a metric cannot reach (a histogram built without +Inf) are pinned in
 * MetricsRoute.render.effect3.test.ts.
 */
import { assert, describe, histogram, it, summary, withAttributes } from "@circuitry/testkit"
import { MetricsRoute } from "@circuitry/platform"
import { read, snapshot } from "#metrics"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import { parse } from "./prometheus.js"

/** The registry's series whose names start with `prefix` (the registry is the process's on Effect 3). */
const seriesOf = (prefix: string) =>
  Effect.map(snapshot, (all) => [...all].filter((input) => read(input)?.name.startsWith(prefix) === true))

describe("MetricsRoute.render on the major's registry", () => {
  it.effect("a name shared by two kinds keeps the first and says what it left out; no series twice; NaN and +Inf", () =>
    Effect.gen(function* () {
      // The same series once sanitised ("render.shared" and "render_shared" are one name to Prometheus).
      yield* Metric.update(withAttributes(Metric.counter("render.shared", { incremental: true }), { k: "v" }), 1)
      yield* Metric.update(withAttributes(Metric.counter("render_shared", { incremental: true }), { k: "v" }), 9)
      yield* Metric.update(Metric.gauge("render_shared"), 5)
      // Effect 3 gives the histogram a +Inf bucket, Effect 4 the boundaries it was given: one page.
      const noInf = withAttributes(histogram("render_no_inf", [1]), { le: "mine" })
      for (const value of [0, 1, 2]) yield* Metric.update(noInf, value)
      // A summary that has seen nothing: its quantile has no value.
      yield* Metric.value(
        summary("render_empty_summary", { maxAge: "1 minute", maxSize: 10, error: 0.01, quantiles: [0.5] })
      )
      yield* Metric.update(Metric.gauge("render_huge"), Infinity)

      const text = MetricsRoute.render(yield* seriesOf("render"))
      assert.strictEqual(
        text,
        [
          "# TYPE render_empty_summary summary",
          `render_empty_summary{quantile="0.5"} NaN`,
          "render_empty_summary_sum 0",
          "render_empty_summary_count 0",
          "# TYPE render_huge gauge",
          "render_huge +Inf",
          "# TYPE render_no_inf histogram",
          `render_no_inf_bucket{le="1"} 2`,
          `render_no_inf_bucket{le="+Inf"} 3`,
          "render_no_inf_sum 3",
          "render_no_inf_count 3",
          "# TYPE render_shared counter",
          "# render_shared: series of another metric type (gauge) left out",
          `render_shared{k="v"} 1`,
          ""
        ].join("\n")
      )
      parse(text)
      assert.strictEqual(MetricsRoute.render([]), "")
    })
  )
})
