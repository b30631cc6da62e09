/**
 * The breaker's metrics, through Effect's `Metric` (so `@effect/opentelemetry` exports them), held
 * by the breaker that records them and dropped when it is released.
 *
 * Why not `Metric.unsafeUpdate(value, tags)`: Effect's global registry keeps every series it has
 * seen forever (about 850 B per breaker name), so a registry with `maxBreakers` fed an unbounded
 * set of names grew without bound; and each update looked its series up by tags. Here each
 * breaker owns its series as small hook objects (state in plain fields, methods on prototypes),
 * puts them in Effect's registry when it first records (an idle breaker costs nothing), updates
 * them directly (no lookup on the call path) and takes them out of the registry when it is
 * released (evicted, or its scope closes). Effect's registry has no removal API: the one line that
 * reaches its private map is `registryMap`, and `test/metrics.test.ts` pins that eviction really
 * drops the series, so an Effect upgrade that changes it fails a test rather than leaking quietly.
 */
import * as Equal from "effect/Equal"
import * as Hash from "effect/Hash"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import type * as MetricHook from "effect/MetricHook"
import * as MetricKey from "effect/MetricKey"
import type * as MetricKeyType from "effect/MetricKeyType"
import * as MetricLabel from "effect/MetricLabel"
import * as MetricState from "effect/MetricState"
import * as MutableHashMap from "effect/MutableHashMap"
import { pipeArguments } from "effect/Pipeable"
import type { StateTag, Transition } from "./machine.js"

// `incremental`: they only go up, so OpenTelemetry exports them as monotonic counters (Prometheus counters).
const callsKey = MetricKey.counter("circuitry_breaker_calls_total", {
  incremental: true,
  description: "Calls through a circuit breaker, by outcome: success, failure, rejected, repair"
})
const transitionsKey = MetricKey.counter("circuitry_breaker_transitions_total", {
  incremental: true,
  description: "State transitions of a circuit breaker"
})
const stateKey = MetricKey.gauge("circuitry_breaker_state", {
  description: "Current state of a circuit breaker: 0 closed, 1 open, 2 half-open, 3 isolated"
})
/** Seconds, from 1 ms to 30 s: a dependency's fast answers and its timeouts both land in a bucket. */
const DURATION_BOUNDARIES = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
const durationKey = MetricKey.histogram(
  "circuitry_breaker_call_duration_seconds",
  MetricBoundaries.fromIterable(DURATION_BOUNDARIES),
  "Duration of the calls a closed circuit breaker ran, in seconds (success or failure)"
)
/** The boundaries as Effect keeps them: sorted, with +Infinity last (the overflow bucket). */
const BOUNDS: ReadonlyArray<number> = durationKey.keyType.boundaries.values

/** @internal */
export const callsTotal = Metric.fromMetricKey(callsKey)
/** @internal */
export const transitionsTotal = Metric.fromMetricKey(transitionsKey)
/** @internal */
export const stateGauge = Metric.fromMetricKey(stateKey)
/** @internal */
export const callDuration = Metric.fromMetricKey(durationKey)

type UntypedKey = MetricKey.MetricKey<MetricKeyType.MetricKeyType.Untyped>
type Root = MetricHook.MetricHook.Root

/**
 * Effect's global registry's map of series. It is private to Effect (there is no removal API);
 * when it is not what we expect, series are still exported, only never removed.
 */
const registryMap = ((): MutableHashMap.MutableHashMap<UntypedKey, Root> | undefined => {
  const map: unknown = (Metric.globalMetricRegistry as unknown as { readonly map?: unknown }).map
  return typeof map === "object" && map !== null && Symbol.for("effect/MutableHashMap") in map
    ? (map as MutableHashMap.MutableHashMap<UntypedKey, Root>)
    : undefined
})()

/**
 * Makes the keys of one metric, which differ only by their tags. Effect's `MetricKey` constructor
 * hashes `name + description`, formatting the description `Option` each time (about 1 µs a key,
 * most of a breaker's first call): here that part of the hash is computed once per metric, and a
 * key is a copy of the metric's key (same prototype and fields) with its tags and their hash.
 * Checked against Effect's own key at load; if they ever differ, Effect makes the keys.
 */
const keysOf = (base: UntypedKey): ((tags: ReadonlyArray<MetricLabel.MetricLabel>) => UntypedKey) => {
  const head = Hash.combine(Hash.hash(base.keyType))(Hash.string(base.name + base.description))
  const copy = (tags: ReadonlyArray<MetricLabel.MetricLabel>): UntypedKey =>
    Object.assign(Object.create(Object.getPrototypeOf(base)), base, {
      tags,
      _hash: Hash.combine(Hash.array(tags))(head)
    })
  const probe = [MetricLabel.make("breaker", "probe"), MetricLabel.make("outcome", "probe")]
  const effects = MetricKey.taggedWithLabels(base, probe)
  const ours = copy(probe)
  return Hash.hash(ours) === Hash.hash(effects) && Equal.equals(ours, effects) && Equal.equals(effects, ours)
    ? copy
    : (tags) => MetricKey.taggedWithLabels(base, tags)
}

/** What the fast paths found at load (a test pins both, so an Effect upgrade that breaks one is seen). @internal */
export const internals = (): { readonly removable: boolean; readonly copiedKeys: boolean } => ({
  removable: registryMap !== undefined,
  copiedKeys: callsKeys.name === "copy" && durationKeys.name === "copy"
})

type KeyMaker = (tags: ReadonlyArray<MetricLabel.MetricLabel>) => UntypedKey
const callsKeys = keysOf(callsKey as UntypedKey)
const transitionsKeys = keysOf(transitionsKey as UntypedKey)
const stateKeys = keysOf(stateKey as UntypedKey)
const durationKeys = keysOf(durationKey as UntypedKey)

const HookTypeId = Symbol.for("effect/MetricHook")
const variance = { _In: (_: unknown) => _, _Out: (_: never) => _ }

/** A series' hook: what Effect's registry calls. Subclasses keep their state in plain fields. */
abstract class Series {
  declare readonly [HookTypeId]: typeof variance
  /** Live breakers that hold this series (two breakers may share a name). */
  holders = 0
  /** Its key in Effect's registry, once registered. */
  key: UntypedKey | undefined = undefined
  abstract get(): unknown
  abstract update(input: number): void
  modify(input: number): void {
    this.update(input)
  }
  pipe() {
    return pipeArguments(this, arguments)
  }
}
Object.defineProperty(Series.prototype, HookTypeId, { value: variance })

class CounterSeries extends Series {
  count = 0
  get() {
    return MetricState.counter(this.count)
  }
  update(input: number): void {
    this.count += input
  }
}

class GaugeSeries extends Series {
  value = 0
  get() {
    return MetricState.gauge(this.value)
  }
  update(input: number): void {
    this.value = input
  }
}

class HistogramSeries extends Series {
  /** Calls per bucket (not cumulated); the last one is past 30 s. */
  readonly counts: Array<number> = BOUNDS.map(() => 0) // small integers: cheaper than a typed array
  count = 0
  sum = 0
  min = Number.MAX_VALUE
  max = Number.MIN_VALUE
  get() {
    let cumulated = 0
    const buckets = BOUNDS.map((boundary, i): readonly [number, number] => [boundary, (cumulated += this.counts[i]!)])
    return MetricState.histogram({ buckets, count: this.count, min: this.min, max: this.max, sum: this.sum })
  }
  update(seconds: number): void {
    let i = 0
    while (i < BOUNDS.length - 1 && seconds > BOUNDS[i]!) i++
    this.counts[i]!++
    this.count++
    this.sum += seconds
    if (seconds < this.min) this.min = seconds
    if (seconds > this.max) this.max = seconds
  }
}

/** Puts `series` in Effect's registry under `key`, or joins the one a live breaker of the same name holds. */
const register = <S extends Series>(key: UntypedKey, series: S): S => {
  series.key = key
  if (registryMap === undefined) {
    // Effect's registry is not what we know: let it make (and keep) the series.
    const hook = Metric.globalMetricRegistry.get(key) as unknown as Root
    return Object.assign(series, { update: (input: number) => hook.update(input) })
  }
  const existing = MutableHashMap.get(registryMap, key)
  if (existing._tag === "Some" && existing.value instanceof series.constructor) {
    const shared = existing.value as unknown as S
    shared.holders++
    return shared
  }
  // A hook Effect made for a read before this series existed holds nothing: ours replaces it.
  series.holders = 1
  MutableHashMap.set(registryMap, key, series as unknown as Root)
  return series
}

const unregister = (series: Series | undefined): void => {
  const key = series?.key
  // Only its holders ever put this series under its key, so the last one takes it out.
  if (registryMap !== undefined && key !== undefined && --series!.holders === 0) MutableHashMap.remove(registryMap, key)
}

const stateNumber: Record<StateTag, number> = { Closed: 0, Open: 1, HalfOpen: 2, Isolated: 3 }
const outcomeLabels = {
  success: MetricLabel.make("outcome", "success"),
  failure: MetricLabel.make("outcome", "failure"),
  rejected: MetricLabel.make("outcome", "rejected"),
  repair: MetricLabel.make("outcome", "repair")
}

/** @internal */
export type CallOutcome = keyof typeof outcomeLabels

/**
 * One breaker's series, each made and registered on first use (a breaker that is never called
 * holds none), and each taken out of Effect's registry by `release`.
 *
 * @internal
 */
export class BreakerMetrics {
  private label: MetricLabel.MetricLabel | undefined
  private success: CounterSeries | undefined
  private failure: CounterSeries | undefined
  private others: Partial<Record<string, Series>> | undefined
  private duration: HistogramSeries | undefined
  private released = false
  constructor(readonly name: string) {}

  private series<S extends Series>(keys: KeyMaker, labels: ReadonlyArray<MetricLabel.MetricLabel>, series: S): S {
    if (this.released) return series // a breaker used after its release records nowhere
    return register(keys([(this.label ??= MetricLabel.make("breaker", this.name)), ...labels]), series)
  }

  /** A call that ran while closed: its outcome and its duration. */
  ran(failure: boolean, durationMillis: number): void {
    this.call(failure ? "failure" : "success")
    ;(this.duration ??= this.series(durationKeys, [], new HistogramSeries())).update(durationMillis / 1000)
  }

  call(outcome: CallOutcome): void {
    switch (outcome) {
      case "success":
        ;(this.success ??= this.counter(outcome)).count++
        return
      case "failure":
        ;(this.failure ??= this.counter(outcome)).count++
        return
      default:
        ;((this.others ??= {})[outcome] ??= this.counter(outcome)).update(1)
    }
  }

  private counter(outcome: CallOutcome): CounterSeries {
    return this.series(callsKeys, [outcomeLabels[outcome]], new CounterSeries())
  }

  transition(t: Transition): void {
    const others = (this.others ??= {})
    const pair = `${t.from}>${t.to}`
    ;(
      (others[pair] ??= this.series(
        transitionsKeys,
        [MetricLabel.make("from", t.from), MetricLabel.make("to", t.to)],
        new CounterSeries()
      )) as CounterSeries
    ).count++
    ;((others.state ??= this.series(stateKeys, [], new GaugeSeries())) as GaugeSeries).value = stateNumber[t.to]
  }

  /** Takes this breaker's series out of Effect's registry (on eviction or scope close). Idempotent. */
  release(): void {
    if (this.released) return
    this.released = true
    unregister(this.success)
    unregister(this.failure)
    unregister(this.duration)
    if (this.others !== undefined) for (const series of Object.values(this.others)) unregister(series)
  }
}
