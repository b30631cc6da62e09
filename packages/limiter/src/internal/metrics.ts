/** The limiter's metrics, through Effect's `Metric`, with their tags built once per limiter and partition. */
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"

/** @internal */
export const limitGauge = Metric.gauge("circuitry_limiter_limit", {
  description: "The current concurrency limit of a limiter"
})
/** @internal */
export const inFlightGauge = Metric.gauge("circuitry_limiter_in_flight", {
  description: "Calls running through a limiter now"
})
/** @internal */
export const callsTotal = Metric.counter("circuitry_limiter_calls_total", {
  description: "Calls through a limiter, by outcome: success, failure, dropped, rejected, interrupted"
})
/** @internal */
export const roundTrip = Metric.histogram(
  "circuitry_limiter_rtt_millis",
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 16 }),
  "Round-trip times of calls through a limiter, in milliseconds"
)

export type Outcome = "success" | "failure" | "dropped" | "rejected" | "interrupted"

const outcomeLabels: Record<Outcome, MetricLabel.MetricLabel> = {
  success: MetricLabel.make("outcome", "success"),
  failure: MetricLabel.make("outcome", "failure"),
  dropped: MetricLabel.make("outcome", "dropped"),
  rejected: MetricLabel.make("outcome", "rejected"),
  interrupted: MetricLabel.make("outcome", "interrupted")
}

interface Tags {
  readonly base: ReadonlyArray<MetricLabel.MetricLabel>
  readonly calls: Partial<Record<Outcome, ReadonlyArray<MetricLabel.MetricLabel>>>
}

/** Built on first use, so that an idle limiter in a big registry costs no metric memory. */
export class LimiterMetrics {
  private own: Tags | undefined
  private byPartition: Map<string, Tags> | undefined
  constructor(readonly name: string) {}

  private tags(partition: { readonly name: string } | undefined): Tags {
    if (partition === undefined) return (this.own ??= { base: [MetricLabel.make("limiter", this.name)], calls: {} })
    const map = (this.byPartition ??= new Map())
    let tags = map.get(partition.name)
    if (tags === undefined) {
      tags = {
        base: [MetricLabel.make("limiter", this.name), MetricLabel.make("partition", partition.name)],
        calls: {}
      }
      map.set(partition.name, tags)
    }
    return tags
  }

  call(partition: { readonly name: string } | undefined, outcome: Outcome, rtt?: number): void {
    const tags = this.tags(partition)
    callsTotal.unsafeUpdate(1, (tags.calls[outcome] ??= [...tags.base, outcomeLabels[outcome]]))
    if (rtt !== undefined) roundTrip.unsafeUpdate(rtt, tags.base)
  }

  inFlight(partition: { readonly name: string; readonly busy: number } | undefined, running: number): void {
    inFlightGauge.unsafeUpdate(running, this.tags(undefined).base)
    if (partition !== undefined) inFlightGauge.unsafeUpdate(partition.busy, this.tags(partition).base)
  }

  limit(limit: number): void {
    limitGauge.unsafeUpdate(limit, this.tags(undefined).base)
  }
}
