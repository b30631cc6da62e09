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
import { choice, number, time } from "../Flags.js"
import { type Incident, type Lane as DrawnLane, openEpisodes, type Outcome } from "../Incident.js"
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
      failed: s.failures
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

const group = (n: number): string => Math.round(n).toLocaleString("en-US")

/**
 * The model in a few lines, with every number it used.
 *
 * @since 0.1.0
 * @category text
 */
export const describe = (config: Config): string =>
  [
    `${group(config.rate)} requests/s over ${group(config.keys)} keys (Zipf ${config.zipf}), cache TTL ${config.ttlMillis / 1000} s;`,
    `a database serving ${group(config.dbCapacity)} queries/s (${config.dbLatencyMillis} ms when idle, slower as it fills);`,
    `the cache stalls for ${config.stallMillis / 1000} s at ${config.stallAtMillis / 1000} s; the breaker stays open ${config.openForMillis / 1000} s;`,
    `a request not answered within ${config.deadlineMillis / 1000} s has failed; ${config.durationMillis / 1000} s of virtual time.`
  ].join("\n")

/**
 * One line per strategy: whether the database stayed under its capacity, the failed requests, and
 * how long misses took to come back.
 *
 * @since 0.1.0
 * @category text
 */
export const verdict = (lane: Lane, config: Config): { readonly good: boolean; readonly text: string } => {
  const s = lane.summary
  const stallSeconds = Math.ceil(config.stallMillis / 1000)
  // Coming through: the database over its capacity no longer than the stall's own burst, and the
  // cache back to its usual misses before the end.
  const good = s.overCapacitySeconds <= Math.max(2, stallSeconds / 3) && s.recoverySeconds !== undefined
  const load =
    s.overCapacitySeconds === 0
      ? "database never over capacity"
      : `database over capacity ${s.overCapacitySeconds} s (peak ${group(s.peakQueries)} q/s)`
  const back =
    s.recoverySeconds === undefined
      ? "misses not back to normal by the end"
      : `misses back to normal ${s.recoverySeconds} s after the stall began`
  return { good, text: `${load}; ${group(s.failed)} failed requests; ${back}` }
}

/**
 * The result, ready to draw.
 *
 * @since 0.1.0
 * @category text
 */
export const outcome = (result: Result): Outcome => {
  const { config } = result
  const seconds = Math.ceil(config.durationMillis / 1000)
  const lanes: Array<DrawnLane> = result.lanes.map((lane) => {
    const v = verdict(lane, config)
    return {
      name: lane.name,
      description: Strategies.descriptions[lane.name],
      series: {
        misses: lane.seconds.map((s) => s.misses),
        queries: lane.seconds.map((s) => s.queries),
        failed: lane.seconds.map((s) => s.failed)
      },
      episodes: openEpisodes(lane.transitions, seconds),
      verdict: v.text,
      good: v.good
    }
  })
  return {
    name: "cache-stall",
    title: "A cache stall, a breaker, and the database behind it",
    story:
      `A cache stalled for ${config.stallMillis / 1000} s. Its breaker opened and stayed open ${config.openForMillis / 1000} s, ` +
      "and every read it shed became a database query: the breaker moved the load from an elastic " +
      "dependency onto an inelastic one. The strategies differ in what they do while the circuit is open.",
    setup: describe(config),
    seconds,
    marks:
      config.stallMillis > 0
        ? [
            {
              from: config.stallAtMillis / 1000,
              to: (config.stallAtMillis + config.stallMillis) / 1000,
              label: "cache stall"
            }
          ]
        : [],
    panels: [
      { key: "misses", title: "cache misses/s", short: "miss/s", per: "second" },
      {
        key: "queries",
        title: "database queries/s",
        short: "db/s",
        per: "second",
        capacity: { value: config.dbCapacity, label: `capacity ${group(config.dbCapacity)}/s` }
      },
      { key: "failed", title: "failed requests/s", short: "failed", per: "total" }
    ],
    lanes,
    summary: {
      columns: ["strategy", "peak database load", "seconds over capacity", "failed requests", "misses back to normal"],
      rows: result.lanes.map((lane) => [
        lane.name,
        `${group(lane.summary.peakQueries)} q/s`,
        `${lane.summary.overCapacitySeconds} s`,
        group(lane.summary.failed),
        lane.summary.recoverySeconds === undefined
          ? "not by the end"
          : `${lane.summary.recoverySeconds} s after the stall began`
      ])
    }
  }
}

const seconds = (ms: number) => `${ms / 1000}s`
const hour = 3_600_000

/**
 * The incident, for the list `pnpm start` runs.
 *
 * @since 0.1.0
 * @category incidents
 */
export const incident: Incident = {
  name: "cache-stall",
  title: "a cache stall opens the cache's breaker; the database takes the misses",
  flags: [
    { name: "rate", help: `requests per second (default ${defaults.rate})` },
    { name: "keys", help: `distinct keys (default ${defaults.keys})` },
    { name: "zipf", help: `popularity skew: key i ~ 1 / i^s (default ${defaults.zipf})` },
    { name: "ttl", help: `how long a cache entry lives (default ${seconds(defaults.ttlMillis)})` },
    {
      name: "db-capacity",
      help: `queries per second the database serves; more are refused (default ${defaults.dbCapacity})`
    },
    {
      name: "db-latency",
      help: `database latency when idle; up to 10x as it fills (default ${defaults.dbLatencyMillis}ms)`
    },
    { name: "stall-at", help: `when the cache stalls (default ${seconds(defaults.stallAtMillis)})` },
    { name: "stall", help: `how long the cache answers nothing (default ${seconds(defaults.stallMillis)})` },
    {
      name: "cache-timeout",
      help: `deadline of one cache call; shorter than the stall, calls fail at it\ninstead of when the stall ends (default ${seconds(defaults.cacheTimeoutMillis)})`
    },
    { name: "open-for", help: `how long the breaker stays open (default ${seconds(defaults.openForMillis)})` },
    { name: "deadline", help: `a request answered later has failed (default ${seconds(defaults.deadlineMillis)})` },
    { name: "duration", help: `virtual time replayed (default ${seconds(defaults.durationMillis)})` },
    {
      name: "strategies",
      help: `comma-separated, from: ${Strategies.names.join(", ")} (default: all)\n${Strategies.names.map((n) => `  ${n.padEnd(14)} ${Strategies.descriptions[n]}`).join("\n")}`
    },
    { name: "max-loads", help: `single-flight: cap on concurrent loads (default ${defaults.maxConcurrentLoads})` },
    { name: "seed", help: `seed of the traffic (default ${defaults.seed})` }
  ],
  plan: (values) => {
    const config: Config = {
      rate: number("rate", values.rate, defaults.rate, { min: 1, max: 20_000 }),
      keys: number("keys", values.keys, defaults.keys, { min: 1, max: 2_000_000, whole: true }),
      zipf: number("zipf", values.zipf, defaults.zipf, { min: 0, max: 5 }),
      ttlMillis: time("ttl", values.ttl, defaults.ttlMillis, { minMillis: 1, maxMillis: 24 * hour }),
      dbCapacity: number("db-capacity", values["db-capacity"], defaults.dbCapacity, { min: 1, max: 1_000_000 }),
      dbLatencyMillis: time("db-latency", values["db-latency"], defaults.dbLatencyMillis, {
        minMillis: 0,
        maxMillis: 60_000
      }),
      stallAtMillis: time("stall-at", values["stall-at"], defaults.stallAtMillis, { minMillis: 0, maxMillis: hour }),
      stallMillis: time("stall", values.stall, defaults.stallMillis, { minMillis: 0, maxMillis: hour }),
      cacheTimeoutMillis: time("cache-timeout", values["cache-timeout"], defaults.cacheTimeoutMillis, {
        minMillis: 1,
        maxMillis: hour
      }),
      openForMillis: time("open-for", values["open-for"], defaults.openForMillis, { minMillis: 0, maxMillis: hour }),
      deadlineMillis: time("deadline", values.deadline, defaults.deadlineMillis, { minMillis: 1, maxMillis: hour }),
      durationMillis: time("duration", values.duration, defaults.durationMillis, { minMillis: 1000, maxMillis: hour }),
      maxConcurrentLoads: number("max-loads", values["max-loads"], defaults.maxConcurrentLoads, {
        min: 1,
        max: 1_000_000,
        whole: true
      }),
      strategies: choice("strategies", values.strategies, Strategies.names, defaults.strategies),
      seed: number("seed", values.seed, defaults.seed, { min: 0, max: 2 ** 32 - 1, whole: true })
    }
    return { name: "cache-stall", setup: describe(config), run: Effect.map(run(config), outcome) }
  }
}
