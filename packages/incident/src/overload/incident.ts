/**
 * Incident 2 for the list `pnpm start` runs: its flags, and its result as an `Outcome` to draw.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { choice, hour, invalid, number, seconds, time } from "../Flags.js"
import { group, type Incident, type Outcome, p99Panel } from "../Incident.js"
import { type Config, defaults, descriptions, type Lane, names, type Result, run } from "./Overload.js"

const percent = (share: number): string => `${Math.round(share * 100)}%`
const serves = (config: Config): number => (config.capacity * 1000) / config.baseMillis

/**
 * The model in a few lines, with every number it used.
 *
 * @since 0.1.0
 * @category text
 */
export const describe = (config: Config): string =>
  [
    `a dependency serving ${config.capacity} calls at once in ${config.baseMillis} ms (${group(serves(config))} calls/s), slower beyond;`,
    `${group(config.load * serves(config))} calls/s arrive (${config.load}x); callers give up at ${config.deadlineMillis / 1000} s;`,
    `the dependency still finishes what they abandoned; its capacity halves from ${config.halvedFromMillis / 1000} s to ${config.halvedToMillis / 1000} s;`,
    `${config.durationMillis / 1000} s of virtual time.`
  ].join("\n")

const settled = (seconds: number | undefined): string => (seconds === undefined ? "never" : `${seconds} s`)

/**
 * One line per strategy: goodput, failed and rejected calls, the p99 of admitted calls, and how
 * long it took to settle after each change of the capacity.
 *
 * @since 0.1.0
 * @category text
 */
export const verdict = (lane: Lane, config: Config): { readonly good: boolean; readonly text: string } => {
  const s = lane.summary
  // Coming through: settled (each second: goodput >= 90% of capacity, p99 of admitted calls <= 2x
  // base) within 10 s of each change.
  const good = s.settleHalved !== undefined && s.settleHalved <= 10 && s.settleBack !== undefined && s.settleBack <= 10
  const failed = s.failed === 0 ? "none timed out" : `${group(s.failed)} timed out`
  const settling =
    s.settleHalved === undefined && s.settleBack === undefined
      ? "never settled"
      : `settled ${settled(s.settleHalved)} after C halved, ${settled(s.settleBack)} after it came back`
  return {
    good,
    text:
      `goodput ${percent(s.goodput)} of capacity; ${failed}; ${group(s.rejected)} rejected; ` +
      `p99 ${group(s.p99)} ms (${(s.p99 / config.baseMillis).toFixed(1)}x base); ${settling}`
  }
}

/**
 * The result, ready to draw.
 *
 * @since 0.1.0
 * @category text
 */
export const outcome = (result: Result): Outcome => {
  const { config } = result
  const described = descriptions(config)
  return {
    name: "overload",
    title: "An overload: twice what the dependency can serve",
    story:
      `Callers sent a dependency ${config.load}x what it can serve, and then its capacity halved for ` +
      `${(config.halvedToMillis - config.halvedFromMillis) / 1000} s. Without a limit every call waits behind ` +
      "calls its callers abandoned, and soon nothing is answered in time. A limit turns the excess away at once; " +
      "an adaptive one also finds the new capacity by itself.",
    setup: describe(config),
    criteria: `settled within 10 s of each change of the capacity (each second: answered in time at least 90% of capacity, p99 of admitted calls at most ${group(2 * config.baseMillis)} ms, 2x base)`,
    seconds: Math.ceil(config.durationMillis / 1000),
    marks: [
      {
        from: config.halvedFromMillis / 1000,
        to: config.halvedToMillis / 1000,
        label: `capacity halved (${group(serves(config) / 2)} calls/s)`
      }
    ],
    panels: [
      {
        key: "goodput",
        title: "answered in time/s",
        short: "ok/s",
        per: "second",
        capacity: { value: serves(config), label: `capacity ${group(serves(config))}/s`, warnAbove: false }
      },
      p99Panel("p99 of admitted calls, ms", config.deadlineMillis),
      { key: "failed", title: "timed out/s", short: "failed", per: "total" },
      { key: "rejected", title: "rejected at once/s", short: "reject", per: "total" }
    ],
    lanes: result.lanes.map((lane) => {
      const v = verdict(lane, config)
      return {
        name: lane.name,
        description: described[lane.name],
        series: {
          goodput: lane.seconds.map((s) => s.goodput),
          p99: lane.seconds.map((s) => s.p99),
          failed: lane.seconds.map((s) => s.failed),
          rejected: lane.seconds.map((s) => s.rejected)
        },
        episodes: [],
        verdict: v.text,
        good: v.good
      }
    }),
    summary: {
      columns: [
        "strategy",
        "goodput (of capacity)",
        "p99 of admitted calls",
        "failed (timed out)",
        "rejected at once",
        "settled after C halved",
        "settled after C came back"
      ],
      rows: result.lanes.map((lane) => [
        lane.name,
        percent(lane.summary.goodput),
        `${group(lane.summary.p99)} ms`,
        group(lane.summary.failed),
        group(lane.summary.rejected),
        settled(lane.summary.settleHalved),
        settled(lane.summary.settleBack)
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
  name: "overload",
  title: "a dependency at 2x its capacity: no limit, a fixed limit, Gradient2, AIMD",
  flags: [
    { name: "capacity", help: `calls the dependency serves at once (default ${defaults.capacity})` },
    { name: "base", help: `its latency within capacity (default ${defaults.baseMillis}ms)` },
    { name: "timeout", help: `callers give up after (default ${seconds(defaults.deadlineMillis)})` },
    { name: "load", help: `arrivals as a multiple of what it serves (default ${defaults.load})` },
    { name: "halved-from", help: `the capacity halves at (default ${seconds(defaults.halvedFromMillis)})` },
    { name: "halved-to", help: `and comes back at (default ${seconds(defaults.halvedToMillis)})` },
    { name: "fixed-limit", help: `the fixed strategy's limit (default ${defaults.fixedLimit})` },
    {
      name: "limiters",
      help: `comma-separated, from: ${names.join(", ")} (default: all)\n${names.map((n) => `  ${n.padEnd(10)} ${descriptions(defaults)[n]}`).join("\n")}`
    },
    { name: "overload-duration", help: `virtual time replayed (default ${seconds(defaults.durationMillis)})` }
  ],
  plan: (values) => {
    const config: Config = {
      capacity: number("capacity", values.capacity, defaults.capacity, { min: 1, max: 10_000, whole: true }),
      baseMillis: time("base", values.base, defaults.baseMillis, { minMillis: 1, maxMillis: 60_000 }),
      deadlineMillis: time("timeout", values.timeout, defaults.deadlineMillis, { minMillis: 1, maxMillis: hour }),
      load: number("load", values.load, defaults.load, { min: 0, max: 20 }),
      halvedFromMillis: time("halved-from", values["halved-from"], defaults.halvedFromMillis, {
        minMillis: 0,
        maxMillis: hour
      }),
      halvedToMillis: time("halved-to", values["halved-to"], defaults.halvedToMillis, {
        minMillis: 0,
        maxMillis: hour
      }),
      durationMillis: time("overload-duration", values["overload-duration"], defaults.durationMillis, {
        minMillis: 1000,
        maxMillis: hour
      }),
      fixedLimit: number("fixed-limit", values["fixed-limit"], defaults.fixedLimit, {
        min: 1,
        max: 100_000,
        whole: true
      }),
      strategies: choice("limiters", values.limiters, names, defaults.strategies)
    }
    if (!(config.halvedFromMillis < config.halvedToMillis && config.halvedToMillis <= config.durationMillis)) {
      throw invalid(
        "halved-to",
        "the capacity must halve before it comes back, and come back within --overload-duration"
      )
    }
    return { name: "overload", setup: describe(config), run: Effect.map(run(config), outcome) }
  }
}
