/**
 * Metric series on Effect 4 (metricSeries.effect3.ts has the same names; metricSeries.ts is the
 * one caller of both). Effect 4 keeps series in the `Metric.MetricRegistry` of the fiber's context
 * (a `Context.Reference`: one shared default unless a program provides its own), a public `Map`
 * from a series' key to its entry, and takes a series out with `Metric.removeUnsafe`.
 *
 * On the update path: each series is its own metric, made with its attributes
 * (`Metric.counter(name, { attributes })`: the same key, so the same registry entry, as
 * `Metric.withAttributes` on the shared metric), and updates go to its entry's hooks directly
 * while the registry still holds the entry it last found there. `withAttributes` instead adds the
 * attributes to the context on every update (a `Context.add` and three lookups) and, when the
 * attributes differ from the previous update's, works the key out again (`JSON.stringify`).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import type { Counter, Gauge, Histogram } from "./edition.effect4.js"
import type { CounterSpec, GaugeSpec, HistogramSpec, SeriesHandle } from "./metricSeries.js"

/** Where series go: a `Metric.MetricRegistry`. */
export type Registry = Metric.MetricRegistry

/** The registry of the fiber that runs it. */
export const currentRegistry: Effect.Effect<Registry> = Effect.withFiber((fiber) =>
  Effect.succeed(fiber.getRef(Metric.MetricRegistry))
)

const defaultMap: Registry = Context.get(Context.empty(), Metric.MetricRegistry)

/** The registry synchronous code records into: the default one, as Effect 3's global registry. */
export const defaultRegistry = (): Registry => defaultMap

type Attributes = Record<string, string>
type AnyMetric = Metric.Metric<number, unknown>

/** How each metric made here makes one of its series: the metric again, with the series' attributes. */
const makers = new WeakMap<object, (attributes: Attributes) => AnyMetric>()

const made = <M extends AnyMetric>(make: (attributes: Attributes | undefined) => M): M => {
  const metric = make(undefined)
  makers.set(metric, make)
  return metric
}

export const counter = (spec: CounterSpec): Counter =>
  made((attributes) => Metric.counter(spec.name, { incremental: true, description: spec.description, attributes }))

export const gauge = (spec: GaugeSpec): Gauge =>
  made((attributes) => Metric.gauge(spec.name, { description: spec.description, attributes }))

export const histogram = (spec: HistogramSpec): Histogram => {
  const boundaries = Metric.boundariesFromIterable(spec.boundaries)
  return made((attributes) => Metric.histogram(spec.name, { description: spec.description, boundaries, attributes }))
}

/** The context a series is updated in: its registry alone (made once per registry). */
const contexts = new WeakMap<Registry, Context.Context<never>>()

const contextOf = (registry: Registry): Context.Context<never> => {
  let context = contexts.get(registry)
  if (context === undefined) {
    context = Context.make(Metric.MetricRegistry, registry)
    contexts.set(registry, context)
  }
  return context
}

/**
 * The key Effect's registry keeps a series under (its type, name, description and attributes, as
 * Effect 4.1's `Metric` writes it). Effect does not export it: if a later Effect writes keys
 * otherwise, no entry is found under this one and every update takes `updateUnsafe` (slower, the
 * same); `internals().directUpdates` says so and a test pins it.
 */
const registryKey = (metric: AnyMetric, attributes: Attributes): string =>
  JSON.stringify([
    metric.type,
    metric.id,
    metric.description,
    Object.entries(attributes).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  ])

const probe = counter({ name: "circuitry_metric_series_probe", description: "" })

/** What this file relies on in Effect: whether updates find their entry under the key worked out here. */
export const internals = (): { readonly removable: boolean; readonly directUpdates: boolean } => {
  const attributes = { probe: "internals" }
  const metric = makers.get(probe)!(attributes)
  const own: Registry = new Map()
  metric.updateUnsafe(0, Context.make(Metric.MetricRegistry, own))
  return { removable: true, directUpdates: own.has(registryKey(metric, attributes)) }
}

const notMadeHere = "MetricSeries: the metric was not made by MetricSeries.counter, gauge or histogram"

const makerOf = (metric: object): ((attributes: Attributes) => AnyMetric) => {
  const make = makers.get(metric)
  if (make === undefined) throw new Error(notMadeHere)
  return make
}

/** The key of a series in the owners' table: its key in Effect's registry. */
export const keyOf = (metric: Counter | Gauge | Histogram, attributes: ReadonlyArray<readonly [string, string]>) => {
  makerOf(metric)
  return registryKey(metric as AnyMetric, Object.fromEntries(attributes))
}

/**
 * One series: what it needs to find its entry and to make its metric again, no more (a breaker or
 * a limiter holds a few per name). Its metric is made only when the entry must be made or removed.
 */
class Series implements SeriesHandle {
  holders = 0
  private entry: Metric.Metric.Metadata<number, unknown> | undefined = undefined
  constructor(
    readonly key: string,
    private readonly registry: Registry,
    private readonly context: Context.Context<never>,
    private readonly make: (attributes: Attributes) => AnyMetric,
    private readonly attributes: Attributes
  ) {}
  update(value: number): void {
    const entry = this.entry
    if (entry !== undefined && this.registry.get(this.key) === entry) {
      entry.hooks.update(value, this.context)
      return
    }
    this.make(this.attributes).updateUnsafe(value, this.context)
    this.entry = this.registry.get(this.key)
  }
  remove(): void {
    this.entry = undefined
    Metric.removeUnsafe(this.make(this.attributes), this.context)
  }
}

/** One series of `metric` (attributes in order), under `key` (from `keyOf`). */
export const series = (
  registry: Registry,
  metric: Counter | Gauge | Histogram,
  attributes: ReadonlyArray<readonly [string, string]>,
  key: string = keyOf(metric, attributes)
): SeriesHandle => new Series(key, registry, contextOf(registry), makerOf(metric), Object.fromEntries(attributes))

/**
 * Adds to one series of a counter from synchronous code, in the default registry; the series stays
 * there (for series of fixed labels). Make it once per series.
 */
export const counterSeries = (counter: Counter, attributes: Record<string, string>): ((by: number) => void) => {
  if (makers.has(counter)) {
    const one = series(defaultMap, counter, Object.entries(attributes))
    return (by) => one.update(by)
  }
  // A counter made elsewhere: through `withAttributes`, the slow way, the same series.
  const one = Metric.withAttributes(counter, attributes)
  const context = contextOf(defaultMap)
  return (by) => one.updateUnsafe(by, context)
}
