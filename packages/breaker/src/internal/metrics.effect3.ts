/**
 * The breaker's metrics on Effect 3, through Effect's `Metric` (so `@effect/opentelemetry` exports
 * them), held by the breaker that records them and dropped when it is released.
 *
 * Why not `Metric.unsafeUpdate(value, tags)`: Effect's global registry keeps every series it has
 * seen forever (about 850 B per breaker name), so a registry with `maxBreakers` fed an unbounded
 * set of names grew without bound; and each update looked its series up by tags. Here each
 * breaker owns its series, each one small object that is both its key and its hook in Effect's
 * registry (state in plain fields, methods and the metric's name on prototypes), puts them in the
 * registry when it first records (an idle breaker costs nothing), updates them directly (no lookup
 * on the call path) and takes them out of the registry when it is released (evicted, or its scope
 * closes). Effect's registry has no removal API: `registryMap` is the one place that reaches its
 * private map (and that map's buckets), and `test/metrics.test.ts` pins that eviction really drops
 * the series, so an Effect upgrade that changes it fails a test rather than leaking quietly.
 *
 * Why not core's `MetricSeries`, as on Effect 4 (metrics.effect4.ts): on Effect 3 its series are
 * Effect's own hooks and keys, plus an owner's bookkeeping. Measured with that file in place of
 * this one (`#metrics`), alternating, from packages/bench: `NODE_OPTIONS=--conditions=@circuitry/source
 * node --expose-gc --import ./loader/register.mjs src/child.ts in-fiber` (6 runs each) and
 * `... src/child.ts memory circuitry-consecutive-used` (and `-rate-used`, `circuitry-churn`), at
 * load 5-10 on 2 cores: closed call 1.23x the floor guard against 1.12x here (+9%; `ran` alone,
 * in one process: 35 ns against 8 ns); a used breaker 4039 B against 1539 B (3190 B over an unused
 * breaker's 848 B against 691 B here; failureRate: 4255 B against 1755 B); churn 64.3 B kept per
 * name fed against 21.6 B. Past the bounds for adopting it (5% time, 25% memory): this file stays.
 * (Measured before core's series became one object each, without closures, which took about 300 B
 * off each series; Effect 3's own hook and key per series, most of the difference, remain.)
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
import type * as Option from "effect/Option"
import { pipeArguments } from "effect/Pipeable"
import type { StateTag, Transition } from "./machine.js"
import * as Specs from "./metricSpecs.js"

const counterKey = (spec: Specs.Spec) =>
  MetricKey.counter(spec.name, { incremental: true, description: spec.description })
const gaugeKey = (spec: Specs.Spec) => MetricKey.gauge(spec.name, { description: spec.description })
const callsKey = counterKey(Specs.calls)
const transitionsKey = counterKey(Specs.transitions)
const stateKey = gaugeKey(Specs.state)
const reachableKey = gaugeKey(Specs.reachable)
const durationKey = MetricKey.histogram(
  Specs.duration.name,
  MetricBoundaries.fromIterable(Specs.duration.boundaries),
  Specs.duration.description
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
/** @internal */
export const storeReachable = Metric.fromMetricKey(reachableKey)

type UntypedKey = MetricKey.MetricKey<MetricKeyType.MetricKeyType.Untyped>
type Root = MetricHook.MetricHook.Root

/** What Effect's `MutableHashMap` is made of: a `Map` from hash to the `[key, value]` entries with that hash. */
interface HashMapParts {
  readonly buckets: Map<number, Array<readonly [UntypedKey, Root]>>
  bucketsSize: number
}

/**
 * Effect's global registry's map of series, seen through its parts. It is private to Effect
 * (there is no removal API); when it is not what we expect, series are still exported, only
 * never removed. Series go in and out of its buckets directly: through `MutableHashMap`'s API
 * each first call and each release cost about 0.5 µs more (an `Option` per lookup, and an
 * equality check through a megamorphic `in` per step).
 */
const registryMap = ((): HashMapParts | undefined => {
  const map: unknown = (Metric.globalMetricRegistry as unknown as { readonly map?: unknown }).map
  return typeof map === "object" &&
    map !== null &&
    Symbol.for("effect/MutableHashMap") in map &&
    (map as Partial<HashMapParts>).buckets instanceof Map &&
    typeof (map as Partial<HashMapParts>).bucketsSize === "number"
    ? (map as HashMapParts)
    : undefined
})()

/**
 * A series is its own key in Effect's registry: one object per series, not a key and a hook.
 * Its prototype chain ends in Effect's `MetricKey` prototype (hash and equality, which read
 * `name`, `keyType`, `description` and `tags`); each metric's class puts the first three on its
 * prototype (shared by every series of that metric), so a series holds only its tags, their hash
 * and its state. Effect's `MetricKey` constructor also hashes `name + description`, formatting
 * the description `Option` each time (about 1 µs a key): here that part of the hash is computed
 * once per metric. `fastKeys` checks at load that a series equals Effect's own key for the same
 * tags (both ways, same hash); if an Effect upgrade breaks that, Effect makes the keys.
 */
const MetricKeyTypeId = Symbol.for("effect/MetricKey")
const HookTypeId = Symbol.for("effect/MetricHook")
const keyVariance = { _Type: (_: never) => _ }
const hookVariance = { _In: (_: unknown) => _, _Out: (_: never) => _ }

/** A series' hook (what Effect's registry calls) and, with its metric's prototype, its key. */
abstract class Series {
  declare readonly name: string
  declare readonly keyType: MetricKeyType.MetricKeyType.Untyped
  declare readonly description: Option.Option<string>
  /** The metric's key without tags (on the prototype). */
  declare readonly base: UntypedKey
  /** Live breakers that hold this series (two breakers may share a name). */
  holders = 0
  readonly _hash: number
  constructor(readonly tags: ReadonlyArray<MetricLabel.MetricLabel>) {
    this._hash = Hash.combine(Hash.array(tags))(this.head)
  }
  /** The hash of the metric's name, description and type (on the prototype). */
  declare readonly head: number
  abstract get(): unknown
  abstract update(input: number): void
  modify(input: number): void {
    this.update(input)
  }
  pipe() {
    return pipeArguments(this, arguments)
  }
}
Object.setPrototypeOf(Series.prototype, Object.getPrototypeOf(callsKey))
Object.defineProperty(Series.prototype, MetricKeyTypeId, { value: keyVariance })
Object.defineProperty(Series.prototype, HookTypeId, { value: hookVariance })

/** Puts a metric's key on the prototype of its series' class. */
const ofMetric = (series: abstract new (...args: Array<any>) => Series, key: MetricKey.MetricKey<any>): void => {
  const base = key as UntypedKey
  Object.defineProperties(series.prototype, {
    name: { value: base.name },
    keyType: { value: base.keyType },
    description: { value: base.description },
    base: { value: base },
    head: { value: Hash.combine(Hash.hash(base.keyType))(Hash.string(base.name + base.description)) }
  })
}

class CounterSeries extends Series {
  count = 0
  get() {
    return MetricState.counter(this.count)
  }
  update(input: number): void {
    this.count += input
  }
}
class CallsSeries extends CounterSeries {}
class TransitionsSeries extends CounterSeries {}

class GaugeSeries extends Series {
  value = 0
  get() {
    return MetricState.gauge(this.value)
  }
  update(input: number): void {
    this.value = input
  }
}
class StateSeries extends GaugeSeries {}
class ReachableSeries extends GaugeSeries {}

/** Bucket `i` holds the durations in (BOUNDS[i - 1], BOUNDS[i]] seconds; the last one is past 30 s. */
const bucketOf = (seconds: number): number => {
  let i = 0
  while (i < BOUNDS.length - 1 && seconds > BOUNDS[i]!) i++
  return i
}

class DurationSeries extends Series {
  count = 0
  // Milliseconds, as the clock gives them (whole numbers stay small integers: no boxed doubles).
  sumMillis = 0
  minMillis = 0
  maxMillis = 0
  /** While every call fell in one bucket, that bucket (no array yet: most series see one or two). */
  only = 0
  /** Calls per bucket (not cumulated), once calls fell in two buckets. */
  counts: Array<number> | undefined = undefined
  get() {
    let cumulated = 0
    const buckets = BOUNDS.map((boundary, i): readonly [number, number] => [
      boundary,
      (cumulated += this.counts !== undefined ? this.counts[i]! : i === this.only ? this.count : 0)
    ])
    const empty = this.count === 0
    return MetricState.histogram({
      buckets,
      count: this.count,
      min: empty ? Number.MAX_VALUE : this.minMillis / 1000,
      max: empty ? Number.MIN_VALUE : this.maxMillis / 1000,
      sum: this.sumMillis / 1000
    })
  }
  update(seconds: number): void {
    this.record(seconds * 1000)
  }
  record(millis: number): void {
    const i = bucketOf(millis / 1000)
    if (this.counts !== undefined) this.counts[i]!++
    else if (this.count === 0) this.only = i
    else if (i !== this.only) {
      this.counts = BOUNDS.map(() => 0) // small integers: cheaper than a typed array
      this.counts[this.only] = this.count
      this.counts[i]!++
    }
    if (this.count === 0 || millis < this.minMillis) this.minMillis = millis
    if (this.count === 0 || millis > this.maxMillis) this.maxMillis = millis
    this.count++
    this.sumMillis += millis
  }
}

ofMetric(CallsSeries, callsKey)
ofMetric(TransitionsSeries, transitionsKey)
ofMetric(StateSeries, stateKey)
ofMetric(ReachableSeries, reachableKey)
ofMetric(DurationSeries, durationKey)

/** Whether a series is a key Effect's registry finds as its own (checked once, at load). */
const fastKeys = ((): boolean => {
  const probe = [MetricLabel.make("breaker", "probe"), MetricLabel.make("outcome", "probe")]
  return [new CallsSeries(probe), new DurationSeries(probe)].every((series) => {
    const effects = MetricKey.taggedWithLabels(series.base, probe)
    return (
      Hash.hash(series) === Hash.hash(effects) &&
      Equal.equals(series, effects) &&
      Equal.equals(effects, series) &&
      !Equal.equals(series, MetricKey.taggedWithLabels(series.base, [probe[0]!]))
    )
  })
})()

/** What the fast paths found at load (a test pins both, so an Effect upgrade that breaks one is seen). @internal */
export const internals = (): { readonly removable: boolean; readonly copiedKeys: boolean } => ({
  removable: registryMap !== undefined,
  copiedKeys: fastKeys
})

/** The hash `MutableHashMap` files a key under. */
const hashOf = (key: UntypedKey): number => (key as unknown as Hash.Hash)[Hash.symbol]()

const keyOf = (series: Series): UntypedKey =>
  fastKeys ? (series as unknown as UntypedKey) : MetricKey.taggedWithLabels(series.base, series.tags)

/** Puts `series` in Effect's registry, or joins the one a live breaker of the same name holds. */
const register = <S extends Series>(series: S): S => {
  const key = keyOf(series)
  if (registryMap === undefined) {
    // Effect's registry is not what we know: let it make (and keep) the series.
    const hook = Metric.globalMetricRegistry.get(key) as unknown as Root
    return Object.assign(series, { update: (input: number) => hook.update(input) })
  }
  const hash = hashOf(key)
  const bucket = registryMap.buckets.get(hash)
  if (bucket === undefined) {
    series.holders = 1
    registryMap.buckets.set(hash, [[key, series as unknown as Root]])
    registryMap.bucketsSize++
    return series
  }
  for (let i = 0; i < bucket.length; i++) {
    const [other, existing] = bucket[i]!
    if (!Equal.equals(key, other)) continue
    if (existing instanceof series.constructor) {
      const shared = existing as unknown as S
      shared.holders++
      return shared
    }
    // A hook Effect made for a read before this series existed holds nothing: ours replaces it.
    series.holders = 1
    bucket[i] = [key, series as unknown as Root]
    return series
  }
  series.holders = 1
  bucket.push([key, series as unknown as Root])
  registryMap.bucketsSize++
  return series
}

const unregister = (series: Series | undefined): void => {
  // Only its holders ever put this series under its key, so the last one takes it out.
  if (registryMap === undefined || series === undefined || series.holders === 0 || --series.holders > 0) return
  const hash = hashOf(keyOf(series))
  const bucket = registryMap.buckets.get(hash)
  const i = bucket === undefined ? -1 : bucket.findIndex(([, hook]) => hook === (series as unknown as Root))
  if (i < 0) return
  if (bucket!.length === 1) registryMap.buckets.delete(hash)
  else bucket!.splice(i, 1)
  registryMap.bucketsSize--
}

const outcomeLabels: Record<Specs.CallOutcome, MetricLabel.MetricLabel> = {
  success: MetricLabel.make("outcome", "success"),
  failure: MetricLabel.make("outcome", "failure"),
  rejected: MetricLabel.make("outcome", "rejected"),
  repair: MetricLabel.make("outcome", "repair")
}

/** The `from` and `to` tags of each state, made once. */
const labelsOf = (key: "from" | "to"): Record<StateTag, MetricLabel.MetricLabel> => ({
  Closed: MetricLabel.make(key, "Closed"),
  Open: MetricLabel.make(key, "Open"),
  HalfOpen: MetricLabel.make(key, "HalfOpen"),
  Isolated: MetricLabel.make(key, "Isolated")
})
const fromLabels = labelsOf("from")
const toLabels = labelsOf("to")

/** @internal */
export type CallOutcome = Specs.CallOutcome

/**
 * One breaker's series, each made and registered on first use (a breaker that is never called
 * holds none), and each taken out of Effect's registry by `release`.
 *
 * @internal
 */
export class BreakerMetrics {
  /** `[breaker]`, the tags of its histogram and gauge; the counters' tags start with it. */
  private tags: ReadonlyArray<MetricLabel.MetricLabel> | undefined
  private success: CounterSeries | undefined
  private failure: CounterSeries | undefined
  private others: Partial<Record<string, Series>> | undefined
  private duration: DurationSeries | undefined
  private released = false
  constructor(readonly name: string) {}

  private series<S extends Series>(series: S): S {
    return this.released ? series : register(series) // a breaker used after its release records nowhere
  }

  /** The breaker's tag, then `more` (arrays of their exact size: a spread would leave room to grow). */
  private withBreaker(...more: Array<MetricLabel.MetricLabel>): ReadonlyArray<MetricLabel.MetricLabel> {
    const tags = (this.tags ??= [MetricLabel.make("breaker", this.name)])
    const breaker = tags[0]!
    return more.length === 0 ? tags : more.length === 1 ? [breaker, more[0]!] : [breaker, more[0]!, more[1]!]
  }

  /** A call that ran while closed: its outcome and its duration. */
  ran(failure: boolean, durationMillis: number): void {
    this.call(failure ? "failure" : "success")
    ;(this.duration ??= this.series(new DurationSeries(this.withBreaker()))).record(durationMillis)
  }

  call(outcome: CallOutcome): void {
    switch (outcome) {
      case "success":
        ;(this.success ??= this.counter(outcome)).update(1)
        return
      case "failure":
        ;(this.failure ??= this.counter(outcome)).update(1)
        return
      default:
        ;((this.others ??= {})[outcome] ??= this.counter(outcome)).update(1)
    }
  }

  private counter(outcome: CallOutcome): CounterSeries {
    return this.series(new CallsSeries(this.withBreaker(outcomeLabels[outcome])))
  }

  transition(t: Transition): void {
    const others = (this.others ??= {})
    const pair = `${t.from}>${t.to}`
    ;(others[pair] ??= this.series(new TransitionsSeries(this.withBreaker(fromLabels[t.from], toLabels[t.to])))).update(
      1
    )
    ;(others.state ??= this.series(new StateSeries(this.withBreaker()))).update(Specs.stateNumber[t.to])
  }

  /** Whether the breaker's shared store answered its last request (a breaker with a store holds this gauge). */
  reachable(connected: boolean): void {
    ;((this.others ??= {}).reachable ??= this.series(new ReachableSeries(this.withBreaker()))).update(connected ? 1 : 0)
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
