/**
 * Incident 3 for the list `pnpm start` runs: its flags, and its result as an `Outcome` to draw.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { choice, hour, invalid, number, seconds, time } from "../Flags.js"
import { group, type Incident, openEpisodes, type Outcome } from "../Incident.js"
import { type Config, defaults, descriptions, type Lane, names, type Result, run } from "./RetryStorm.js"

const times = (n: number): string => `${n.toFixed(n < 0.1 ? 3 : 2)}x`
const back = (millis: number): string =>
  millis === 0 ? "at once" : `${(millis / 1000).toFixed(millis < 10_000 ? 2 : 1)} s after the recovery`

/**
 * The model in a few lines, with every number it used.
 *
 * @since 0.1.0
 * @category text
 */
export const describe = (config: Config): string =>
  [
    `${group(config.rate)} calls/s (first attempts) to a dependency answering in ${config.latencyMillis} ms;`,
    `it fails every call from ${config.outageAtMillis / 1000} s for ${config.outageMillis / 1000} s, then recovers; a breaker opens for ${config.openForMillis / 1000} s;`,
    `retries go at once (Schedule.recurs(3)); ${config.durationMillis / 1000} s of virtual time.`
  ].join("\n")

/** Failed requests that arrived once the dependency was back: what a strategy adds to the outage's own. */
const failedAfterRecovery = (lane: Lane, config: Config): number =>
  lane.seconds
    .slice(Math.ceil((config.outageAtMillis + config.outageMillis) / 1000))
    .reduce((sum, s) => sum + s.failed, 0)

const failures = (lane: Lane, config: Config): string =>
  `${group(lane.summary.failed)} failed requests (${group(failedAfterRecovery(lane, config))} after the recovery)`

/**
 * One line per strategy: the load on the failing dependency, failed requests, and how soon after
 * the recovery calls stopped failing.
 *
 * @since 0.1.0
 * @category text
 */
export const verdict = (lane: Lane, config: Config): { readonly good: boolean; readonly text: string } => {
  const s = lane.summary
  // Coming through: at most a fifth more load than the callers' own while the dependency fails,
  // and back within one open time of the breaker.
  const good = s.amplification <= 1.2 && s.backToNormalMillis <= config.openForMillis
  return {
    good,
    text:
      `${times(s.amplification)} the first attempts on the failing dependency (at most ${group(s.peakAttempts)}/s); ` +
      `${failures(lane, config)}; the last failed attempt ${back(s.backToNormalMillis)}`
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
  const seconds = Math.ceil(config.durationMillis / 1000)
  return {
    name: "retry-storm",
    title: "A retry storm: every caller retries into an outage",
    story:
      `A dependency failed every call for ${config.outageMillis / 1000} s. Each caller retried three times, at once, ` +
      "so the dependency had four times the load while it was down, just when it needed less. A retry budget " +
      "lets through a tenth more retries than first attempts (plus a small floor); a breaker under the retries " +
      "stops sending anything but its probes, at the price of failing calls until its probe finds the dependency back.",
    setup: describe(config),
    criteria: `at most 1.2x the first attempts on the failing dependency, and no failed attempt later than ${config.openForMillis / 1000} s (one open time) after the recovery`,
    seconds,
    marks: [
      {
        from: config.outageAtMillis / 1000,
        to: (config.outageAtMillis + config.outageMillis) / 1000,
        label: "the dependency fails every call"
      }
    ],
    panels: [
      {
        key: "attempts",
        title: "attempts/s on the dependency",
        short: "tries/s",
        per: "second",
        capacity: { value: config.rate, label: `first attempts ${group(config.rate)}/s` }
      },
      { key: "failed", title: "failed requests/s", short: "failed", per: "total" }
    ],
    lanes: result.lanes.map((lane) => {
      const v = verdict(lane, config)
      return {
        name: lane.name,
        description: descriptions[lane.name],
        series: { attempts: lane.seconds.map((s) => s.attempts), failed: lane.seconds.map((s) => s.failed) },
        episodes: openEpisodes(lane.transitions, seconds),
        verdict: v.text,
        good: v.good
      }
    }),
    summary: {
      columns: [
        "strategy",
        "load on the failing dependency",
        "busiest second of the outage",
        "peak amplification",
        "failed requests (after the recovery)",
        "last failed attempt"
      ],
      rows: result.lanes.map((lane) => [
        lane.name,
        `${times(lane.summary.amplification)} the first attempts`,
        `${group(lane.summary.peakAttempts)} attempts/s`,
        times(lane.summary.peakAmplification),
        `${group(lane.summary.failed)} (${group(failedAfterRecovery(lane, config))})`,
        back(lane.summary.backToNormalMillis)
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
  name: "retry-storm",
  title: "retries into a minute of outage: plain, budgeted, budgeted + breaker",
  flags: [
    { name: "callers", help: `first attempts per second (default ${defaults.rate})` },
    { name: "latency", help: `the dependency's latency (default ${defaults.latencyMillis}ms)` },
    { name: "outage-at", help: `when the dependency starts failing (default ${seconds(defaults.outageAtMillis)})` },
    { name: "outage", help: `how long it fails every call (default ${seconds(defaults.outageMillis)})` },
    { name: "breaker-open", help: `how long the breaker stays open (default ${seconds(defaults.openForMillis)})` },
    {
      name: "retries",
      help: `comma-separated, from: ${names.join(", ")} (default: all)\n${names.map((n) => `  ${n.padEnd(15)} ${descriptions[n]}`).join("\n")}`
    },
    { name: "storm-duration", help: `virtual time replayed (default ${seconds(defaults.durationMillis)})` }
  ],
  plan: (values) => {
    const config: Config = {
      rate: number("callers", values.callers, defaults.rate, { min: 1, max: 20_000 }),
      latencyMillis: time("latency", values.latency, defaults.latencyMillis, { minMillis: 0, maxMillis: 60_000 }),
      outageAtMillis: time("outage-at", values["outage-at"], defaults.outageAtMillis, {
        minMillis: 0,
        maxMillis: hour
      }),
      outageMillis: time("outage", values.outage, defaults.outageMillis, { minMillis: 1, maxMillis: hour }),
      openForMillis: time("breaker-open", values["breaker-open"], defaults.openForMillis, {
        minMillis: 1,
        maxMillis: hour
      }),
      durationMillis: time("storm-duration", values["storm-duration"], defaults.durationMillis, {
        minMillis: 1000,
        maxMillis: hour
      }),
      strategies: choice("retries", values.retries, names, defaults.strategies)
    }
    if (config.outageAtMillis + config.outageMillis > config.durationMillis) {
      throw invalid("outage", "the outage must end within --storm-duration")
    }
    return { name: "retry-storm", setup: describe(config), run: Effect.map(run(config), outcome) }
  }
}
