/**
 * The limiter's metrics, through Effect's `Metric`. Each limiter owns a `MetricSeries.Owner`
 * (core's MetricSeries, made on the limiter's first update) in the registry of the fiber that made
 * it; each of its series (per partition, per outcome) is made on first use and updated with no
 * lookup. The public `Metric` values below are the same metrics, so they read the same series. A
 * limiter's series leave the registry when it is released: dropped by its `LimiterRegistry`, or
 * its scope closed.
 */
import * as MetricSeries from "@circuitry/core/MetricSeries"

const LIMIT = { name: "circuitry_limiter_limit", description: "The current concurrency limit of a limiter" }
const IN_FLIGHT = { name: "circuitry_limiter_in_flight", description: "Calls running through a limiter now" }
const CALLS = {
  name: "circuitry_limiter_calls_total",
  description: "Calls through a limiter, by outcome: success, failure, dropped, rejected, interrupted"
}
const ROUND_TRIP = {
  name: "circuitry_limiter_rtt_millis",
  description: "Round-trip times of calls through a limiter, in milliseconds",
  boundaries: MetricSeries.exponentialBoundaries({ start: 1, factor: 2, count: 16 })
}

/** @internal */
export const limitGauge = MetricSeries.gauge(LIMIT)
/** @internal */
export const inFlightGauge = MetricSeries.gauge(IN_FLIGHT)
/** @internal */
export const callsTotal = MetricSeries.counter(CALLS)
/** @internal */
export const roundTrip = MetricSeries.histogram(ROUND_TRIP)

export type Outcome = "success" | "failure" | "dropped" | "rejected" | "interrupted"

/** The series of one limiter, or of one of its partitions. */
class Tagged {
  private inFlight: MetricSeries.Updater | undefined
  private rtt: MetricSeries.Updater | undefined
  /** The outcome of nearly every call, in a field of its own (a keyed lookup costs more). */
  private success: MetricSeries.Updater | undefined
  private readonly calls: Partial<Record<Outcome, MetricSeries.Updater>> = {}
  constructor(
    private readonly owner: MetricSeries.Owner,
    readonly attributes: ReadonlyArray<readonly [string, string]>
  ) {}
  private counter(outcome: Outcome): MetricSeries.Updater {
    return (this.calls[outcome] ??= this.owner.series(callsTotal, [...this.attributes, ["outcome", outcome]]))
  }
  call(outcome: Outcome, rtt: number | undefined): void {
    ;(outcome === "success" ? (this.success ??= this.counter("success")) : this.counter(outcome)).update(1)
    if (rtt !== undefined) {
      ;(this.rtt ??= this.owner.series(roundTrip, this.attributes)).update(rtt)
    }
  }
  running(n: number): void {
    ;(this.inFlight ??= this.owner.series(inFlightGauge, this.attributes)).update(n)
  }
}

/** Built on first use, so that an idle limiter in a big registry costs no metric memory. */
export class LimiterMetrics {
  private owner: MetricSeries.Owner | undefined
  private released = false
  private own: Tagged | undefined
  private byPartition: Map<string, Tagged> | undefined
  private limitSeries: MetricSeries.Updater | undefined
  constructor(
    readonly name: string,
    private readonly registry: MetricSeries.Registry
  ) {}

  private ownerOf(): MetricSeries.Owner {
    if (this.owner === undefined) {
      this.owner = MetricSeries.make(this.registry)
      // Released before its first call: it records nowhere.
      if (this.released) this.owner.release()
    }
    return this.owner
  }

  private series(partition: { readonly name: string } | undefined): Tagged {
    if (partition === undefined) return (this.own ??= new Tagged(this.ownerOf(), [["limiter", this.name]]))
    const map = (this.byPartition ??= new Map())
    let series = map.get(partition.name)
    if (series === undefined) {
      series = new Tagged(this.ownerOf(), [
        ["limiter", this.name],
        ["partition", partition.name]
      ])
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
    ;(this.limitSeries ??= this.ownerOf().series(limitGauge, [["limiter", this.name]])).update(limit)
  }

  /** Takes this limiter's series out of the registry (those no live limiter of its name holds). */
  release(): void {
    this.released = true
    this.owner?.release()
  }
}
