/**
 * The breaker's metrics, through Effect's `Metric` (so `@effect/opentelemetry` exports them), and
 * the per-breaker recorder that updates them without allocating on the call path.
 */
import * as Metric from "effect/Metric"
import * as MetricLabel from "effect/MetricLabel"
import type { StateTag, Transition } from "./machine.js"

/** @internal */
export const callsTotal = Metric.counter("circuitry_breaker_calls_total", {
  description: "Calls through a circuit breaker, by outcome: success, failure, rejected, repair"
})
/** @internal */
export const transitionsTotal = Metric.counter("circuitry_breaker_transitions_total", {
  description: "State transitions of a circuit breaker"
})
/** @internal */
export const stateGauge = Metric.gauge("circuitry_breaker_state", {
  description: "Current state of a circuit breaker: 0 closed, 1 open, 2 half-open, 3 isolated"
})

const stateNumber: Record<StateTag, number> = { Closed: 0, Open: 1, HalfOpen: 2, Isolated: 3 }
const outcomeLabels = {
  success: MetricLabel.make("outcome", "success"),
  failure: MetricLabel.make("outcome", "failure"),
  rejected: MetricLabel.make("outcome", "rejected"),
  repair: MetricLabel.make("outcome", "repair")
}

/** @internal */
export type CallOutcome = keyof typeof outcomeLabels

/** One breaker's metrics. Tags are built on first use, so that an idle breaker costs no metric memory. @internal */
export class BreakerMetrics {
  private label: MetricLabel.MetricLabel | undefined
  private tags: Partial<Record<CallOutcome, ReadonlyArray<MetricLabel.MetricLabel>>> | undefined
  constructor(readonly name: string) {}
  private breakerLabel(): MetricLabel.MetricLabel {
    return (this.label ??= MetricLabel.make("breaker", this.name))
  }
  call(outcome: CallOutcome): void {
    const tags = ((this.tags ??= {})[outcome] ??= [this.breakerLabel(), outcomeLabels[outcome]])
    callsTotal.unsafeUpdate(1, tags)
  }
  transition(t: Transition): void {
    const label = this.breakerLabel()
    transitionsTotal.unsafeUpdate(1, [label, MetricLabel.make("from", t.from), MetricLabel.make("to", t.to)])
    stateGauge.unsafeUpdate(stateNumber[t.to], [label])
  }
}
