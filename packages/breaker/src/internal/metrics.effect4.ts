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
 *
 * On the call path (two updates per closed call): each series is its own metric, made with its
 * attributes (`Metric.counter(name, { attributes })`: the same series key, so the same registry
 * entry, as `Metric.withAttributes` on the exported metric), updated in one context holding the
 * registry. `withAttributes` instead adds the attributes to the context on every update (a
 * `Context.add` and three lookups), and the metric it wraps, shared by every breaker, computes its
 * series key again (`JSON.stringify`) whenever the attributes differ from its previous update's.
 * The closed path's series are kept in fields (no lookup by id, no attributes built per call).
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
// +Infinity last, as Effect 3 keeps a histogram's boundaries: the overflow bucket is reported too.
const boundaries = [...Specs.duration.boundaries, Infinity]
/** @internal */
export const callDuration = Metric.histogram(Specs.duration.name, {
  description: Specs.duration.description,
  boundaries
})

type Attributes = Record<string, string>
/** One series' own metric: one of the above, made with the series' attributes. */
type Make = (attributes: Attributes) => Metric.Metric<number, unknown>
const callsOf: Make = (attributes) =>
  Metric.counter(Specs.calls.name, { incremental: true, description: Specs.calls.description, attributes })
const transitions: Make = (attributes) =>
  Metric.counter(Specs.transitions.name, { incremental: true, description: Specs.transitions.description, attributes })
const state: Make = (attributes) => Metric.gauge(Specs.state.name, { description: Specs.state.description, attributes })
const reachable: Make = (attributes) =>
  Metric.gauge(Specs.reachable.name, { description: Specs.reachable.description, attributes })
const duration: Make = (attributes) =>
  Metric.histogram(Specs.duration.name, { description: Specs.duration.description, boundaries, attributes })

/** The default registry, as Effect 3's global one: metrics updated from synchronous code go there. */
const registryMap: Metric.MetricRegistry = Context.get(Context.empty(), Metric.MetricRegistry)
const registry = Context.make(Metric.MetricRegistry, registryMap)

/**
 * The key Effect's registry keeps a series under (its type, name, description and attributes, as
 * Effect 4.1's `Metric` writes it). Effect does not export it: if a later Effect writes keys
 * otherwise, no entry is found under this one and every update takes `updateUnsafe` (slower, the same).
 */
const registryKey = (metric: Metric.Metric<number, unknown>, attributes: Attributes): string =>
  JSON.stringify([
    metric.type,
    metric.id,
    metric.description,
    Object.entries(attributes).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  ])

/**
 * Whether a series finds its entry in Effect's registry under the key it works out (so its updates
 * go to the entry's hooks directly): checked by test/metrics.effect4.test.ts, so that an Effect
 * that writes keys otherwise fails a test rather than slowing every call quietly.
 *
 * @internal
 */
export const internals = (): { readonly directUpdates: boolean } => {
  const attributes = { breaker: "internals-probe" }
  const metric = callsOf(attributes)
  const own = new Map<string, Metric.Metric.Metadata<any, any>>()
  metric.updateUnsafe(0, Context.make(Metric.MetricRegistry, own))
  return { directUpdates: own.has(registryKey(metric, attributes)) }
}

/** How many live breakers hold each series (by metric name and attributes). */
const holders = new Map<string, number>()

/**
 * One series: its metric with the breaker's attributes, and its key in the registry (its holders
 * are counted by it too).
 * An update goes to the series' hooks in the registry directly while the registry still holds the
 * entry this series last found there: what `updateUnsafe` does, without working out the key and
 * the registry from the context on every call. Otherwise (the first update, an entry removed or
 * replaced, keys Effect writes otherwise) it takes `updateUnsafe`, which makes the entry if need be.
 */
class Series {
  readonly key: string
  readonly metric: Metric.Metric<number, unknown>
  private entry: Metric.Metric.Metadata<number, unknown> | undefined
  constructor(make: Make, attributes: Attributes) {
    this.metric = make(attributes)
    this.key = registryKey(this.metric, attributes)
    holders.set(this.key, (holders.get(this.key) ?? 0) + 1)
  }
  update(input: number): void {
    const entry = this.entry
    if (entry !== undefined && registryMap.get(this.key) === entry) {
      entry.hooks.update(input, registry)
      return
    }
    this.metric.updateUnsafe(input, registry)
    this.entry = registryMap.get(this.key)
  }
  release(): void {
    this.entry = undefined
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
  // The series of every call (`ran`) and of a rejection, once made: no lookup by id on those paths.
  private successes: Series | undefined
  private failures: Series | undefined
  private rejections: Series | undefined
  private durations: Series | undefined
  constructor(readonly name: string) {}

  /** The series `id` of `make`, made with `attributes` on first use; none once released. */
  private of(id: string, make: Make, attributes?: Attributes): Series | undefined {
    if (this.released) return undefined // a breaker used after its release records nowhere
    let series = this.series.get(id)
    if (series === undefined) {
      series = new Series(make, { breaker: this.name, ...attributes })
      this.series.set(id, series)
    }
    return series
  }

  /** A call that ran while closed: its outcome and its duration. */
  ran(failure: boolean, durationMillis: number): void {
    this.calls(failure ? "failure" : "success")?.update(1)
    const durations = (this.durations ??= this.of("duration", duration))
    durations?.update(durationMillis / 1000)
  }

  call(outcome: CallOutcome): void {
    this.calls(outcome)?.update(1)
  }

  private calls(outcome: CallOutcome): Series | undefined {
    switch (outcome) {
      case "success":
        return (this.successes ??= this.of(outcome, callsOf, { outcome }))
      case "failure":
        return (this.failures ??= this.of(outcome, callsOf, { outcome }))
      case "rejected":
        return (this.rejections ??= this.of(outcome, callsOf, { outcome }))
      default:
        return this.of(outcome, callsOf, { outcome })
    }
  }

  transition(t: Transition): void {
    this.of(`${t.from}>${t.to}`, transitions, { from: t.from, to: t.to })?.update(1)
    this.of("state", state)?.update(Specs.stateNumber[t.to])
  }

  /** Whether the breaker's shared store answered its last request (a breaker with a store holds this gauge). */
  reachable(connected: boolean): void {
    this.of("reachable", reachable)?.update(connected ? 1 : 0)
  }

  /** Takes this breaker's series out of the registry (on eviction or scope close). Idempotent. */
  release(): void {
    if (this.released) return
    this.released = true
    for (const series of this.series.values()) series.release()
    this.series.clear()
    this.successes = this.failures = this.rejections = this.durations = undefined
  }
}
