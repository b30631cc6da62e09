/**
 * Incident 2, the overload: callers send a dependency twice what it can serve, and its capacity
 * halves for a while on top. The dependency is the overload simulation's of docs/limiter.md (C
 * calls in flight at the base latency, slower beyond, callers giving up at a deadline while it
 * keeps working on what they abandoned), here as a fake the requests of a `Scenario.run` reach,
 * one run per strategy.
 *
 * @since 0.1.0
 */
import { Scenario } from "@circuitry/chaos"
import * as Heap from "@circuitry/core/Heap"
import { Limit, Limiter } from "@circuitry/limiter"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { runLanes } from "../Incident.js"

/**
 * The strategies, in the order they are shown.
 *
 * @since 0.1.0
 * @category strategies
 */
export const names = ["no-limit", "fixed", "gradient2", "aimd"] as const

/**
 * @since 0.1.0
 * @category strategies
 */
export type StrategyName = (typeof names)[number]

/**
 * Every number of the model. Times are in milliseconds of virtual time.
 *
 * @since 0.1.0
 * @category models
 */
export interface Config {
  /** Calls the dependency serves at once at its base latency. */
  readonly capacity: number
  /** Its latency while at most `capacity` calls are in it; beyond, `base x in flight / capacity`. */
  readonly baseMillis: number
  /** Callers give up after this (a timeout); the dependency still finishes the call. */
  readonly deadlineMillis: number
  /** Arrivals as a multiple of what the dependency serves (capacity / base per second). */
  readonly load: number
  /** When the capacity halves, and when it comes back. */
  readonly halvedFromMillis: number
  readonly halvedToMillis: number
  readonly durationMillis: number
  /** The fixed strategy's limit. */
  readonly fixedLimit: number
  readonly strategies: ReadonlyArray<StrategyName>
}

/**
 * The defaults: docs/limiter.md's dependency (C = 10, 100 ms, a 1 s deadline) at 2x, its
 * capacity halved from 20 s to 40 s.
 *
 * @since 0.1.0
 * @category models
 */
export const defaults: Config = {
  capacity: 10,
  baseMillis: 100,
  deadlineMillis: 1000,
  load: 2,
  halvedFromMillis: 20_000,
  halvedToMillis: 40_000,
  durationMillis: 60_000,
  fixedLimit: 40,
  strategies: names
}

/** Sampling windows as docs/limiter.md found to work for a 100 ms dependency. */
const windowed = (limit: Limit.Limit) => Limit.windowed(limit, { minWindow: "100 millis", maxWindow: "1 second" })

/**
 * The limit of each strategy: the parameters docs/limiter.md found to meet its targets.
 *
 * @since 0.1.0
 * @category strategies
 */
export const limits = (config: Config): Record<StrategyName, Limit.Limit | undefined> => ({
  "no-limit": undefined,
  fixed: Limit.fixed(config.fixedLimit),
  gradient2: windowed(Limit.gradient2({ initial: 10, min: 1, max: 200, queueSize: 2, rttTolerance: 1.2 })),
  aimd: windowed(Limit.aimd({ initial: 10, min: 1, max: 200, timeout: "150 millis" }))
})

/**
 * @since 0.1.0
 * @category strategies
 */
export const descriptions = (config: Config): Record<StrategyName, string> => ({
  "no-limit": "every call goes to the dependency",
  fixed: `Limit.fixed(${config.fixedLimit}), sized for the usual capacity`,
  gradient2: "windowed Gradient2 (queueSize 2, rttTolerance 1.2)",
  aimd: "windowed AIMD (timeout 150 ms)"
})

/**
 * The dependency's capacity at a time of the run.
 *
 * @since 0.1.0
 * @category models
 */
export const capacityAt = (config: Config, millis: number): number =>
  millis >= config.halvedFromMillis && millis < config.halvedToMillis ? config.capacity / 2 : config.capacity

/** The times at which the dependency finishes the work it holds: a min-heap. */
const workHeld = () => Heap.make<number>((a, b) => a < b)

/** Drops the work finished by `now`. */
const finishUntil = (work: Heap.Heap<number>, now: number): void => {
  while (work.size > 0 && work.peek()! <= now) work.pop()
}

/**
 * What one strategy's world did in one second.
 *
 * @since 0.1.0
 * @category models
 */
export interface Second {
  /** Calls answered within the deadline in this second. */
  readonly goodput: number
  /** The 99th percentile latency of the calls admitted in this second (0 when none were). */
  readonly p99: number
  /** Admitted calls that timed out in this second. */
  readonly failed: number
  /** Calls that arrived in this second and the limiter turned away at once. */
  readonly rejected: number
  /** The limit at the end of the second (undefined without a limiter). */
  readonly limit: number | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Summary {
  /** Answered in time over the run, as a share of what the dependency could serve. */
  readonly goodput: number
  /** The 99th percentile latency of every admitted call. */
  readonly p99: number
  readonly failed: number
  readonly rejected: number
  /** Seconds after the capacity halves (and after it returns) until it is settled; undefined: never. */
  readonly settleHalved: number | undefined
  readonly settleBack: number | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Lane {
  readonly name: StrategyName
  readonly seconds: ReadonlyArray<Second>
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

const percentile = (sorted: ReadonlyArray<number>, q: number): number =>
  sorted.length === 0 ? 0 : sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!

/**
 * Seconds after `from` until settled: from then until `to`, every second has goodput of at least
 * 90% of what the dependency serves and a p99 of admitted calls of at most twice the base
 * latency (docs/limiter.md's rule, per second).
 *
 * @since 0.1.0
 * @category summaries
 */
export const settle = (
  seconds: ReadonlyArray<Second>,
  config: Config,
  from: number,
  to: number
): number | undefined => {
  const ok = (s: number) =>
    seconds[s]!.goodput >= (0.9 * capacityAt(config, s * 1000) * 1000) / config.baseMillis &&
    seconds[s]!.p99 <= 2 * config.baseMillis
  for (let s = from; s < to; s++) {
    let settled = true
    for (let t = s; t < to && settled; t++) settled = ok(t)
    if (settled) return s - from
  }
  return undefined
}

const runLane = (name: StrategyName, config: Config) =>
  Effect.gen(function* () {
    const limit = limits(config)[name]
    const limiter = limit === undefined ? undefined : yield* Limiter.make({ name, limit })
    const work = workHeld()
    const seconds = Math.ceil(config.durationMillis / 1000)
    const latencies: Array<Array<number>> = Array.from({ length: seconds }, () => [])
    const limitAt: Array<number | undefined> = new Array(seconds).fill(undefined)
    const secondOf = (millis: number) => Math.min(seconds - 1, Math.floor(millis / 1000))
    // The dependency: latency fixed at arrival from the work it holds; past the deadline the caller
    // has gone (a timeout), the work stays.
    const call = Effect.flatMap(Clock.currentTimeMillis, (start) => {
      finishUntil(work, start)
      const latency = Math.round(config.baseMillis * Math.max(1, (work.size + 1) / capacityAt(config, start)))
      work.push(start + latency)
      const answered = latency <= config.deadlineMillis
      return Effect.zipRight(
        Effect.sleep(answered ? latency : config.deadlineMillis),
        Effect.suspend(() => {
          latencies[secondOf(start)]!.push(answered ? latency : config.deadlineMillis)
          return answered ? Scenario.count("goodput") : Effect.fail(new Cause.TimeoutException())
        })
      )
    })
    const request = () =>
      Effect.gen(function* () {
        if (limiter !== undefined) {
          const s = secondOf(yield* Clock.currentTimeMillis)
          limitAt[s] = yield* limiter.limit
        }
        return yield* limiter === undefined ? call : Limiter.withLimiter(call, limiter)
      }).pipe(
        Effect.catchTag("LimiterRejectedError", (e) => Effect.zipRight(Scenario.count("rejected"), Effect.fail(e))),
        Effect.tapError((e) => (e instanceof Cause.TimeoutException ? Scenario.count("failed") : Effect.void))
      )
    const report = yield* Scenario.run({
      duration: config.durationMillis,
      rate: (config.load * config.capacity * 1000) / config.baseMillis,
      request,
      // What is still in flight at the end is not counted: the last second is like the others.
      drain: 0
    })
    const perSecond: Array<Second> = report.seconds.map((s, i) => ({
      goodput: s.counters["goodput"] ?? 0,
      p99: percentile(
        latencies[i]!.sort((a, b) => a - b),
        0.99
      ),
      failed: s.counters["failed"] ?? 0,
      rejected: s.counters["rejected"] ?? 0,
      limit: limitAt[i]
    }))
    const all = latencies.flat().sort((a, b) => a - b)
    let servable = 0
    for (let s = 0; s < seconds; s++) servable += (capacityAt(config, s * 1000) * 1000) / config.baseMillis
    const halved = Math.floor(config.halvedFromMillis / 1000)
    const back = Math.floor(config.halvedToMillis / 1000)
    return {
      name,
      seconds: perSecond,
      summary: {
        goodput: perSecond.reduce((n, s) => n + s.goodput, 0) / servable,
        p99: percentile(all, 0.99),
        failed: report.total.counters["failed"] ?? 0,
        rejected: report.total.counters["rejected"] ?? 0,
        settleHalved: settle(perSecond, config, halved, back),
        settleBack: settle(perSecond, config, back, seconds)
      }
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
