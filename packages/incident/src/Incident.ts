/**
 * What an incident replay is, to the command line and the reports: a list of these is what
 * `pnpm start` runs. An incident parses its own flags, runs its strategies in virtual time, and
 * hands back an `Outcome` that the terminal, SVG and HTML reports draw without knowing the model.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as TestContext from "effect/TestContext"

/**
 * One quantity charted per second (a column of the chart, a column group of the table).
 *
 * @since 0.1.0
 * @category models
 */
export interface Panel {
  readonly key: string
  /** Chart title, e.g. "database queries/s". */
  readonly title: string
  /** Table column, e.g. "db/s". */
  readonly short: string
  /** In the per-interval table: the mean per second, or the total over the interval. */
  readonly per: "second" | "total"
  /**
   * A line drawn across the panel, e.g. the database's capacity. Above it is a warning (a shaded
   * cell in the table, a `!` in the terminal) unless `warnAbove` is false: answers at the
   * capacity are what a limiter aims for.
   */
  readonly capacity?:
    | {
        readonly value: number
        readonly label: string
        readonly warnAbove?: boolean | undefined
        /**
         * What the line is: a capacity (red dashes, the default) or a deadline (dark dots), so the
         * two read apart on one chart.
         */
        readonly kind?: "capacity" | "deadline" | undefined
      }
    | undefined
}

/**
 * A number for the reports: rounded, with thousands separated ("12,345").
 *
 * @since 0.1.0
 * @category text
 */
export const group = (n: number): string => Math.round(n).toLocaleString("en-US")

/**
 * The panel of the p99 latency per second against the callers' deadline (a dotted line, not a
 * capacity). Its key is "p99": a lane's series of that name is drawn on it.
 *
 * @since 0.1.0
 * @category panels
 */
export const p99Panel = (title: string, deadlineMillis: number): Panel => ({
  key: "p99",
  title,
  short: "p99 ms",
  per: "second",
  capacity: {
    value: deadlineMillis,
    label: `deadline ${group(deadlineMillis)} ms`,
    kind: "deadline"
  }
})

/**
 * A panel's figure for one lane over the seconds [from, to) of a report's interval: the mean per
 * second or the total, as the panel's `per` says, with the seconds it was taken from.
 *
 * @since 0.1.0
 * @category text
 */
export const intervalFigure = (
  lane: Lane,
  panel: Panel,
  from: number,
  to: number
): { readonly value: number; readonly seconds: ReadonlyArray<number> } => {
  const seconds = (lane.series[panel.key] ?? []).slice(from, to)
  const total = seconds.reduce((sum, n) => sum + n, 0)
  return { value: panel.per === "second" ? total / (to - from) : total, seconds }
}

/**
 * What one strategy went through.
 *
 * @since 0.1.0
 * @category models
 */
export interface Lane {
  readonly name: string
  readonly description: string
  /** Per second, by panel key. */
  readonly series: Readonly<Record<string, ReadonlyArray<number>>>
  /** The breaker's open episodes, [from, to) in seconds. */
  readonly episodes: ReadonlyArray<readonly [number, number]>
  /** One line: how it went. */
  readonly verdict: string
  /** Whether it came through (a tick or a cross in front of the verdict). */
  readonly good: boolean
}

/**
 * An incident's result, ready to draw.
 *
 * @since 0.1.0
 * @category models
 */
export interface Outcome {
  readonly name: string
  readonly title: string
  /** What happened, in a paragraph. */
  readonly story: string
  /** The model's numbers, in a few lines. */
  readonly setup: string
  /** What earns a strategy its tick, e.g. "database over capacity at most 2 s, ...". */
  readonly criteria: string
  readonly seconds: number
  /** Spans to shade on every panel, e.g. the stall. */
  readonly marks: ReadonlyArray<{ readonly from: number; readonly to: number; readonly label: string }>
  readonly panels: ReadonlyArray<Panel>
  readonly lanes: ReadonlyArray<Lane>
  /** The headline figures: a header and a row per strategy. */
  readonly summary: { readonly columns: ReadonlyArray<string>; readonly rows: ReadonlyArray<ReadonlyArray<string>> }
}

/**
 * An incident with its flags read: what it will run, and the run.
 *
 * @since 0.1.0
 * @category models
 */
export interface Planned {
  readonly name: string
  readonly setup: string
  readonly run: Effect.Effect<Outcome>
}

/**
 * One incident of the replay.
 *
 * @since 0.1.0
 * @category models
 */
export interface Incident {
  /** The name `--incident` takes, e.g. "cache-stall". */
  readonly name: string
  readonly title: string
  /** Its flags (each takes a value), with their help lines. */
  readonly flags: ReadonlyArray<{ readonly name: string; readonly help: string }>
  /** Reads its flags (absent ones take their defaults); throws `InvalidFlag` (see Flags). */
  readonly plan: (values: Readonly<Record<string, string | undefined>>) => Planned
}

/**
 * The open episodes of a breaker, as [from, to) in seconds from its transitions.
 *
 * @since 0.1.0
 * @category models
 */
export const openEpisodes = (
  transitions: ReadonlyArray<{ readonly to: string; readonly at: number }>,
  endSeconds: number
): Array<readonly [number, number]> => {
  const episodes: Array<readonly [number, number]> = []
  let openedAt: number | undefined
  for (const t of transitions) {
    if (t.to === "Open" && openedAt === undefined) openedAt = t.at / 1000
    if (t.to === "Closed" && openedAt !== undefined) {
      episodes.push([openedAt, t.at / 1000])
      openedAt = undefined
    }
  }
  if (openedAt !== undefined) episodes.push([openedAt, endSeconds])
  return episodes
}

/**
 * Runs one lane per strategy, one after another, each in a scope and a `TestContext` of its own:
 * a Clock that starts at 0, so times read as seconds of the replay. A failure is a bug of the
 * model: it dies.
 *
 * @since 0.1.0
 * @category running
 */
export const runLanes = <N, L, E>(
  names: ReadonlyArray<N>,
  lane: (name: N) => Effect.Effect<L, E, Scope.Scope>
): Effect.Effect<Array<L>> =>
  Effect.forEach(names, (name) => lane(name).pipe(Effect.scoped, Effect.provide(TestContext.TestContext))).pipe(
    Effect.orDie
  )
