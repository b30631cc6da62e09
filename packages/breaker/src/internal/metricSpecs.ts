/**
 * The breaker's metrics, declared once: names, help texts, the histogram's boundaries and the
 * gauge's numbers. metrics.effect3.ts and metrics.effect4.ts make each major's metrics from them.
 */
import type { StateTag } from "./machine.js"

/** A metric's name and help text. @internal */
export interface Spec {
  readonly name: string
  readonly description: string
}

// The counters only go up: each major declares them incremental, so OpenTelemetry exports them as
// monotonic counters (Prometheus counters).
/** @internal */
export const calls: Spec = {
  name: "circuitry_breaker_calls_total",
  description: "Calls through a circuit breaker, by outcome: success, failure, rejected, repair"
}
/** @internal */
export const transitions: Spec = {
  name: "circuitry_breaker_transitions_total",
  description: "State transitions of a circuit breaker"
}
/** @internal */
export const state: Spec = {
  name: "circuitry_breaker_state",
  description: "Current state of a circuit breaker: 0 closed, 1 open, 2 half-open, 3 isolated"
}
/** @internal */
export const reachable: Spec = {
  name: "circuitry_breaker_store_reachable",
  description: "Whether a breaker's shared store answered its last request: 1 it did, 0 it did not (deciding locally)"
}
/** @internal */
export const duration: Spec & { readonly boundaries: ReadonlyArray<number> } = {
  name: "circuitry_breaker_call_duration_seconds",
  description: "Duration of the calls a closed circuit breaker ran, in seconds (success or failure)",
  /** Seconds, from 1 ms to 30 s: a dependency's fast answers and its timeouts both land in a bucket. */
  boundaries: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
}

/** The state gauge's value of each state. @internal */
export const stateNumber: Record<StateTag, number> = { Closed: 0, Open: 1, HalfOpen: 2, Isolated: 3 }

/** The outcomes of the calls counter. @internal */
export type CallOutcome = "success" | "failure" | "rejected" | "repair"
