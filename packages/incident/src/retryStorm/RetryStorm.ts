/**
 * Incident 3, the retry storm: callers retry against a dependency that fails every call for a
 * minute, then recovers. The outage is a `Chaos.layer` fault on the dependency's service; the
 * traffic is a `Scenario.run`, one per strategy, with the real `Retry.retry`, `RetryBudget` and
 * `CircuitBreaker`.
 *
 * @since 0.1.0
 */
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { Chaos, Scenario } from "@circuitry/chaos"
import { Retry, RetryBudget } from "@circuitry/retry"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { runLanes } from "../Incident.js"

/**
 * The strategies, in the order they are shown.
 *
 * @since 0.1.0
 * @category strategies
 */
export const names = ["plain", "budget", "budget+breaker"] as const

/**
 * @since 0.1.0
 * @category strategies
 */
export type StrategyName = (typeof names)[number]

/**
 * @since 0.1.0
 * @category strategies
 */
export const descriptions: Record<StrategyName, string> = {
  plain: "Retry.retry with Schedule.recurs(3)",
  budget: "the same, within a RetryBudget (ratio 0.1, minPerSecond 10)",
  "budget+breaker": "the same, each attempt through a breaker (5 failures in a row, open 5 s)"
}

/**
 * Every number of the model. Times are in milliseconds of virtual time.
 *
 * @since 0.1.0
 * @category models
 */
export interface Config {
  /** First attempts per second (callers, open loop). */
  readonly rate: number
  /** The dependency's latency, failing or not. */
  readonly latencyMillis: number
  readonly outageAtMillis: number
  readonly outageMillis: number
  /** How long the breaker stays open. */
  readonly openForMillis: number
  readonly durationMillis: number
  readonly strategies: ReadonlyArray<StrategyName>
}

/**
 * The defaults: docs/retry.md's storm (200 calls/s, a minute of outage), with a minute around it.
 *
 * @since 0.1.0
 * @category models
 */
export const defaults: Config = {
  rate: 200,
  latencyMillis: 20,
  outageAtMillis: 30_000,
  outageMillis: 60_000,
  openForMillis: 5_000,
  durationMillis: 120_000,
  strategies: names
}

/**
 * What the dependency answers in the outage.
 *
 * @since 0.1.0
 * @category errors
 */
export class Unavailable extends Schema.TaggedError<Unavailable>()("Unavailable", {}) {}

/** The dependency the callers reach; the outage is injected into it with `Chaos.layer`. */
class Dependency extends Context.Tag("@circuitry/incident/Dependency")<
  Dependency,
  { readonly call: Effect.Effect<string, Unavailable> }
>() {}

/**
 * What one strategy's world did in one second.
 *
 * @since 0.1.0
 * @category models
 */
export interface Second {
  readonly first: number
  /** Attempts that reached the dependency (first attempts and retries, not those a breaker shed). */
  readonly attempts: number
  /** Requests that arrived in this second and failed after every retry they were allowed. */
  readonly failed: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Summary {
  /** Attempts on the dependency / first attempts over the outage, and in its busiest second. */
  readonly amplification: number
  readonly peakAmplification: number
  /** The most attempts in a second of the outage. */
  readonly peakAttempts: number
  readonly failed: number
  /** Milliseconds from the recovery to the last attempt that failed (0: none failed after it). */
  readonly backToNormalMillis: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Lane {
  readonly name: StrategyName
  readonly seconds: ReadonlyArray<Second>
  readonly transitions: ReadonlyArray<CircuitBreaker.Transition>
  readonly summary: Summary
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly config: Config
  readonly lanes: ReadonlyArray<Lane>
}

/**
 * Sums up one strategy's seconds.
 *
 * @since 0.1.0
 * @category summaries
 */
export const summarize = (seconds: ReadonlyArray<Second>, lastFailureAt: number, config: Config): Summary => {
  const from = Math.floor(config.outageAtMillis / 1000)
  const recovery = Math.ceil((config.outageAtMillis + config.outageMillis) / 1000)
  const outage = seconds.slice(from, recovery)
  const sum = (list: ReadonlyArray<Second>, f: (s: Second) => number) => list.reduce((n, s) => n + f(s), 0)
  return {
    amplification:
      sum(outage, (s) => s.attempts) /
      Math.max(
        1,
        sum(outage, (s) => s.first)
      ),
    peakAmplification: Math.max(0, ...outage.map((s) => s.attempts / Math.max(1, s.first))),
    peakAttempts: Math.max(0, ...outage.map((s) => s.attempts)),
    failed: sum(seconds, (s) => s.failed),
    backToNormalMillis: Math.max(0, lastFailureAt - (config.outageAtMillis + config.outageMillis))
  }
}

const runLane = (name: StrategyName, config: Config) =>
  Effect.gen(function* () {
    const outage = Chaos.layer(Dependency, {
      call: [
        Chaos.latency(config.latencyMillis),
        Chaos.during(
          { from: config.outageAtMillis, to: config.outageAtMillis + config.outageMillis },
          Chaos.fail({ rate: 1, error: () => new Unavailable() })
        )
      ]
    }).pipe(Layer.provide(Layer.succeed(Dependency, { call: Effect.succeed("ok") })))
    const dependency = yield* Effect.provide(Dependency, outage)
    const attempt = Effect.zipRight(Scenario.count("attempts"), dependency.call)
    const budget = name === "plain" ? undefined : yield* RetryBudget.make({ name, ratio: 0.1, minPerSecond: 10 })
    const breaker =
      name === "budget+breaker"
        ? yield* CircuitBreaker.make({
            name,
            policy: Policy.consecutiveFailures(5),
            openFor: config.openForMillis
          })
        : undefined
    const transitions = breaker === undefined ? undefined : yield* breaker.subscribe
    // When the last attempt failed, a breaker's rejection included: after it, every call succeeds.
    let lastFailureAt = 0
    const guarded = (breaker === undefined ? attempt : CircuitBreaker.withBreaker(attempt, breaker)).pipe(
      Effect.tapError(() =>
        Effect.map(Clock.currentTimeMillis, (now) => void (lastFailureAt = Math.max(lastFailureAt, now)))
      )
    )
    const call = Retry.retry(guarded, { schedule: Schedule.recurs(3), budget })
    const report = yield* Scenario.run({
      duration: config.durationMillis,
      rate: config.rate,
      request: () => Effect.zipRight(Scenario.count("first"), call)
    })
    const seconds: Array<Second> = report.seconds.map((s) => ({
      first: s.counters["first"] ?? 0,
      attempts: s.counters["attempts"] ?? 0,
      failed: s.failures
    }))
    return {
      name,
      seconds,
      transitions: transitions === undefined ? [] : Array.from(yield* Queue.takeAll(transitions)),
      summary: summarize(seconds, lastFailureAt, config)
    } satisfies Lane
  })

/**
 * Runs every strategy of the config, each in a `TestContext` of its own (a Clock from 0).
 *
 * @since 0.1.0
 * @category running
 */
export const run = (config: Config): Effect.Effect<Result> =>
  Effect.map(
    runLanes(config.strategies, (name) => runLane(name, config)),
    (lanes) => ({ config, lanes })
  )
