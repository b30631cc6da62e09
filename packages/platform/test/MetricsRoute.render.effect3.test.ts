/**
 * Effect 3 only: \`MetricsRoute.render\` takes what Effect 3's metric registry holds, \`MetricPair\`s
 * built here from \`MetricKey\` and \`MetricState\`, modules Effect 4 does not have (its registry
 * holds \`Metric.Snapshot\`s). The rules this pins (a name shared by two kinds, sanitised names met
 * twice, a histogram without +Inf, an empty summary, an infinite gauge) are one source in
 * internal/metricsRoute.ts; the Effect 4 counterpart of this test comes with render's Effect 4 input.
 * The route's tests over HTTP, which read the registry on either major, are in MetricsRoute.test.ts.
 */
import { assert, describe, it } from "@circuitry/testkit"
import { MetricsRoute } from "@circuitry/platform"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricKey from "effect/MetricKey"
import * as MetricPair from "effect/MetricPair"
import * as MetricState from "effect/MetricState"
import * as Option from "effect/Option"
import { parse } from "./prometheus.js"

describe("MetricsRoute.render", () => {
  it("render: a name shared by two kinds of metric keeps the first, says what it left out, and has no series twice", () => {
    const counter = MetricKey.counter("shared.name", { incremental: true })
    const gauge = MetricKey.gauge("shared_name")
    const pairs = [
      MetricPair.unsafeMake(MetricKey.tagged(counter, "k", "v"), MetricState.counter(1)),
      // The same series once sanitised ("shared.name" and "shared_name" are one name to Prometheus).
      MetricPair.unsafeMake(
        MetricKey.tagged(MetricKey.counter("shared_name", { incremental: true }), "k", "v"),
        MetricState.counter(9)
      ),
      MetricPair.unsafeMake(gauge, MetricState.gauge(5)),
      MetricPair.unsafeMake(
        MetricKey.histogram("no_inf", MetricBoundaries.fromIterable([1])).pipe(MetricKey.tagged("le", "mine")),
        MetricState.histogram({ buckets: [[1, 2]], count: 3, min: 0, max: 2, sum: 3 })
      ),
      MetricPair.unsafeMake(
        MetricKey.summary({ name: "empty_summary", maxAge: "1 minute", maxSize: 10, error: 0.01, quantiles: [0.5] }),
        MetricState.summary({ error: 0.01, quantiles: [[0.5, Option.none()]], count: 0, min: 0, max: 0, sum: 0 })
      ),
      MetricPair.unsafeMake(MetricKey.gauge("huge"), MetricState.gauge(Infinity))
    ]
    const text = MetricsRoute.render(pairs)
    assert.strictEqual(
      text,
      [
        "# TYPE empty_summary summary",
        `empty_summary{quantile="0.5"} NaN`,
        "empty_summary_sum 0",
        "empty_summary_count 0",
        "# TYPE huge gauge",
        "huge +Inf",
        "# TYPE no_inf histogram",
        `no_inf_bucket{le="1"} 2`,
        `no_inf_bucket{le="+Inf"} 3`,
        "no_inf_sum 3",
        "no_inf_count 3",
        "# TYPE shared_name counter",
        "# shared_name: series of another metric type (gauge) left out",
        `shared_name{k="v"} 1`,
        ""
      ].join("\n")
    )
    parse(text)
    assert.strictEqual(MetricsRoute.render([]), "")
  })
})
