/**
 * Incident 1, the cache stall (seeds/repair-while-open): a 6 s stall opens the cache's breaker for
 * 30 s, and the traffic it sheds lands on the database. Replayed with @circuitry/chaos: the stall
 * is a `Chaos.layer` fault on the cache store, the traffic a `Scenario.run`, one per strategy.
 *
 * @since 0.1.0
 */
import type { CircuitBreaker } from "@circuitry/breaker"
import { CacheStore, MemoryStore } from "@circuitry/cache"
import { Chaos, Scenario } from "@circuitry/chaos"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as TestContext from "effect/TestContext"
import { Database, warmEntries, Zipf } from "./Model.js"
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
  /** The deadline of one cache call (it matters when it is shorter than the stall). */
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

/**
 * What one strategy's world did in one second of virtual time (a request counts in the second it
 * arrived).
 *
 * @since 0.1.0
 * @category models
 */
export interface Second {
  readonly requests: number
  /** Cache reads that returned no value: a miss, a failed read or a read shed by an open circuit. */
  readonly misses: number
  /** Queries sent to the database (accepted or refused). */
  readonly queries: number
  /** Queries the database refused ("database unavailable"). */
  readonly refused: number
  /** Requests that got no answer: their load failed, or it came after the request's deadline. */
  readonly failed: number
  /**
   * The p99 of the latency of the requests that arrived in this second, in milliseconds, until
   * each one's work ended (past its deadline too: a request held by a stalled cache holds its
   * fiber, its connection and its memory for as long as the stall lasts).
   */
  readonly p99Millis: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Summary {
  /** The most queries the database was sent in one second. */
  readonly peakQueries: number
  /** Seconds in which the database was sent more than its capacity. */
  readonly overCapacitySeconds: number
  /** Requests that got no answer, over the whole run. */
  readonly failed: number
  /** The highest p99 of a second: how long the slowest requests were held. */
  readonly worstP99Millis: number
  /** Seconds whose p99 was past the deadline: how long requests piled up. */
  readonly slowSeconds: number
  /** Misses per second before the stall (the mean over up to 30 s). */
  readonly baselineMisses: number
  /**
   * Seconds from the start of the stall until misses are back near the baseline (within 25% for 5
   * seconds in a row); undefined when that did not happen before the end of the run.
   */
  readonly recoverySeconds: number | undefined
}

/**
 * What one strategy went through.
 *
 * @since 0.1.0
 * @category models
 */
export interface Lane {
  readonly name: Strategies.StrategyName
  readonly report: Scenario.Report
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
    overCapacitySeconds: seconds.filter((s) => s.queries > config.dbCapacity).length,
    failed: seconds.reduce((sum, s) => sum + s.failed, 0),
    worstP99Millis: seconds.reduce((max, s) => Math.max(max, s.p99Millis), 0),
    slowSeconds: seconds.filter((s) => s.p99Millis > config.deadlineMillis).length,
    baselineMisses,
    recoverySeconds
  }
}

/** The cache server the application talks to; the stall is injected into it with `Chaos.layer`. */
class CacheServer extends Context.Tag("@circuitry/incident/CacheServer")<
  CacheServer,
  CacheStore.CacheStore<CacheStore.CacheError>
>() {}

/**
 * The stall: every operation started in it is stuck until it ends, and then fails, the way the
 * incident's did (the client drops the stuck connection and every call waiting on it fails at
 * once; the new connection is healthy).
 */
const stallOf = (config: Config) => {
  const window = { from: config.stallAtMillis, to: config.stallAtMillis + config.stallMillis }
  const stuck = (operation: string) =>
    Chaos.during(
      window,
      Chaos.stallThenFail({
        error: () =>
          new CacheStore.CacheError({ operation, message: "connection reset: the stuck connection was dropped" })
      })
    )
  return Chaos.layer(CacheServer, {
    get: stuck("get"),
    set: stuck("set"),
    touch: stuck("touch"),
    delete: stuck("delete"),
    keys: stuck("keys"),
    size: stuck("size"),
    ping: stuck("ping")
  })
}

/**
 * The client's deadline on each cache call. It only matters when it is shorter than the stall
 * (otherwise the dropped connection fails a stuck call first), so it is only paid for then.
 */
const withDeadline = (store: CacheStore.CacheStore, config: Config): CacheStore.CacheStore => {
  if (config.cacheTimeoutMillis >= config.stallMillis) return store
  const deadline =
    (operation: string) =>
    <A>(effect: Effect.Effect<A, CacheStore.CacheError>) =>
      Effect.timeoutFail(effect, {
        duration: config.cacheTimeoutMillis,
        onTimeout: () => new CacheStore.CacheError({ operation, message: "timed out: the cache did not answer" })
      })
  return {
    get: (key) => deadline("get")(store.get(key)),
    set: (key, value, options) => deadline("set")(store.set(key, value, options)),
    touch: (key, options) => deadline("touch")(store.touch(key, options)),
    delete: (key) => deadline("delete")(store.delete(key)),
    keys: (prefix) => deadline("keys")(store.keys(prefix)),
    size: deadline("size")(store.size),
    ping: deadline("ping")(store.ping)
  }
}

/** One strategy, through its own cache, breaker and database, under the same traffic. */
const runLane = (name: Strategies.StrategyName, config: Config, zipf: Zipf, keyNames: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const memory = yield* MemoryStore.make()
    for (const { key, ttlMillis } of warmEntries(zipf, config.rate, config.ttlMillis)) {
      yield* memory.set(keyNames[key]!, "warm", { ttl: ttlMillis })
    }
    const server = Layer.succeed(CacheServer, memory)
    const stalled = config.stallMillis > 0 ? stallOf(config).pipe(Layer.provide(server)) : server
    const store = withDeadline(yield* Effect.provide(CacheServer, stalled), config)
    const database = new Database({ capacity: config.dbCapacity, latencyMillis: config.dbLatencyMillis })
    const strategy = yield* Strategies.make(name, store, database, {
      openForMillis: config.openForMillis,
      ttlMillis: config.ttlMillis,
      maxConcurrentLoads: config.maxConcurrentLoads
    })
    const transitions = strategy.breaker === undefined ? undefined : yield* strategy.breaker.subscribe
    // The same seed for every strategy: request i asks for the same key in each.
    const report = yield* Scenario.run({
      duration: config.durationMillis,
      rate: config.rate,
      seed: config.seed,
      // A request answered after its deadline has failed (its client gave up), but its work, the
      // load and the write-back, still happens.
      deadline: config.deadlineMillis,
      request: () => Effect.flatMap(Scenario.random, (u) => strategy.request(keyNames[zipf.sample(u)]!))
    })
    const seconds: Array<Second> = report.seconds.map((s) => ({
      requests: s.calls,
      misses: s.counters["cache.misses"] ?? 0,
      queries: s.counters["db.queries"] ?? 0,
      refused: s.counters["db.refused"] ?? 0,
      failed: s.failures,
      p99Millis: s.p99
    }))
    return {
      name,
      report,
      seconds,
      transitions: transitions === undefined ? [] : Array.from(yield* Queue.takeAll(transitions)),
      summary: summarize(seconds, config)
    } satisfies Lane
  })

/**
 * Runs every strategy of the config. Its own `TestContext` gives the library a Clock that starts at
 * 0, so transition times read as seconds of the replay.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (config: Config): Effect.Effect<Result> =>
  Effect.gen(function* () {
    const zipf = new Zipf(config.keys, config.zipf)
    const keyNames = Array.from({ length: config.keys }, (_, i) => `project:${i}`)
    const lanes: Array<Lane> = []
    for (const name of config.strategies) lanes.push(yield* runLane(name, config, zipf, keyNames))
    return { config, lanes }
  }).pipe(Effect.scoped, Effect.orDie, Effect.provide(TestContext.TestContext))
