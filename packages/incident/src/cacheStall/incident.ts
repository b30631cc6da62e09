/**
 * Incident 1 for the list `pnpm start` runs: its flags, and its result as an `Outcome` to draw
 * (verdicts, panels, the headline table).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { choice, hour, number, seconds, time } from "../Flags.js"
import { group, type Incident, type Lane as DrawnLane, openEpisodes, type Outcome, p99Panel } from "../Incident.js"
import { type Config, defaults, type Lane, type Result, run } from "./CacheStall.js"
import * as Strategies from "./Strategies.js"

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

/** What earns a tick: the database over its capacity no longer than this, in whole seconds (as it is counted). */
const overCapacityAllowance = (config: Config): number =>
  Math.max(2, Math.floor(Math.ceil(config.stallMillis / 1000) / 3))

/**
 * What earns a strategy its tick, in words (on the chart, the verdicts and the report).
 *
 * @since 0.1.0
 * @category text
 */
export const criteria = (config: Config): string =>
  `database over its capacity at most ${overCapacityAllowance(config)} s (the stall's own burst), and misses back to normal before the end`

const millis = (ms: number): string => (ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${group(ms)} ms`)

/**
 * One line per strategy: whether the database stayed under its capacity, the failed requests, how
 * long requests were held, and how long misses took to come back.
 *
 * @since 0.1.0
 * @category text
 */
export const verdict = (lane: Lane, config: Config): { readonly good: boolean; readonly text: string } => {
  const s = lane.summary
  const good = s.overCapacitySeconds <= overCapacityAllowance(config) && s.recoverySeconds !== undefined
  const load =
    s.overCapacitySeconds === 0
      ? "database never over capacity"
      : `database over capacity ${s.overCapacitySeconds} s (peak ${group(s.peakQueries)} q/s)`
  const held =
    s.slowSeconds === 0
      ? `p99 within the deadline (worst ${millis(s.worstP99Millis)})`
      : `p99 ${millis(s.worstP99Millis)} at worst, past the deadline ${s.slowSeconds} s`
  const back =
    s.recoverySeconds === undefined
      ? "misses not back to normal by the end"
      : `misses back to normal ${s.recoverySeconds} s after the stall began`
  return { good, text: `${load}; ${group(s.failed)} failed requests; ${held}; ${back}` }
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
        failed: lane.seconds.map((s) => s.failed),
        p99: lane.seconds.map((s) => s.p99Millis)
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
      `A cache stalled for ${config.stallMillis / 1000} s: every call waited on it, and failed together when the stuck ` +
      "connection was dropped. Only then did the breakers see failures, so no breaker spared a request the stall held " +
      "(the p99 column: the same in every row). They opened on that burst and stayed open " +
      `${config.openForMillis / 1000} s after the cache was back, and every read they shed became a database query: ` +
      "load moved from an elastic dependency onto an inelastic one. A breaker that sheds reads needs single flight " +
      "behind it, which caps what reaches the database; a breaker alone moves the load, it does not remove it.",
    setup: describe(config),
    criteria: criteria(config),
    seconds,
    marks:
      config.stallMillis > 0
        ? [
            {
              from: config.stallAtMillis / 1000,
              to: (config.stallAtMillis + config.stallMillis) / 1000,
              label: "cache stall (its stuck calls all fail when it ends)"
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
      { key: "failed", title: "failed requests/s", short: "failed", per: "total" },
      p99Panel("p99 latency, ms", config.deadlineMillis)
    ],
    lanes,
    summary: {
      columns: [
        "strategy",
        "peak database load",
        "seconds over capacity",
        "failed requests",
        "worst p99 (seconds past the deadline)",
        "misses back to normal"
      ],
      rows: result.lanes.map((lane) => [
        lane.name,
        `${group(lane.summary.peakQueries)} q/s`,
        `${lane.summary.overCapacitySeconds} s`,
        group(lane.summary.failed),
        `${millis(lane.summary.worstP99Millis)} (${lane.summary.slowSeconds} s)`,
        lane.summary.recoverySeconds === undefined
          ? "not by the end"
          : `${lane.summary.recoverySeconds} s after the stall began`
      ])
    }
  }
}

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
