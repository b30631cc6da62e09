/**
 * Metric series on Effect 3 (metricSeries.effect4.ts has the same names; metricSeries.ts is the
 * one caller of both). Effect 3 keeps every series in one global registry, finds a series' hook
 * by its key, and has no way to take a series out: `remove` reaches the registry's private map (a
 * `MutableHashMap` of keys to hooks). When that map is not what it was when this was written, a
 * series is still exported, only never removed; `internals().removable` says so, and a test pins
 * it, so an Effect upgrade that changes the map fails a test rather than leaking quietly.
 */
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import type * as MetricHook from "effect/MetricHook"
import * as MetricKey from "effect/MetricKey"
import type * as MetricKeyType from "effect/MetricKeyType"
import * as MetricLabel from "effect/MetricLabel"
import type * as MetricRegistry from "effect/MetricRegistry"
import * as MutableHashMap from "effect/MutableHashMap"
import * as Option from "effect/Option"
import type { Counter, Gauge, Histogram } from "./edition.effect3.js"
import type { CounterSpec, GaugeSpec, HistogramSpec, SeriesHandle } from "./metricSeries.js"

type UntypedKey = MetricKey.MetricKey<MetricKeyType.MetricKeyType.Untyped>

/** Where series go: Effect 3 has one registry, the global one. */
export type Registry = MetricRegistry.MetricRegistry

/** The registry of the fiber that runs it: on Effect 3 always the global one. */
export const currentRegistry: Effect.Effect<Registry> = Effect.sync(() => Metric.globalMetricRegistry)

/** The registry synchronous code records into. */
export const defaultRegistry = (): Registry => Metric.globalMetricRegistry

/** The key of each metric made here: a series' hook is found by its key and tags. */
const keys = new WeakMap<object, UntypedKey>()

const keyed = <M extends object>(key: MetricKey.MetricKey<any>, metric: M): M => {
  keys.set(metric, key as UntypedKey)
  return metric
}

export const counter = (spec: CounterSpec): Counter => {
  const key = MetricKey.counter(spec.name, { incremental: true, description: spec.description })
  return keyed(key, Metric.fromMetricKey(key))
}

export const gauge = (spec: GaugeSpec): Gauge => {
  const key = MetricKey.gauge(spec.name, { description: spec.description })
  return keyed(key, Metric.fromMetricKey(key))
}

export const histogram = (spec: HistogramSpec): Histogram => {
  const key = MetricKey.histogram(spec.name, MetricBoundaries.fromIterable(spec.boundaries), spec.description)
  return keyed(key, Metric.fromMetricKey(key))
}

/** The registry's private map, when it is the one this was written against. */
const mapOf = (registry: Registry): MutableHashMap.MutableHashMap<UntypedKey, unknown> | undefined => {
  const map: unknown = (registry as unknown as { readonly map?: unknown }).map
  return typeof map === "object" && map !== null && Symbol.for("effect/MutableHashMap") in map
    ? (map as MutableHashMap.MutableHashMap<UntypedKey, unknown>)
    : undefined
}

/** What this file relies on in Effect: whether a series can be taken out of the registry. */
export const internals = (): { readonly removable: boolean; readonly directUpdates: boolean } => ({
  removable: mapOf(Metric.globalMetricRegistry) !== undefined,
  // Effect 3 gives each series' hook to its caller: updates always go to it directly.
  directUpdates: true
})

const baseOf = (metric: object): UntypedKey => {
  const base = keys.get(metric)
  if (base === undefined)
    throw new Error("MetricSeries: the metric was not made by MetricSeries.counter, gauge or histogram")
  return base
}

/** A number per metric made here, for the owners' table. */
const ids = new WeakMap<object, number>()
let nextId = 0

/** The key of a series in the owners' table: its metric and attributes. */
export const keyOf = (
  metric: Counter | Gauge | Histogram,
  attributes: ReadonlyArray<readonly [string, string]>
): string => {
  baseOf(metric)
  let id = ids.get(metric)
  if (id === undefined) ids.set(metric, (id = nextId++))
  return JSON.stringify([id, attributes])
}

/** One series: its hook in the registry, and its key there (to take it out). */
class Series implements SeriesHandle {
  holders = 0
  /** The hook's own function (Effect 3's hooks are closures that never read `this`). */
  readonly update: (value: number) => void
  constructor(
    readonly key: string,
    private readonly registry: Registry,
    private readonly metricKey: UntypedKey,
    private readonly hook: MetricHook.MetricHook<number, unknown>
  ) {
    this.update = hook.update
  }
  remove(): void {
    const map = mapOf(this.registry)
    if (map === undefined) return
    // Only while it is this series' hook: a later series under the same key is another owner's.
    const found = MutableHashMap.get(map, this.metricKey)
    if (Option.isSome(found) && found.value === this.hook) MutableHashMap.remove(map, this.metricKey)
  }
}

/** One series of a metric made here (attributes in order: they are its tags), under `key` (from `keyOf`). */
export const series = (
  registry: Registry,
  metric: Counter | Gauge | Histogram,
  attributes: ReadonlyArray<readonly [string, string]>,
  key: string = keyOf(metric, attributes)
): SeriesHandle => {
  const metricKey = MetricKey.taggedWithLabels(
    baseOf(metric),
    attributes.map(([name, value]) => MetricLabel.make(name, value))
  )
  return new Series(key, registry, metricKey, registry.get(metricKey) as MetricHook.MetricHook<number, unknown>)
}

/**
 * Adds to one series of a counter from synchronous code, in the global registry; the series stays
 * there (for series of fixed labels). Make it once per series.
 */
export const counterSeries = (counter: Counter, attributes: Record<string, string>): ((by: number) => void) => {
  if (keys.has(counter)) return series(Metric.globalMetricRegistry, counter, Object.entries(attributes)).update
  // A counter made elsewhere: Metric caches its hook per tag array, made once, here.
  const tags = Object.entries(attributes).map(([key, value]) => MetricLabel.make(key, value))
  return (by) => counter.unsafeUpdate(by, tags)
}
