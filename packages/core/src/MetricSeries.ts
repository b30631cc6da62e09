/**
 * Metric series that leave the registry with their owner. A breaker, a limiter or a retry budget
 * labels its series by its name; an app that makes them from an unbounded set of names (one per
 * tenant, per host) would grow the registry without bound if a series stayed there after its
 * owner was gone, as Effect's do. Here an {@link Owner} makes each of its series on first use (an
 * idle owner holds none), updates it from synchronous code with no lookup, and takes it out of
 * the registry on {@link Owner.release}. Two live owners of one name share their series: the last
 * one released takes it out.
 *
 * The metrics are Effect's own `Metric` values, so exporters (`@effect/opentelemetry`, a
 * Prometheus route) read them, and reading one through `Metric.value` with the same attributes
 * gives the series an owner updates. Make them with {@link counter}, {@link gauge} and
 * {@link histogram}, from a spec: on Effect 4 a counter's `incremental` flag is private, so the
 * series are made again from the spec. On Effect 3, taking a series out reaches the global
 * registry's private map ({@link internals} says whether it is what this was written against).
 *
 * @since 0.2.0
 */
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Major from "#metricSeries"
import type * as Edition from "./Edition.js"
import * as internal from "./internal/metricSeries.js"

/**
 * A counter's name and help text.
 *
 * @since 0.2.0
 * @category specs
 */
export type CounterSpec = internal.CounterSpec

/**
 * A gauge's name and help text.
 *
 * @since 0.2.0
 * @category specs
 */
export type GaugeSpec = internal.GaugeSpec

/**
 * A histogram's name, help text and bucket boundaries: the finite ones, in ascending order
 * (+Infinity, the overflow bucket, is added).
 *
 * @since 0.2.0
 * @category specs
 */
export type HistogramSpec = internal.HistogramSpec

/**
 * A counter that only goes up (exported as a monotonic counter), whose series an owner can hold.
 *
 * @since 0.2.0
 * @category metrics
 * @example
 * ```ts
 * import { MetricSeries } from "@circuitry/core"
 *
 * export const jobsTotal = MetricSeries.counter({ name: "app_jobs_total", description: "Jobs run, by queue" })
 * ```
 */
export const counter: (spec: CounterSpec) => Edition.Counter = Major.counter

/**
 * A gauge whose series an owner can hold.
 *
 * @since 0.2.0
 * @category metrics
 */
export const gauge: (spec: GaugeSpec) => Edition.Gauge = Major.gauge

/**
 * A histogram whose series an owner can hold.
 *
 * @since 0.2.0
 * @category metrics
 */
export const histogram: (spec: HistogramSpec) => Edition.Histogram = Major.histogram

/**
 * Exponential boundaries as Effect's `exponential` makes them: `count - 1` finite ones, `start`,
 * `start * factor`, and so on (the overflow bucket makes `count`).
 *
 * @since 0.2.0
 * @category specs
 */
export const exponentialBoundaries: (options: {
  readonly start: number
  readonly factor: number
  readonly count: number
}) => ReadonlyArray<number> = internal.exponentialBoundaries

/**
 * A metric registry: the global one on Effect 3, a `Metric.MetricRegistry` on Effect 4.
 *
 * @since 0.2.0
 * @category registries
 */
export type Registry = Major.Registry

/**
 * The registry of the fiber that runs it (on Effect 3 always the global one).
 *
 * @since 0.2.0
 * @category registries
 */
export const currentRegistry: Effect.Effect<Registry> = Major.currentRegistry

/**
 * An owner's handle on one series: `updater.update(value)` records a value (adds to a counter,
 * sets a gauge, observes in a histogram; a method: call it on the updater). Once its owner is released it records nowhere, so a call that ends
 * after its owner was dropped cannot bring a series back.
 *
 * @since 0.2.0
 * @category models
 */
export interface Updater {
  update(value: number): void
}

/**
 * The series of one owner, all released together.
 *
 * @since 0.2.0
 * @category models
 */
export interface Owner {
  /** The registry its series go to. */
  readonly registry: Registry
  /** Whether `release` has run. */
  readonly isReleased: boolean
  /**
   * The updater of the series of `metric` (made by this module) with these attributes, in this
   * order. Make it once per series and keep it: making it costs a lookup, updating does not.
   */
  readonly series: (
    metric: Edition.Counter | Edition.Gauge | Edition.Histogram,
    attributes: ReadonlyArray<readonly [string, string]>
  ) => Updater
  /** Takes out of the registry each of its series no other live owner holds. Idempotent. */
  readonly release: () => void
}

/**
 * An owner whose series go to `registry` (by default the one synchronous code records into: the
 * global registry on Effect 3, the default `Metric.MetricRegistry` on Effect 4). Release it when
 * the thing it records for is gone.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { MetricSeries } from "@circuitry/core"
 *
 * const jobsTotal = MetricSeries.counter({ name: "app_jobs_total", description: "Jobs run, by queue" })
 *
 * const owner = MetricSeries.make()
 * const jobs = owner.series(jobsTotal, [["queue", "emails"]])
 * jobs.update(1)
 * owner.release() // the series leaves the registry
 * ```
 */
export const make: (registry?: Registry) => Owner = internal.make

/**
 * An owner in the registry of the fiber that makes it, released when the scope closes.
 *
 * @since 0.2.0
 * @category constructors
 */
export const scoped: Effect.Effect<Owner, never, Scope.Scope> = internal.scoped

/**
 * How many series owners hold in a registry now (default: the one `make` uses): what a churn test
 * watches.
 *
 * @since 0.2.0
 * @category registries
 */
export const heldCount: (registry?: Registry) => number = internal.heldCount

/**
 * What this module relies on in Effect's internals: whether a series can be taken out of the
 * registry (Effect 3's private map is what it expects) and whether updates reach a series' entry
 * directly (Effect 4 writes the keys it expects). Both are true on the Effect versions circuitry
 * supports; a test pins them, so an Effect upgrade that breaks one fails it.
 *
 * @since 0.2.0
 * @category internals
 */
export const internals: () => { readonly removable: boolean; readonly directUpdates: boolean } = Major.internals
