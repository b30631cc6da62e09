/**
 * The replay's command line: every number of the model is a flag.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { parseArgs } from "node:util"
import { type Config, defaults } from "./Replay.js"
import * as Strategies from "./Strategies.js"

/**
 * A flag with a value it cannot take; `message` names the flag and what it must be.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidFlag extends Schema.TaggedError<InvalidFlag>()("InvalidFlag", {
  flag: Schema.String,
  message: Schema.String
}) {}

/**
 * What the command line asks for.
 *
 * @since 0.1.0
 * @category models
 */
export interface Command {
  readonly help: boolean
  readonly config: Config
  /** Seconds per row of the table. */
  readonly intervalSeconds: number
  /** Where to write the SVG chart; undefined: a file in the system's temporary folder. */
  readonly out: string | undefined
  readonly color: boolean | undefined
}

const seconds = (ms: number) => `${ms / 1000}`

/**
 * The `--help` text, with the defaults.
 *
 * @since 0.1.0
 * @category text
 */
export const help = `Usage: pnpm start [-- flags]

Replays the cache incident (seeds/repair-while-open): a cache stall opens the cache's circuit
breaker, and the traffic the breaker sheds lands on the database. The same traffic runs through
each strategy side by side, with the real library (CircuitBreaker, Cache.guard, Cache.getOrLoad,
MemoryStore) in virtual time on a TestClock.

Traffic and cache
  --rate <n>             requests per second                       (default ${defaults.rate})
  --keys <n>             distinct keys                             (default ${defaults.keys})
  --zipf <s>             popularity skew: key i ~ 1 / i^s          (default ${defaults.zipf})
  --ttl <time>           how long a cache entry lives              (default ${seconds(defaults.ttlMillis)}s)
Database
  --db-capacity <n>      queries per second it serves; more are refused
                         as "database unavailable"                 (default ${defaults.dbCapacity})
  --db-latency <time>    latency when idle; up to 10x as it fills  (default ${defaults.dbLatencyMillis}ms)
The incident
  --stall-at <time>      when the cache stalls                     (default ${seconds(defaults.stallAtMillis)}s)
  --stall <time>         how long the cache answers nothing        (default ${seconds(defaults.stallMillis)}s)
  --cache-timeout <time> deadline of one cache call; when it is shorter than the stall, calls
                         fail at their deadline instead of when the stall ends
                                                                   (default ${seconds(defaults.cacheTimeoutMillis)}s)
  --open-for <time>      how long the breaker stays open           (default ${seconds(defaults.openForMillis)}s)
  --deadline <time>      a request answered later has failed       (default ${seconds(defaults.deadlineMillis)}s)
  --duration <time>      virtual time replayed                     (default ${seconds(defaults.durationMillis)}s)
Strategies
  --strategies <list>    comma-separated, from: ${Strategies.names.join(", ")}
                         (default: all)
${Strategies.names.map((name) => `                           ${name.padEnd(14)} ${Strategies.descriptions[name]}`).join("\n")}
  --max-loads <n>        single-flight: cap on concurrent loads    (default ${defaults.maxConcurrentLoads})
Output
  --interval <time>      one table row per interval                (default 10s)
  --out <file>           write the SVG chart there (default: a file in the temporary folder)
  --seed <n>             seed of the traffic                       (default ${defaults.seed})
  --color / --no-color   colour the terminal chart (default: when the output is a terminal)
  --help                 this text

Times take a unit: 500ms, 6s, 2m (a bare number is seconds).
`

const flags = {
  rate: { type: "string" },
  keys: { type: "string" },
  zipf: { type: "string" },
  ttl: { type: "string" },
  "db-capacity": { type: "string" },
  "db-latency": { type: "string" },
  "stall-at": { type: "string" },
  stall: { type: "string" },
  "cache-timeout": { type: "string" },
  "open-for": { type: "string" },
  deadline: { type: "string" },
  duration: { type: "string" },
  strategies: { type: "string" },
  "max-loads": { type: "string" },
  interval: { type: "string" },
  out: { type: "string" },
  seed: { type: "string" },
  color: { type: "boolean" },
  "no-color": { type: "boolean" },
  help: { type: "boolean", short: "h" }
} as const

const invalid = (flag: string, message: string) => new InvalidFlag({ flag, message: `--${flag}: ${message}` })

const number = (
  flag: string,
  raw: string | undefined,
  fallback: number,
  rule: { readonly min: number; readonly max: number; readonly whole?: boolean }
): number => {
  if (raw === undefined) return fallback
  const n = Number(raw)
  if (
    raw.trim() === "" ||
    !Number.isFinite(n) ||
    n < rule.min ||
    n > rule.max ||
    (rule.whole === true && !Number.isInteger(n))
  ) {
    throw invalid(
      flag,
      `must be ${rule.whole === true ? "a whole number" : "a number"} from ${rule.min} to ${rule.max}, got ${JSON.stringify(raw)}`
    )
  }
  return n
}

const time = (
  flag: string,
  raw: string | undefined,
  fallbackMillis: number,
  rule: { readonly minMillis: number; readonly maxMillis: number }
): number => {
  if (raw === undefined) return fallbackMillis
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$/.exec(raw)
  const millis = match === null ? NaN : Number(match[1]) * (match[2] === "ms" ? 1 : match[2] === "m" ? 60_000 : 1000)
  if (!(millis >= rule.minMillis && millis <= rule.maxMillis)) {
    throw invalid(
      flag,
      `must be a time from ${rule.minMillis}ms to ${rule.maxMillis / 1000}s (e.g. 500ms, 6s, 2m), got ${JSON.stringify(raw)}`
    )
  }
  return Math.round(millis)
}

/**
 * Reads the command line (without `node` and the script).
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (argv: ReadonlyArray<string>): Either.Either<Command, InvalidFlag> => {
  try {
    // `pnpm start -- --help` passes the `--` on: it is not an argument.
    const args = argv[0] === "--" ? argv.slice(1) : [...argv]
    const { values } = parseArgs({ args, options: flags, strict: true, allowPositionals: false })
    const strategies =
      values.strategies === undefined
        ? defaults.strategies
        : values.strategies
            .split(",")
            .map((s) => s.trim())
            .filter((s) => s !== "")
    for (const name of strategies) {
      if (!(Strategies.names as ReadonlyArray<string>).includes(name)) {
        throw invalid(
          "strategies",
          `unknown strategy ${JSON.stringify(name)}; the strategies are ${Strategies.names.join(", ")}`
        )
      }
    }
    if (strategies.length === 0) throw invalid("strategies", "name at least one strategy")
    const hour = 3_600_000
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
      strategies: strategies as ReadonlyArray<Strategies.StrategyName>,
      seed: number("seed", values.seed, defaults.seed, { min: 0, max: 2 ** 32 - 1, whole: true })
    }
    const intervalMillis = time("interval", values.interval, 10_000, { minMillis: 1000, maxMillis: hour })
    if (intervalMillis % 1000 !== 0) throw invalid("interval", `must be whole seconds, got ${values.interval}`)
    if (values.out !== undefined && values.out.trim() === "") throw invalid("out", "must be a file path")
    return Either.right({
      help: values.help === true,
      config,
      intervalSeconds: intervalMillis / 1000,
      out: values.out,
      color: values["no-color"] === true ? false : values.color === true ? true : undefined
    })
  } catch (error) {
    if (error instanceof InvalidFlag) return Either.left(error)
    // parseArgs: an unknown flag, or a flag without its value.
    const message = error instanceof Error ? error.message : String(error)
    return Either.left(new InvalidFlag({ flag: "", message }))
  }
}
