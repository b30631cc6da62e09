/**
 * The metric series of limiters and shedders on Effect 4 (metrics.effect3.ts has the same names;
 * metrics.ts is the one caller of both). Effect 4 keeps series in the `Metric.MetricRegistry` of
 * the fiber's context (a `Context.Reference`, one shared default unless a program provides its
 * own); a limiter records into the registry of the fiber that made it, and takes a series out with
 * `Metric.removeUnsafe`.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import type { CounterSpec, GaugeSpec, HistogramSpec, Series } from "./series.js"

/** Where series go: the metric registry of the fiber that made their owner. */
export type Registry = Metric.MetricRegistry

/** The registry of the fiber that runs it. */
export const currentRegistry: Effect.Effect<Registry> = Effect.withFiber((fiber) =>
  Effect.succeed(fiber.getRef(Metric.MetricRegistry))
)

/** A counter that only goes up (exported as a monotonic counter). */
export const counter = (spec: CounterSpec): Metric.Counter<number> =>
  Metric.counter(spec.name, { incremental: true, description: spec.description })

export const gauge = (spec: GaugeSpec): Metric.Gauge<number> =>
  Metric.gauge(spec.name, { description: spec.description })

export const histogram = (spec: HistogramSpec): Metric.Histogram<number> =>
  Metric.histogram(spec.name, {
    boundaries: Metric.exponentialBoundaries(spec.exponential),
    description: spec.description
  })

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

/** One series of a metric made here (attributes in order). */
export const series = (
  registry: Registry,
  metric: Metric.Metric<number, unknown>,
  attributes: ReadonlyArray<readonly [string, string]>
): Series => {
  const context = contextOf(registry)
  const one = Metric.withAttributes(metric, Object.fromEntries(attributes))
  return {
    update: (value) => one.updateUnsafe(value, context),
    remove: () => Metric.removeUnsafe(one, context)
  }
}
