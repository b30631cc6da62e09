/**
 * The metric registry as MetricsRoute reads it, on Effect 4: `Metric.snapshot`'s `Metric.Snapshot`s,
 * from the `MetricRegistry` of the fiber that reads it (see metrics.effect3.ts).
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import type { Reading } from "./metricsRoute.js"

/** One series of the registry as the major gives it (a `Metric.Snapshot` on Effect 4). @internal */
export type Input = Metric.Metric.Snapshot

/** Every series in the registry now. @internal */
export const snapshot: Effect.Effect<Iterable<Input>> = Metric.snapshot

/** A series in the one shape the rendering reads; `undefined` for a state it does not know. @internal */
export const read = (snapshot: Input): Reading | undefined => {
  const series = {
    name: snapshot.id,
    description: snapshot.description,
    tags: Object.entries(snapshot.attributes ?? {})
  }
  switch (snapshot.type) {
    case "Counter":
      return {
        ...series,
        state: { _tag: "Counter", incremental: snapshot.state.incremental, count: snapshot.state.count }
      }
    case "Gauge":
      return { ...series, state: { _tag: "Gauge", value: snapshot.state.value } }
    case "Histogram": {
      const { buckets, count, sum } = snapshot.state
      return { ...series, state: { _tag: "Histogram", buckets, count, sum } }
    }
    case "Summary": {
      const { quantiles, count, sum } = snapshot.state
      return { ...series, state: { _tag: "Summary", quantiles, count, sum } }
    }
    case "Frequency":
      return { ...series, state: { _tag: "Frequency", occurrences: snapshot.state.occurrences } }
    default:
      return undefined
  }
}
