/**
 * The limiter's metrics, through Effect's `Metric`. Each limiter (and partition, and outcome) finds
 * its metric hooks in the global registry once, on first use, and updates them directly: the
 * public `Metric` values below are built from the same keys, so they read the same series.
 */
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import type * as MetricHook from "effect/MetricHook"
import * as MetricKey from "effect/MetricKey"
import type * as MetricKeyType from "effect/MetricKeyType"
import * as MetricLabel from "effect/MetricLabel"

const limitKey = MetricKey.gauge("circuitry_limiter_limit", {
  description: "The current concurrency limit of a limiter"
})
const inFlightKey = MetricKey.gauge("circuitry_limiter_in_flight", {
  description: "Calls running through a limiter now"
})
const callsKey = MetricKey.counter("circuitry_limiter_calls_total", {
  incremental: true,
  description: "Calls through a limiter, by outcome: success, failure, dropped, rejected, interrupted"
})
const roundTripKey = MetricKey.histogram(
  "circuitry_limiter_rtt_millis",
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 16 }),
  "Round-trip times of calls through a limiter, in milliseconds"
)

/** @internal */
export const limitGauge = Metric.fromMetricKey(limitKey)
/** @internal */
export const inFlightGauge = Metric.fromMetricKey(inFlightKey)
/** @internal */
export const callsTotal = Metric.fromMetricKey(callsKey)
/** @internal */
export const roundTrip = Metric.fromMetricKey(roundTripKey)

export type Outcome = "success" | "failure" | "dropped" | "rejected" | "interrupted"

const outcomeLabels: Record<Outcome, MetricLabel.MetricLabel> = {
  success: MetricLabel.make("outcome", "success"),
  failure: MetricLabel.make("outcome", "failure"),
  dropped: MetricLabel.make("outcome", "dropped"),
  rejected: MetricLabel.make("outcome", "rejected"),
  interrupted: MetricLabel.make("outcome", "interrupted")
}

const hookOf = <Type extends MetricKeyType.MetricKeyType<any, any>>(
  key: MetricKey.MetricKey<Type>,
  tags: ReadonlyArray<MetricLabel.MetricLabel>
) => Metric.globalMetricRegistry.get(MetricKey.taggedWithLabels(key, tags))

/** The hooks of one limiter, or of one of its partitions. */
class Series {
  private inFlight: MetricHook.MetricHook<number, unknown> | undefined
  private rtt: MetricHook.MetricHook<number, unknown> | undefined
  /** The outcome of nearly every call, in a field of its own (a keyed lookup costs more). */
  private success: MetricHook.MetricHook<number, unknown> | undefined
  private readonly calls: Partial<Record<Outcome, MetricHook.MetricHook<number, unknown>>> = {}
  constructor(readonly tags: ReadonlyArray<MetricLabel.MetricLabel>) {}
  private counter(outcome: Outcome): MetricHook.MetricHook<number, unknown> {
    return (this.calls[outcome] ??= hookOf(callsKey, [...this.tags, outcomeLabels[outcome]]))
  }
  call(outcome: Outcome, rtt: number | undefined): void {
    ;(outcome === "success" ? (this.success ??= this.counter("success")) : this.counter(outcome)).update(1)
    if (rtt !== undefined) (this.rtt ??= hookOf(roundTripKey, this.tags)).update(rtt)
  }
  running(n: number): void {
    ;(this.inFlight ??= hookOf(inFlightKey, this.tags)).update(n)
  }
}

/** Built on first use, so that an idle limiter in a big registry costs no metric memory. */
export class LimiterMetrics {
  private own: Series | undefined
  private byPartition: Map<string, Series> | undefined
  constructor(readonly name: string) {}

  private series(partition: { readonly name: string } | undefined): Series {
    if (partition === undefined) return (this.own ??= new Series([MetricLabel.make("limiter", this.name)]))
    const map = (this.byPartition ??= new Map())
    let series = map.get(partition.name)
    if (series === undefined) {
      series = new Series([MetricLabel.make("limiter", this.name), MetricLabel.make("partition", partition.name)])
      map.set(partition.name, series)
    }
    return series
  }

  call(partition: { readonly name: string } | undefined, outcome: Outcome, rtt?: number): void {
    this.series(partition).call(outcome, rtt)
  }

  inFlight(partition: { readonly name: string; readonly busy: number } | undefined, running: number): void {
    this.series(undefined).running(running)
    if (partition !== undefined) this.series(partition).running(partition.busy)
  }

  limit(limit: number): void {
    hookOf(limitKey, this.series(undefined).tags).update(limit)
  }
}
