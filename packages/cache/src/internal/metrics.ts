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
 * The counters are made by core's `MetricSeries.counter`, so each series below updates its own
 * registry entry directly (on Effect 4 too: no `Metric.withAttributes` per update).
 */
import * as Edition from "@circuitry/core/Edition"
import * as MetricSeries from "@circuitry/core/MetricSeries"
import * as Specs from "./metricSpecs.js"

/** @internal */
export const operationsTotal: Edition.Counter = MetricSeries.counter(Specs.operations)

/** @internal */
export const lookupsTotal: Edition.Counter = MetricSeries.counter(Specs.lookups)

/** @internal */
export const loadsTotal: Edition.Counter = MetricSeries.counter(Specs.loads)

/** @internal */
export const l2WriteFailuresTotal: Edition.Counter = MetricSeries.counter(Specs.l2WriteFailures)

/** Adds to one series. */
type Count = (by: number) => void

/** One series of a counter: made once, here; it enters the registry on its first update. */
const series: (counter: Edition.Counter, attributes: Record<string, string>) => Count = Edition.counterSeries

/** The operations a guard counts (`getEntry` counts as `get`). @internal */
export type Operation = "get" | "set" | "touch" | "delete" | "keys" | "size" | "ping"

/** How a guarded operation ended: the store answered (`ok` judges the answer), or the fallback. @internal */
export interface OperationSeries<A> {
  readonly ok: (answer: A) => void
  readonly shed: Count
  readonly error: Count
}

const operation = (name: Operation, outcome: string): Count => series(operationsTotal, { operation: name, outcome })

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

const lookup = (outcome: string): Count => series(lookupsTotal, { outcome })

/** @internal */
export const lookups = { hit: lookup("hit"), load: lookup("load"), coalesced: lookup("coalesced") }

const load = (outcome: string): Count => series(loadsTotal, { outcome })

/** @internal */
export const loads = {
  success: load("success"),
  failure: load("failure"),
  interrupted: load("interrupted"),
  /** By the rejection's `reason`. */
  rejected: {
    "queue-full": series(loadsTotal, { outcome: "rejected", reason: "queue-full" }),
    "wait-exceeded": series(loadsTotal, { outcome: "rejected", reason: "wait-exceeded" })
  }
}

const l2Failure = (operation: string): Count => series(l2WriteFailuresTotal, { operation })

/** @internal */
export const l2WriteFailures = { set: l2Failure("set"), touch: l2Failure("touch"), delete: l2Failure("delete") }
