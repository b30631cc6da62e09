/**
 * The replay's results as text: a table per interval, a summary line per strategy, and charts
 * drawn in the terminal.
 *
 * @since 0.1.0
 */
import type { Second } from "./Model.js"
import type { Config, Lane, Result } from "./Replay.js"
import type { StrategyName } from "./Strategies.js"

/**
 * One plotted quantity.
 *
 * @since 0.1.0
 * @category models
 */
export interface Metric {
  readonly title: string
  readonly value: (second: Second) => number
}

/**
 * What the charts show: the three numbers the incident is about.
 *
 * @since 0.1.0
 * @category models
 */
export const metrics: ReadonlyArray<Metric> = [
  { title: "cache misses/s", value: (s) => s.misses },
  { title: "database queries/s", value: (s) => s.queries },
  { title: "failed requests/s", value: (s) => s.failed }
]

/**
 * Symbol and colour of each strategy, shared by the terminal and SVG charts.
 *
 * @since 0.1.0
 * @category models
 */
export const styles: Record<StrategyName, { readonly symbol: string; readonly ansi: number; readonly color: string }> =
  {
    none: { symbol: "o", ansi: 90, color: "#7f7f7f" },
    shed: { symbol: "x", ansi: 31, color: "#d62728" },
    repair: { symbol: "+", ansi: 34, color: "#1f77b4" },
    "single-flight": { symbol: "*", ansi: 32, color: "#2ca02c" }
  }

const group = (n: number): string => Math.round(n).toLocaleString("en-US")

/**
 * The top of a chart's scale: the highest value once the few highest (a burst of one or two
 * seconds) are set aside, so that a single spike does not flatten everything else. Values above it
 * are drawn clipped at the top.
 *
 * @since 0.1.0
 * @category charts
 */
export const scaleTop = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => b - a)
  const max = sorted[0] ?? 0
  const robust = (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.015))] ?? 0) * 1.2
  return Math.max(1, robust > 0 && robust < max ? robust : max)
}

/** Drawn last, so on top: the strategies the incident is about. */
const drawOrder: ReadonlyArray<StrategyName> = ["none", "single-flight", "repair", "shed"]

/**
 * The model in one paragraph, with every number it used.
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
 * The per-interval table: for each strategy, misses/s and database queries/s (means over the
 * interval) and the failed requests in it.
 *
 * @since 0.1.0
 * @category text
 */
export const table = (result: Result, intervalSeconds: number): string => {
  const lanes = result.lanes
  const cell = 24
  const pad = (s: string, n: number) => s.padStart(n)
  const lines: Array<string> = []
  lines.push(pad("", 9) + lanes.map((lane) => " │ " + lane.name.padEnd(cell)).join(""))
  lines.push(
    pad("time", 9) + lanes.map(() => " │ " + `${pad("miss/s", 7)}${pad("db/s", 8)}${pad("failed", 9)}`).join("")
  )
  const seconds = lanes[0]?.seconds.length ?? 0
  for (let from = 0; from < seconds; from += intervalSeconds) {
    const to = Math.min(seconds, from + intervalSeconds)
    const span = to - from
    const row = lanes.map((lane) => {
      const slice = lane.seconds.slice(from, to)
      const misses = slice.reduce((sum, s) => sum + s.misses, 0) / span
      const queries = slice.reduce((sum, s) => sum + s.queries, 0) / span
      const failed = slice.reduce((sum, s) => sum + s.failed, 0)
      return " │ " + `${pad(group(misses), 7)}${pad(group(queries), 8)}${pad(group(failed), 9)}`
    })
    lines.push(pad(`${from}-${to}s`, 9) + row.join(""))
  }
  return lines.join("\n")
}

/**
 * One line per strategy: peak database load, failed requests, time back to the pre-incident
 * miss rate.
 *
 * @since 0.1.0
 * @category text
 */
export const summary = (result: Result): string => {
  const width = Math.max(...result.lanes.map((lane) => lane.name.length))
  return result.lanes
    .map((lane) => {
      const s = lane.summary
      const back =
        s.recoverySeconds === undefined
          ? "not back to the pre-incident miss rate by the end"
          : `back to the pre-incident miss rate (${group(s.baselineMisses)}/s) ${s.recoverySeconds} s after the stall began`
      return `${lane.name.padEnd(width)}  peak database load ${group(s.peakQueries).padStart(6)} q/s, ${group(s.failed).padStart(7)} failed requests, ${back}`
    })
    .join("\n")
}

/**
 * The open episodes of a lane's breaker, as [from, to) in seconds.
 *
 * @since 0.1.0
 * @category text
 */
export const openEpisodes = (lane: Lane, endSeconds: number): Array<readonly [number, number]> => {
  const episodes: Array<readonly [number, number]> = []
  let openedAt: number | undefined
  for (const t of lane.transitions) {
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
 * A chart of one metric for every strategy, drawn with one symbol per strategy (in colour when
 * `color` is set). Each column is the highest value of the seconds it covers.
 *
 * @since 0.1.0
 * @category charts
 */
export const chart = (
  result: Result,
  metric: Metric,
  options: { readonly width: number; readonly height: number; readonly color: boolean }
): string => {
  const { color, height, width } = options
  const seconds = result.lanes[0]?.seconds.length ?? 0
  const columns = Math.max(1, Math.min(width, seconds))
  const perColumn = seconds / columns
  const series = result.lanes.map((lane) => {
    const values: Array<number> = []
    for (let c = 0; c < columns; c++) {
      const slice = lane.seconds.slice(
        Math.floor(c * perColumn),
        Math.max(Math.floor((c + 1) * perColumn), Math.floor(c * perColumn) + 1)
      )
      values.push(Math.max(...slice.map(metric.value)))
    }
    return { lane, values }
  })
  const max = scaleTop(result.lanes.flatMap((lane) => lane.seconds.map(metric.value)))
  const clipped = series.some((s) => s.values.some((v) => v > max))
  const grid: Array<Array<string>> = Array.from({ length: height }, () => Array.from({ length: columns }, () => " "))
  const ordered = [...series].sort((a, b) => drawOrder.indexOf(a.lane.name) - drawOrder.indexOf(b.lane.name))
  for (const { lane, values } of ordered) {
    const style = styles[lane.name]
    const mark = color ? `\x1b[${style.ansi}m${style.symbol}\x1b[0m` : style.symbol
    values.forEach((v, c) => {
      const row = height - 1 - Math.round((Math.min(v, max) / max) * (height - 1))
      grid[row]![c] = mark
    })
  }
  const label = (row: number) => {
    const value = ((height - 1 - row) / (height - 1)) * max
    return row === 0 || row === height - 1 || row === Math.floor((height - 1) / 2) ? group(value) : ""
  }
  const lines = [`  ${metric.title}${clipped ? " (a burst above the top is drawn at the top)" : ""}`]
  grid.forEach((cells, row) => lines.push(`${label(row).padStart(8)} ┤${cells.join("")}`))
  // The x axis: a tick every 30 s, and the stall under it.
  const axis = Array.from({ length: columns }, () => "─")
  const ticks = Array.from({ length: columns + 8 }, () => " ")
  for (let t = 0; t < seconds; t += 30) {
    const c = Math.floor(t / perColumn)
    axis[c] = "┬"
    const text = `${t}s`
    for (let i = 0; i < text.length && c + i < ticks.length; i++) ticks[c + i] = text[i]!
  }
  const stall = Array.from({ length: columns }, () => " ")
  const { stallAtMillis, stallMillis } = result.config
  for (let c = 0; c < columns; c++) {
    const t = c * perColumn
    if (t + perColumn > stallAtMillis / 1000 && t < (stallAtMillis + stallMillis) / 1000) stall[c] = "▲"
  }
  lines.push(`${"".padStart(8)} └${axis.join("")}`)
  lines.push(`${"".padStart(10)}${ticks.join("").trimEnd()}`)
  lines.push(`${"".padStart(10)}${stall.join("").trimEnd()} cache stall`)
  return lines.join("\n")
}

/**
 * The legend of the charts.
 *
 * @since 0.1.0
 * @category charts
 */
export const legend = (result: Result, color: boolean): string =>
  result.lanes
    .map((lane) => {
      const style = styles[lane.name]
      const mark = color ? `\x1b[${style.ansi}m${style.symbol}\x1b[0m` : style.symbol
      return `  ${mark} ${lane.name}`
    })
    .join("")
