/**
 * An incident's outcome as text: a table per interval, a verdict per strategy, and a small chart
 * per strategy drawn in the terminal.
 *
 * @since 0.1.0
 */
import { group, intervalFigure, type Outcome, type Panel } from "./Incident.js"

/**
 * The per-interval table: for each strategy, each panel's mean per second (or its total, for
 * counts like failed requests) over the interval.
 *
 * @since 0.1.0
 * @category text
 */
export const table = (outcome: Outcome, intervalSeconds: number): string => {
  const { lanes, panels } = outcome
  const width = (panel: Panel) => Math.max(7, panel.short.length + 1)
  const cell = panels.reduce((n, panel) => n + width(panel), 0)
  const lines: Array<string> = []
  lines.push("".padStart(9) + lanes.map((lane) => " │ " + lane.name.padEnd(cell)).join(""))
  lines.push(
    "time".padStart(9) + lanes.map(() => " │ " + panels.map((p) => p.short.padStart(width(p))).join("")).join("")
  )
  for (let from = 0; from < outcome.seconds; from += intervalSeconds) {
    const to = Math.min(outcome.seconds, from + intervalSeconds)
    const row = lanes.map((lane) => {
      const cells = panels.map((panel) => group(intervalFigure(lane, panel, from, to).value).padStart(width(panel)))
      return " │ " + cells.join("")
    })
    lines.push(`${from}-${to}s`.padStart(9) + row.join(""))
  }
  return lines.join("\n")
}

/**
 * One line per strategy: a tick or a cross, and its verdict; then a line with what earns the tick.
 *
 * @since 0.1.0
 * @category text
 */
export const verdicts = (outcome: Outcome, color: boolean): string => {
  const width = Math.max(...outcome.lanes.map((lane) => lane.name.length))
  return outcome.lanes
    .map((lane) => {
      const mark = lane.good ? "✓" : "✗"
      const painted = color ? `\x1b[${lane.good ? 32 : 31}m${mark}\x1b[0m` : mark
      return `${painted} ${lane.name.padEnd(width)}  ${lane.verdict}`
    })
    .concat(`(✓ ${outcome.criteria}; ✗ otherwise)`)
    .join("\n")
}

const blocks = " ▁▂▃▄▅▆▇█"

/**
 * One row per strategy for a panel: a bar per few seconds on a log scale shared by the rows, the
 * stall and the open episodes marked under it, and the peak at the end. Above the panel's
 * capacity, the bar is drawn in red (with `color`) or as `!` under it.
 *
 * @since 0.1.0
 * @category charts
 */
export const sparklines = (
  outcome: Outcome,
  panel: Panel,
  options: { readonly width: number; readonly color: boolean }
): string => {
  const columns = Math.max(1, Math.min(options.width, outcome.seconds))
  const per = outcome.seconds / columns
  const top = Math.max(1, ...outcome.lanes.flatMap((lane) => lane.series[panel.key] ?? []))
  const level = (v: number) => (v <= 0 ? 0 : Math.max(1, Math.round((Math.log10(1 + v) / Math.log10(1 + top)) * 8)))
  const width = Math.max(...outcome.lanes.map((lane) => lane.name.length))
  const lines = [`  ${panel.title}, log scale, top ${group(top)}${panel.capacity ? `; ${panel.capacity.label}` : ""}`]
  for (const lane of outcome.lanes) {
    const values = lane.series[panel.key] ?? []
    let bar = ""
    let over = ""
    let under = ""
    for (let c = 0; c < columns; c++) {
      const from = Math.floor(c * per)
      const slice = values.slice(from, Math.max(from + 1, Math.floor((c + 1) * per)))
      const v = Math.max(0, ...slice)
      const above = panel.capacity !== undefined && panel.capacity.warnAbove !== false && v > panel.capacity.value
      const block = blocks[level(v)]!
      bar += above && options.color ? `\x1b[31m${block}\x1b[0m` : block
      over += above ? "!" : " "
      const t = c * per
      const stalled = outcome.marks.some((m) => t + per > m.from && t < m.to)
      const open = lane.episodes.some(([a, b]) => t + per > a && t < b)
      under += stalled ? "▲" : open ? "─" : " "
    }
    lines.push(`  ${lane.name.padStart(width)} │${bar}│ peak ${group(Math.max(0, ...values))}`)
    const notes = (panel.capacity !== undefined ? over : "").trimEnd()
    if (notes !== "") lines.push(`  ${"".padStart(width)}  ${notes}`)
    if (under.trim() !== "") lines.push(`  ${"".padStart(width)}  ${under.trimEnd()}`)
  }
  const stall = outcome.marks.map((m) => `▲ ${m.label}`).join(", ")
  lines.push(
    `  ${"".padStart(width)}  0 s${"".padStart(Math.max(0, columns - 3 - `${outcome.seconds} s`.length))}${outcome.seconds} s`
  )
  lines.push(
    `  ${"".padStart(width)}  ${[stall, "─ breaker open", panel.capacity && panel.capacity.warnAbove !== false ? `! over ${panel.capacity.label}` : ""].filter((s) => s !== "").join("   ")}`
  )
  return lines.join("\n")
}
