/**
 * The breaker's metrics on Effect 4, held by the breaker that records them and dropped when it is
 * released: core's `MetricSeries` (the metrics are Effect's own `Metric`s, so
 * `@effect/opentelemetry` exports them).
 *
 * Each breaker's series are its metrics with its `breaker` attribute (and an outcome, or a
 * transition's `from` and `to`), made on first use by the breaker's `MetricSeries.Owner` in the
 * default `Metric.MetricRegistry` (an idle breaker holds no owner and no series), and taken out of
 * the registry by `release` (evicted, or its scope closed): a registry fed an unbounded set of
 * names keeps at most `maxBreakers` breakers' series. Two breakers of one name share their series:
 * the last of them to be released takes them out (`MetricSeries` counts the holders).
 *
 * On the call path (two updates per closed call): the closed path's updaters are fields, made on
 * first use, so a call costs two `update`s and no lookup (`MetricSeries` updates a series through
 * its registry entry's hooks directly, not through `Metric.withAttributes`).
 *
 * Against this file's previous version (its own series class, the same technique), from
 * packages/bench, alternating (`src/child.ts in-fiber`, `memory circuitry-consecutive-used` on
 * Effect 4's loader): the closed call the same (1.67x the floor guard, 4 runs each); an idle
 * breaker 903 B against 1087 B; a used one 4592 B against 3576 B (`MetricSeries`'s bookkeeping:
 * about 500 B a series over Effect's entry); churn 66.5 B kept per name fed against 57.2 B. Core's
 * series then became one object each, without closures: `pnpm bench` (docs/benchmarks.md) now has
 * 3,692 B for a used breaker.
 */
import * as MetricSeries from "@circuitry/core/MetricSeries"
import type { Transition } from "./machine.js"
import * as Specs from "./metricSpecs.js"

/** @internal */
export const callsTotal = MetricSeries.counter(Specs.calls)
/** @internal */
export const transitionsTotal = MetricSeries.counter(Specs.transitions)
/** @internal */
export const stateGauge = MetricSeries.gauge(Specs.state)
/** @internal */
export const storeReachable = MetricSeries.gauge(Specs.reachable)
/** @internal */
export const callDuration = MetricSeries.histogram(Specs.duration)

/** @internal */
export type CallOutcome = Specs.CallOutcome

type Metric = Parameters<MetricSeries.Owner["series"]>[0]

/** The owner of a breaker released before it recorded anything: its series record nowhere. */
const releasedOwner = MetricSeries.make()
releasedOwner.release()

/**
 * One breaker's series, each made on first use by its owner (a breaker that is never called holds
 * neither), and each taken out of the registry by `release`.
 *
 * @internal
 */
export class BreakerMetrics {
  private owner: MetricSeries.Owner | undefined
  // The series of every call (`ran`) and of a rejection, once made: no lookup on those paths.
  private successes: MetricSeries.Updater | undefined
  private failures: MetricSeries.Updater | undefined
  private rejections: MetricSeries.Updater | undefined
  private durations: MetricSeries.Updater | undefined
  /** The other series (repairs, transitions, the gauges), by id. */
  private others: Map<string, MetricSeries.Updater> | undefined
  constructor(readonly name: string) {}

  /** The series of `metric` with the breaker's attribute, then `more` (after `release`, one that records nowhere). */
  private series(metric: Metric, ...more: Array<readonly [string, string]>): MetricSeries.Updater {
    return (this.owner ??= MetricSeries.make()).series(metric, [["breaker", this.name], ...more])
  }

  private other(id: string, make: () => MetricSeries.Updater): MetricSeries.Updater {
    const others = (this.others ??= new Map())
    let updater = others.get(id)
    if (updater === undefined) others.set(id, (updater = make()))
    return updater
  }

  private calls(outcome: CallOutcome): MetricSeries.Updater {
    return this.series(callsTotal, ["outcome", outcome])
  }

  /** A call that ran while closed: its outcome and its duration. */
  ran(failure: boolean, durationMillis: number): void {
    ;(failure ? (this.failures ??= this.calls("failure")) : (this.successes ??= this.calls("success"))).update(1)
    ;(this.durations ??= this.series(callDuration)).update(durationMillis / 1000)
  }

  call(outcome: CallOutcome): void {
    switch (outcome) {
      case "success":
        return (this.successes ??= this.calls(outcome)).update(1)
      case "failure":
        return (this.failures ??= this.calls(outcome)).update(1)
      case "rejected":
        return (this.rejections ??= this.calls(outcome)).update(1)
      default:
        return this.other(outcome, () => this.calls(outcome)).update(1)
    }
  }

  transition(t: Transition): void {
    this.other(`${t.from}>${t.to}`, () => this.series(transitionsTotal, ["from", t.from], ["to", t.to])).update(1)
    this.other("state", () => this.series(stateGauge)).update(Specs.stateNumber[t.to])
  }

  /** Whether the breaker's shared store answered its last request (a breaker with a store holds this gauge). */
  reachable(connected: boolean): void {
    this.other("reachable", () => this.series(storeReachable)).update(connected ? 1 : 0)
  }

  /**
   * Takes this breaker's series out of the registry (on eviction or scope close): the updaters it
   * made record nowhere after it, and so do those it makes later. Idempotent.
   */
  release(): void {
    if (this.owner === undefined) this.owner = releasedOwner
    else this.owner.release()
  }
}
