/**
 * The metric registry as MetricsRoute reads it, on Effect 3: `Metric.snapshot`'s `MetricPair`s
 * (metrics.effect4.ts reads Effect 4's `Metric.Snapshot`s). Sources import it from "#metrics",
 * chosen and rewritten by the build as "#http" is; the rendering (metricsRoute.ts) is one source.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricKeyType from "effect/MetricKeyType"
import type * as MetricPair from "effect/MetricPair"
import * as MetricState from "effect/MetricState"
import * as Option from "effect/Option"
import type { Reading } from "./metricsRoute.js"

/** One series of the registry as the major gives it (a `MetricPair` on Effect 3). @internal */
export type Input = MetricPair.MetricPair.Untyped

/** Every series in the registry now. @internal */
export const snapshot: Effect.Effect<Iterable<Input>> = Metric.snapshot

/** A series in the one shape the rendering reads; `undefined` for a state it does not know. @internal */
export const read = (pair: Input): Reading | undefined => {
  const state: unknown = pair.metricState
  const keyType: unknown = pair.metricKey.keyType
  const series = {
    name: pair.metricKey.name,
    description: Option.getOrUndefined(pair.metricKey.description),
    tags: pair.metricKey.tags.map((tag) => [tag.key, tag.value] as const)
  }
  if (MetricState.isCounterState(state)) {
    const incremental = MetricKeyType.isCounterKey(keyType) && keyType.incremental
    return { ...series, state: { _tag: "Counter", incremental, count: state.count } }
  }
  if (MetricState.isGaugeState(state)) return { ...series, state: { _tag: "Gauge", value: state.value } }
  if (MetricState.isHistogramState(state)) {
    return { ...series, state: { _tag: "Histogram", buckets: state.buckets, count: state.count, sum: state.sum } }
  }
  if (MetricState.isSummaryState(state)) {
    const quantiles = state.quantiles.map(([q, value]) => [q, Option.getOrUndefined(value)] as const)
    return { ...series, state: { _tag: "Summary", quantiles, count: state.count, sum: state.sum } }
  }
  if (MetricState.isFrequencyState(state)) {
    return { ...series, state: { _tag: "Frequency", occurrences: state.occurrences } }
  }
  return undefined
}
