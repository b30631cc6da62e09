/**
 * The replay: the same traffic through every strategy, side by side, in virtual time.
 *
 * The library reads time from the Effect `Clock`, here a `TestClock` that the replay moves forward
 * with `TestClock.adjust` in steps of `clockStepMillis`. Request arrivals, database answers and
 * the cache stall are scheduled on a finer timeline (sub-steps of `stepMillis`) by the model.
 *
 * @since 0.1.0
 */
import type { CircuitBreaker } from "@circuitry/breaker"
import { MemoryStore } from "@circuitry/cache"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import * as TestClock from "effect/TestClock"
import * as TestContext from "effect/TestContext"
import { Counters, Database, random, rowOf, type Second, stalling, Timeline, Zipf } from "./Model.js"
import * as Strategies from "./Strategies.js"

/**
 * Every number of the model. Times are in milliseconds of virtual time.
 *
 * @since 0.1.0
 * @category models
 */
export interface Config {
  /** Requests per second. */
  readonly rate: number
  /** How many different keys the traffic asks for. */
  readonly keys: number
  /** The skew of their popularity: key i is asked for in proportion to 1 / i^zipf. */
  readonly zipf: number
  /** How long a cache entry lives. */
  readonly ttlMillis: number
  /** Queries per second the database serves; above it, queries fail as "database unavailable". */
  readonly dbCapacity: number
  /** The database's latency when idle; it grows as it fills (up to ten times). */
  readonly dbLatencyMillis: number
  /** When the cache stalls. */
  readonly stallAtMillis: number
  /** How long the cache stalls. */
  readonly stallMillis: number
  /** The deadline of one cache call. */
  readonly cacheTimeoutMillis: number
  /** How long the breaker stays open. */
  readonly openForMillis: number
  /** How long the replay lasts. */
  readonly durationMillis: number
  /** A request answered later than this counts as failed (its client gave up). */
  readonly deadlineMillis: number
  /** The single-flight strategy's cap on concurrent loads. */
  readonly maxConcurrentLoads: number
  readonly strategies: ReadonlyArray<Strategies.StrategyName>
  /** The seed of the traffic. */
  readonly seed: number
}

/**
 * The defaults: the incident's shape (a 6 s stall at the one-minute mark, a 30 s open time) at
 * about 1,500 requests per second.
 *
 * @since 0.1.0
 * @category models
 */
export const defaults: Config = {
  rate: 1500,
  keys: 50_000,
  zipf: 1,
  ttlMillis: 60_000,
  dbCapacity: 1000,
  dbLatencyMillis: 10,
  stallAtMillis: 60_000,
  stallMillis: 6_000,
  cacheTimeoutMillis: 10_000,
  openForMillis: 30_000,
  durationMillis: 150_000,
  deadlineMillis: 1_000,
  maxConcurrentLoads: 64,
  strategies: Strategies.names,
  seed: 7
}

/** Sub-step of the model's timeline. */
const stepMillis = 10
/** Step of the Clock the library reads (each `TestClock.adjust` costs a few ms of real time). */
export const clockStepMillis = 500

/**
 * What one strategy went through.
 *
 * @since 0.1.0
 * @category models
 */
export interface Lane {
  readonly name: Strategies.StrategyName
  readonly seconds: ReadonlyArray<Second>
  readonly transitions: ReadonlyArray<CircuitBreaker.Transition>
  readonly summary: Summary
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Summary {
  /** The most queries the database was sent in one second. */
  readonly peakQueries: number
  /** Requests that got no answer, over the whole run. */
  readonly failed: number
  /** Misses per second before the stall (the mean over up to 30 s). */
  readonly baselineMisses: number
  /**
   * Seconds from the start of the stall until misses are back near the baseline (within 25% for 5
   * seconds in a row); undefined when that did not happen before the end of the run.
   */
  readonly recoverySeconds: number | undefined
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
export const summarize = (seconds: ReadonlyArray<Second>, config: Config): Summary => {
  const stallAt = Math.floor(config.stallAtMillis / 1000)
  const from = Math.min(Math.max(5, stallAt - 30), Math.max(0, stallAt - 1))
  const before = seconds.slice(from, Math.max(from + 1, stallAt))
  const baselineMisses = before.reduce((sum, s) => sum + s.misses, 0) / Math.max(1, before.length)
  const near = (s: Second) => s.misses <= baselineMisses * 1.25 + 5
  let recoverySeconds: number | undefined
  const stallEnd = Math.ceil((config.stallAtMillis + config.stallMillis) / 1000)
  for (let t = stallEnd; t + 5 <= seconds.length; t++) {
    if (seconds.slice(t, t + 5).every(near)) {
      recoverySeconds = t - config.stallAtMillis / 1000
      break
    }
  }
  return {
    peakQueries: seconds.reduce((max, s) => Math.max(max, s.queries), 0),
    failed: seconds.reduce((sum, s) => sum + s.failed, 0),
    baselineMisses,
    recoverySeconds
  }
}

interface Running {
  readonly strategy: Strategies.Strategy
  readonly counters: Counters
  readonly database: Database
  readonly transitions: Queue.Dequeue<CircuitBreaker.Transition> | undefined
}

/**
 * Runs the replay. It brings its own `TestClock` (from `TestContext`), so it needs nothing.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (config: Config): Effect.Effect<Result> =>
  Effect.gen(function* () {
    const timeline = new Timeline(stepMillis)
    const seconds = Math.ceil(config.durationMillis / 1000)
    const zipf = new Zipf(config.keys, config.zipf)
    const keyNames = Array.from({ length: config.keys }, (_, i) => `project:${i}`)

    // The cache starts warm, as it would be after a long quiet time: a key asked for at rate r
    // with a TTL T is cached with probability rT / (1 + rT), with a uniform time left to live.
    const warm: Array<readonly [string, number]> = []
    const draw = random(config.seed + 1)
    for (let i = 0; i < config.keys; i++) {
      const rt = (config.rate * zipf.shares[i]! * config.ttlMillis) / 1000
      if (draw() < rt / (1 + rt)) warm.push([keyNames[i]!, Math.max(1, Math.floor(draw() * config.ttlMillis))])
    }

    const lanes: Array<Running> = []
    for (const name of config.strategies) {
      const counters = new Counters(seconds, timeline)
      const memory = yield* MemoryStore.make()
      for (const [key, ttl] of warm) yield* memory.set(key, "warm", { ttl })
      const store = stalling(
        memory,
        { atMillis: config.stallAtMillis, forMillis: config.stallMillis, timeoutMillis: config.cacheTimeoutMillis },
        timeline,
        counters
      )
      const database = new Database(
        { capacity: config.dbCapacity, latencyMillis: config.dbLatencyMillis },
        timeline,
        counters
      )
      const strategy = yield* Strategies.make(name, store, database, counters, {
        openForMillis: config.openForMillis,
        ttlMillis: config.ttlMillis,
        maxConcurrentLoads: config.maxConcurrentLoads
      })
      const transitions = strategy.breaker === undefined ? undefined : yield* strategy.breaker.subscribe
      lanes.push({ strategy, counters, database, transitions })
    }

    // Most steps of a request complete at once, so the replay runs them inline, each at its
    // virtual time: a read when the request arrives; for a cache-aside miss, the query, and the
    // write-back when the database answers. A request gets a fiber of its own only when a step may
    // wait: a getOrLoad miss (it may wait for another fiber's load, or for a load permit), and any
    // step while the cache is stalled.
    const start = Runtime.runFork(yield* Effect.runtime<never>())
    const stallEnd = config.stallAtMillis + config.stallMillis
    const stalled = () => timeline.now >= config.stallAtMillis && timeline.now < stallEnd
    const failed = (lane: Running) => {
      lane.counters.current.failed++
    }
    const answered = (lane: Running, startedAt: number) => {
      if (timeline.now - startedAt > config.deadlineMillis) lane.counters.current.failed++
    }
    const settle = (lane: Running, startedAt: number) => ({
      onFailure: () => failed(lane),
      onSuccess: () => answered(lane, startedAt)
    })
    interface WriteBack {
      readonly lane: Running
      readonly strategy: Strategies.CacheAside
      readonly key: string
      readonly startedAt: number
    }
    let writeBacks: Array<WriteBack> = []

    const traffic = random(config.seed)
    const clockEvery = clockStepMillis / stepMillis
    const steps = Math.floor(config.durationMillis / stepMillis)
    let owed = 0
    for (let step = 0; step < steps; step++) {
      if (step > 0 && step % clockEvery === 0) yield* TestClock.adjust(clockStepMillis)
      timeline.advanceTo(step)
      // Let the fibers woken by the timeline run to their next wait before new requests arrive.
      yield* Effect.yieldNow()
      const due = writeBacks
      writeBacks = []
      for (const { key, lane, startedAt, strategy } of due) {
        const write = strategy.write(key, rowOf(key))
        if (stalled()) start(Effect.match(write, settle(lane, startedAt)))
        else {
          yield* write
          answered(lane, startedAt)
        }
      }
      owed += (config.rate * stepMillis) / 1000
      const arrivals = Math.floor(owed)
      owed -= arrivals
      for (let i = 0; i < arrivals; i++) {
        const key = keyNames[zipf.sample(traffic())]!
        for (const lane of lanes) {
          const strategy = lane.strategy
          const startedAt = timeline.now
          lane.counters.current.requests++
          if (stalled()) {
            const request =
              strategy._tag === "CacheAside"
                ? strategy.request(key)
                : Effect.flatMap(strategy.read(key), (hit) => (hit ? Effect.void : strategy.miss(key)))
            start(Effect.match(request, settle(lane, startedAt)))
          } else if (!(yield* strategy.read(key))) {
            if (strategy._tag === "GetOrLoad") {
              start(Effect.match(strategy.miss(key), settle(lane, startedAt)))
            } else {
              const answerAt = lane.database.send()
              if (answerAt === undefined) failed(lane)
              else {
                const writeBack: WriteBack = { lane, strategy, key, startedAt }
                timeline.at(answerAt, () => writeBacks.push(writeBack))
              }
            }
          }
        }
      }
    }

    const result: Array<Lane> = []
    for (const lane of lanes) {
      const transitions = lane.transitions === undefined ? [] : Array.from(yield* Queue.takeAll(lane.transitions))
      result.push({
        name: lane.strategy.name,
        seconds: lane.counters.seconds,
        transitions,
        summary: summarize(lane.counters.seconds, config)
      })
    }
    return { config, lanes: result }
  }).pipe(Effect.scoped, Effect.orDie, Effect.provide(TestContext.TestContext))
