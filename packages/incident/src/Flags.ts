/**
 * The replay's command line: global flags, `--incident` to choose, and each incident's own flags
 * (every number of its model is one).
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import type { Incident, Planned } from "./Incident.js"

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
  /** The chosen incidents, in the order of the list, their flags read. */
  readonly incidents: ReadonlyArray<Planned>
  /** Seconds per row of the table. */
  readonly intervalSeconds: number
  /** The folder to write the charts and the HTML report to; undefined: one in the temporary folder. */
  readonly out: string | undefined
  readonly color: boolean | undefined
}

/**
 * The error for a flag.
 *
 * @since 0.1.0
 * @category errors
 */
export const invalid = (flag: string, message: string): InvalidFlag =>
  new InvalidFlag({ flag, message: `--${flag}: ${message}` })

/**
 * A number flag: its value, or `fallback` when it is absent; throws `InvalidFlag` out of range.
 *
 * @since 0.1.0
 * @category parsing
 */
export const number = (
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

/**
 * A time flag (500ms, 6s, 2m; a bare number is seconds), in milliseconds.
 *
 * @since 0.1.0
 * @category parsing
 */
export const time = (
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
 * An hour in milliseconds: the longest most time flags take.
 *
 * @since 0.1.0
 * @category parsing
 */
export const hour = 3_600_000

/**
 * A time as a time flag takes it, in whole or fractional seconds (e.g. "1.5s"), for the defaults
 * in the help.
 *
 * @since 0.1.0
 * @category parsing
 */
export const seconds = (millis: number): string => `${millis / 1000}s`

/**
 * A comma-separated choice from `names` (at least one); `fallback` when absent.
 *
 * @since 0.1.0
 * @category parsing
 */
export const choice = <A extends string>(
  flag: string,
  raw: string | undefined,
  names: ReadonlyArray<A>,
  fallback: ReadonlyArray<A>
): ReadonlyArray<A> => {
  if (raw === undefined) return fallback
  const chosen = raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
  for (const name of chosen) {
    if (!(names as ReadonlyArray<string>).includes(name)) {
      throw invalid(flag, `unknown name ${JSON.stringify(name)}; the names are ${names.join(", ")}`)
    }
  }
  if (chosen.length === 0) throw invalid(flag, "name at least one")
  return chosen as Array<A>
}

const global = {
  incident: { type: "string" },
  interval: { type: "string" },
  out: { type: "string" },
  color: { type: "boolean" },
  "no-color": { type: "boolean" },
  help: { type: "boolean", short: "h" }
} as const

/**
 * The `--help` text for these incidents.
 *
 * @since 0.1.0
 * @category text
 */
export const help = (incidents: ReadonlyArray<Incident>): string => `Usage: pnpm start [-- flags]

Replays production incidents in virtual time, each through several strategies side by side, built
from the real library (@circuitry/*) and run with @circuitry/chaos: the same traffic and the same
faults for every strategy, the same numbers on every run.

  --incident <list>      comma-separated, from: ${incidents.map((i) => i.name).join(", ")} (default: all)
${incidents.map((i) => `                           ${i.name.padEnd(14)} ${i.title}`).join("\n")}
  --interval <time>      one table row per interval                (default 10s)
  --out <folder>         write the SVG charts and report.html there
                         (default: a new folder in the temporary folder, per run)
  --color / --no-color   colour the terminal (default: when the output is a terminal)
  --help                 this text
${incidents
  .map(
    (i) =>
      `\nFlags of ${i.name}: ${i.title}\n${i.flags.map((f) => `  --${f.name.padEnd(21)}${f.help.replace(/\n/g, "\n" + " ".repeat(25))}`).join("\n")}`
  )
  .join("\n")}

Times take a unit: 500ms, 6s, 2m (a bare number is seconds). A flag of an incident applies to
every chosen incident that has it.
`

/**
 * Reads the command line (without `node` and the script).
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (
  argv: ReadonlyArray<string>,
  incidents: ReadonlyArray<Incident>
): Either.Either<Command, InvalidFlag> => {
  try {
    // `pnpm start -- --help` passes the `--` on: it is not an argument.
    const args = argv[0] === "--" ? argv.slice(1) : [...argv]
    const own = Object.fromEntries(incidents.flatMap((i) => i.flags.map((f) => [f.name, { type: "string" } as const])))
    const { values } = parseArgs({ args, options: { ...own, ...global }, strict: true, allowPositionals: false })
    const names = incidents.map((i) => i.name)
    const chosen = choice("incident", values.incident === "all" ? undefined : values.incident, names, names)
    const selected = incidents.filter((i) => chosen.includes(i.name))
    const given = values as Record<string, string | boolean | undefined>
    for (const name of Object.keys(own)) {
      if (given[name] !== undefined && !selected.some((i) => i.flags.some((f) => f.name === name))) {
        const owners = incidents.filter((i) => i.flags.some((f) => f.name === name)).map((i) => i.name)
        throw invalid(name, `belongs to ${owners.join(", ")}, which --incident does not choose`)
      }
    }
    const strings = Object.fromEntries(Object.keys(own).map((name) => [name, given[name] as string | undefined]))
    const planned = selected.map((incident) => incident.plan(strings))
    const intervalMillis = time("interval", values.interval, 10_000, { minMillis: 1000, maxMillis: 3_600_000 })
    if (intervalMillis % 1000 !== 0) throw invalid("interval", `must be whole seconds, got ${values.interval}`)
    if (values.out !== undefined && values.out.trim() === "") throw invalid("out", "must be a folder")
    return Either.right({
      help: values.help === true,
      incidents: planned,
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

/**
 * Where the charts and the report go: `--out`, relative to `cwd` (where the command was typed), or
 * a new folder in the temporary folder, so that two runs never overwrite each other's charts.
 */
export const outputFolder = (out: string | undefined, cwd: string): string =>
  out === undefined ? fs.mkdtempSync(path.join(os.tmpdir(), "circuitry-incident-replay-")) : path.resolve(cwd, out)
