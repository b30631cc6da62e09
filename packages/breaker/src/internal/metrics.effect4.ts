/**
 * The breaker's metrics on Effect 4, through Effect's `Metric` (so `@effect/opentelemetry` exports
 * them), held by the breaker that records them and dropped when it is released.
 *
 * Each breaker's series are its metrics with its `breaker` attribute (and an outcome, or a
 * transition's `from` and `to`), made on first use (an idle breaker holds none), updated with
 * `updateUnsafe` in the default `Metric.MetricRegistry`, as Effect 3's global registry, and taken
 * out of it with `Metric.removeUnsafe` when the breaker is released (evicted, or its scope
 * closes): a registry fed an unbounded set of names keeps at most `maxBreakers` breakers' series.
 * Effect 4's registry is a public `Map`, so nothing here reaches into Effect's internals (the
 * Effect 3 file, metrics.effect3.ts, has to). Two breakers of one name share their series: the
 * last of them to be released takes them out.
 */
import * as Context from "effect/Context"
import * as Metric from "effect/Metric"
import type { Transition } from "./machine.js"
import * as Specs from "./metricSpecs.js"

/** @internal */
export const callsTotal = Metric.counter(Specs.calls.name, { incremental: true, description: Specs.calls.description })
/** @internal */
export const transitionsTotal = Metric.counter(Specs.transitions.name, {
  incremental: true,
  description: Specs.transitions.description
})
/** @internal */
export const stateGauge = Metric.gauge(Specs.state.name, { description: Specs.state.description })
/** @internal */
export const storeReachable = Metric.gauge(Specs.reachable.name, { description: Specs.reachable.description })
/** @internal */
export const callDuration = Metric.histogram(Specs.duration.name, {
  description: Specs.duration.description,
  // +Infinity last, as Effect 3 keeps a histogram's boundaries: the overflow bucket is reported too.
  boundaries: [...Specs.duration.boundaries, Infinity]
})

/** The default registry, as Effect 3's global one: metrics updated from synchronous code go there. */
const registry = Context.empty()

/** How many live breakers hold each series (by metric name and attributes). */
const holders = new Map<string, number>()

/** One series: its metric with the breaker's attributes, and the key its holders are counted by. */
class Series {
  readonly key: string
  constructor(
    readonly metric: Metric.Metric<number, unknown>,
    attributes: Record<string, string>
  ) {
    this.metric = Metric.withAttributes(metric, attributes)
    this.key = `${metric.id}\u0000${JSON.stringify(attributes)}`
    holders.set(this.key, (holders.get(this.key) ?? 0) + 1)
  }
  update(input: number): void {
    this.metric.updateUnsafe(input, registry)
  }
  release(): void {
    const left = (holders.get(this.key) ?? 1) - 1
    if (left > 0) {
      holders.set(this.key, left)
      return
    }
    holders.delete(this.key)
    Metric.removeUnsafe(this.metric, registry)
  }
}

/** @internal */
export type CallOutcome = Specs.CallOutcome

/**
 * One breaker's series, each made on first use (a breaker that is never called holds none), and
 * each taken out of the registry by `release`.
 *
 * @internal
 */
export class BreakerMetrics {
  private readonly series = new Map<string, Series>()
  private released = false
  constructor(readonly name: string) {}

  /** The series `id` of `metric`, made with `attributes` on first use; none once released. */
  private of(id: string, metric: Metric.Metric<number, unknown>, attributes: () => Record<string, string>) {
    if (this.released) return undefined // a breaker used after its release records nowhere
    let series = this.series.get(id)
    if (series === undefined) {
      series = new Series(metric, { breaker: this.name, ...attributes() })
      this.series.set(id, series)
    }
    return series
  }

  /** A call that ran while closed: its outcome and its duration. */
  ran(failure: boolean, durationMillis: number): void {
    this.call(failure ? "failure" : "success")
    this.of("duration", callDuration, () => ({}))?.update(durationMillis / 1000)
  }

  call(outcome: CallOutcome): void {
    this.of(outcome, callsTotal, () => ({ outcome }))?.update(1)
  }

  transition(t: Transition): void {
    this.of(`${t.from}>${t.to}`, transitionsTotal, () => ({ from: t.from, to: t.to }))?.update(1)
    this.of("state", stateGauge, () => ({}))?.update(Specs.stateNumber[t.to])
  }

  /** Whether the breaker's shared store answered its last request (a breaker with a store holds this gauge). */
  reachable(connected: boolean): void {
    this.of("reachable", storeReachable, () => ({}))?.update(connected ? 1 : 0)
  }

  /** Takes this breaker's series out of the registry (on eviction or scope close). Idempotent. */
  release(): void {
    if (this.released) return
    this.released = true
    for (const series of this.series.values()) series.release()
    this.series.clear()
  }
}
