/**
 * The cache's metrics, through Effect's `Metric` (so `MetricsRoute` and `@effect/opentelemetry`
 * export them): counters updated from synchronous code through `Edition.counterSeries`.
 *
 * Every label comes from a fixed set (an operation, an outcome, a reason), never from a key or a
 * cache's name, so the series below are all the series the cache package can ever put in the
 * registry (33), however many caches a process makes and releases: none belongs to a cache, so
 * none has to leave the registry with one. Which cache did what is the breaker's to say
 * (`circuitry_breaker_calls_total{breaker}` counts a guard's shed operations and its repairs by
 * name). Each series is made once, here; it enters the registry on its first update.
 *
 * Each series updates a copy of its counter of its own (same name, help and kind, so the same
 * series in the registry as the public counter with those labels). On Effect 4 a counter keeps the
 * key of the last labels it was updated with, and builds it again (sorting and serialising the
 * labels, about 1 µs) when the labels change: series sharing one counter, as a guard's `get` hit
 * and miss would, paid that on nearly every update. On Effect 3 a copy costs nothing.
 */
import * as Edition from "@circuitry/core/Edition"
import * as Metric from "effect/Metric"
import * as Specs from "./metricSpecs.js"

/** @internal */
export const operationsTotal: Edition.Counter = Metric.counter(Specs.operations.name, {
  incremental: true,
  description: Specs.operations.description
})

/** @internal */
export const lookupsTotal: Edition.Counter = Metric.counter(Specs.lookups.name, {
  incremental: true,
  description: Specs.lookups.description
})

/** @internal */
export const loadsTotal: Edition.Counter = Metric.counter(Specs.loads.name, {
  incremental: true,
  description: Specs.loads.description
})

/** @internal */
export const l2WriteFailuresTotal: Edition.Counter = Metric.counter(Specs.l2WriteFailures.name, {
  incremental: true,
  description: Specs.l2WriteFailures.description
})

/** Adds to one series. */
type Count = (by: number) => void

/** One series: the metric of `spec` with these labels, over a copy of its counter (see above). */
const series = (spec: Specs.Spec, attributes: Record<string, string>): Count =>
  Edition.counterSeries(Metric.counter(spec.name, { incremental: true, description: spec.description }), attributes)

/** The operations a guard counts (`getEntry` counts as `get`). @internal */
export type Operation = "get" | "set" | "touch" | "delete" | "keys" | "size" | "ping"

/** How a guarded operation ended: the store answered (`ok` judges the answer), or the fallback. @internal */
export interface OperationSeries<A> {
  readonly ok: (answer: A) => void
  readonly shed: Count
  readonly error: Count
}

const operation = (name: Operation, outcome: string): Count => series(Specs.operations, { operation: name, outcome })

const fallbacks = (name: Operation) => ({ shed: operation(name, "shed"), error: operation(name, "error") })

/** An operation whose every answer is a success. */
const answered = (name: Operation): OperationSeries<unknown> => {
  const success = operation(name, "success")
  return { ok: () => success(1), ...fallbacks(name) }
}

const hit = operation("get", "hit")
const miss = operation("get", "miss")

/** @internal */
export const operations = {
  /** A `get` (or `getEntry`) that found the key is a hit, one that did not a miss. */
  get: {
    ok: (found: { readonly _tag: "Some" | "None" }) => (found._tag === "Some" ? hit : miss)(1),
    ...fallbacks("get")
  },
  set: answered("set"),
  touch: answered("touch"),
  delete: answered("delete"),
  keys: answered("keys"),
  size: answered("size"),
  ping: answered("ping")
}

const lookup = (outcome: string): Count => series(Specs.lookups, { outcome })

/** @internal */
export const lookups = { hit: lookup("hit"), load: lookup("load"), coalesced: lookup("coalesced") }

const load = (outcome: string): Count => series(Specs.loads, { outcome })

/** @internal */
export const loads = {
  success: load("success"),
  failure: load("failure"),
  interrupted: load("interrupted"),
  /** By the rejection's `reason`. */
  rejected: {
    "queue-full": series(Specs.loads, { outcome: "rejected", reason: "queue-full" }),
    "wait-exceeded": series(Specs.loads, { outcome: "rejected", reason: "wait-exceeded" })
  }
}

const l2Failure = (operation: string): Count => series(Specs.l2WriteFailures, { operation })

/** @internal */
export const l2WriteFailures = { set: l2Failure("set"), touch: l2Failure("touch"), delete: l2Failure("delete") }
