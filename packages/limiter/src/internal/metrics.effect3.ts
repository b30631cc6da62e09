/**
 * The metric series of limiters and shedders on Effect 3 (metrics.effect4.ts has the same names;
 * metrics.ts is the one caller of both). Effect 3 keeps every series in one global registry, finds
 * a series' hook by its key, and has no way to take a series out: `remove` reaches the registry's
 * private map (a `MutableHashMap` of keys to hooks). When that map is not what it was when this was
 * written, a series is still exported, only never removed; the churn test in
 * test/metrics.test.ts fails then, rather than the registry leaking quietly.
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
import type { CounterSpec, GaugeSpec, HistogramSpec, Series } from "./series.js"

type UntypedKey = MetricKey.MetricKey<MetricKeyType.MetricKeyType.Untyped>

/** Where series go: Effect 3 has one registry, the global one. */
export type Registry = MetricRegistry.MetricRegistry

/** The registry of the fiber that runs it: on Effect 3 always the global one. */
export const currentRegistry: Effect.Effect<Registry> = Effect.sync(() => Metric.globalMetricRegistry)

/** The key of each metric made here: a series' hook is found by its key and tags. */
const keys = new WeakMap<object, UntypedKey>()

const keyed = <M extends object>(key: MetricKey.MetricKey<any>, metric: M): M => {
  keys.set(metric, key as UntypedKey)
  return metric
}

/** A counter that only goes up (exported as a monotonic counter). */
export const counter = (spec: CounterSpec): Metric.Metric.Counter<number> => {
  const key = MetricKey.counter(spec.name, { incremental: true, description: spec.description })
  return keyed(key, Metric.fromMetricKey(key))
}

export const gauge = (spec: GaugeSpec): Metric.Metric.Gauge<number> => {
  const key = MetricKey.gauge(spec.name, { description: spec.description })
  return keyed(key, Metric.fromMetricKey(key))
}

export const histogram = (spec: HistogramSpec): Metric.Metric.Histogram<number> => {
  const key = MetricKey.histogram(spec.name, MetricBoundaries.exponential(spec.exponential), spec.description)
  return keyed(key, Metric.fromMetricKey(key))
}

/** The registry's private map, when it is the one this was written against. */
const mapOf = (registry: Registry): MutableHashMap.MutableHashMap<UntypedKey, unknown> | undefined => {
  const map: unknown = (registry as unknown as { readonly map?: unknown }).map
  return typeof map === "object" && map !== null && Symbol.for("effect/MutableHashMap") in map
    ? (map as MutableHashMap.MutableHashMap<UntypedKey, unknown>)
    : undefined
}

/** One series of a metric made here (attributes in order: they are its tags). */
export const series = (
  registry: Registry,
  metric: object,
  attributes: ReadonlyArray<readonly [string, string]>
): Series => {
  const key = MetricKey.taggedWithLabels(
    keys.get(metric)!,
    attributes.map(([name, value]) => MetricLabel.make(name, value))
  )
  const hook = registry.get(key) as MetricHook.MetricHook<number, unknown>
  return {
    // The hook's own function (Effect 3's hooks are closures that never read `this`): a wrapper
    // would be one more call on every update.
    update: hook.update,
    remove: () => {
      const map = mapOf(registry)
      if (map === undefined) return
      // Only while it is this series' hook: a later series under the same key is another owner's.
      const found = MutableHashMap.get(map, key)
      if (Option.isSome(found) && found.value === hook) MutableHashMap.remove(map, key)
    }
  }
}
