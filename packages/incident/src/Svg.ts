/**
 * The replay's chart as a standalone SVG: one panel per metric, one line per strategy, the stall
 * and the breaker's open episodes shaded.
 *
 * @since 0.1.0
 */
import type { Result } from "./Replay.js"
import { metrics, openEpisodes, scaleTop, styles } from "./Report.js"

const escape = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/** A round step for an axis going up to `max`, giving about four gridlines. */
const niceStep = (max: number): number => {
  const raw = max / 4
  const power = Math.pow(10, Math.floor(Math.log10(raw)))
  const n = raw / power
  return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * power
}

/**
 * Renders the chart.
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (result: Result): string => {
  const width = 960
  const left = 70
  const right = 20
  const panelHeight = 190
  const gap = 46
  const top = 78
  const plotWidth = width - left - right
  const seconds = result.lanes[0]?.seconds.length ?? 0
  const height = top + metrics.length * (panelHeight + gap) + 10
  const x = (t: number) => left + (t / Math.max(1, seconds)) * plotWidth
  const out: Array<string> = []
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12">`
  )
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`)
  const { config } = result
  out.push(
    `<text x="${left}" y="24" font-size="16" font-weight="600">A ${config.stallMillis / 1000} s cache stall, a breaker open ${config.openForMillis / 1000} s: ${config.rate.toLocaleString("en-US")} requests/s, database capacity ${config.dbCapacity.toLocaleString("en-US")} queries/s</text>`
  )
  // Legend.
  let lx = left
  for (const lane of result.lanes) {
    const style = styles[lane.name]
    out.push(`<line x1="${lx}" y1="46" x2="${lx + 22}" y2="46" stroke="${style.color}" stroke-width="2.5"/>`)
    out.push(`<text x="${lx + 28}" y="50">${escape(lane.name)}</text>`)
    lx += 40 + lane.name.length * 7.5
  }
  out.push(`<rect x="${lx}" y="40" width="22" height="12" fill="#d62728" fill-opacity="0.12"/>`)
  out.push(`<text x="${lx + 28}" y="50">cache stall</text>`)
  lx += 110
  out.push(`<rect x="${lx}" y="40" width="22" height="12" fill="#7f7f7f" fill-opacity="0.12"/>`)
  out.push(`<text x="${lx + 28}" y="50">breaker open (first breaker shown)</text>`)

  const breakerLane = result.lanes.find((lane) => lane.transitions.length > 0)
  metrics.forEach((metric, i) => {
    const y0 = top + i * (panelHeight + gap)
    const values = result.lanes.flatMap((lane) => lane.seconds.map(metric.value))
    const peak = Math.max(0, ...values)
    const max = scaleTop(values)
    const step = niceStep(max)
    const yMax = Math.ceil(max / step) * step
    const y = (v: number) => y0 + panelHeight - (Math.min(v, yMax) / yMax) * panelHeight
    const clipped = peak > yMax ? ` (peak ${peak.toLocaleString("en-US")}, clipped at the top)` : ""
    out.push(`<text x="${left}" y="${y0 - 8}" font-weight="600">${escape(metric.title + clipped)}</text>`)
    // Shading: the stall and the open episodes.
    const stallFrom = config.stallAtMillis / 1000
    const stallTo = (config.stallAtMillis + config.stallMillis) / 1000
    out.push(
      `<rect x="${x(stallFrom)}" y="${y0}" width="${x(stallTo) - x(stallFrom)}" height="${panelHeight}" fill="#d62728" fill-opacity="0.12"/>`
    )
    if (breakerLane !== undefined) {
      for (const [from, to] of openEpisodes(breakerLane, seconds)) {
        out.push(
          `<rect x="${x(from)}" y="${y0}" width="${x(to) - x(from)}" height="${panelHeight}" fill="#7f7f7f" fill-opacity="0.12"/>`
        )
      }
    }
    // Gridlines and labels.
    for (let v = 0; v <= yMax; v += step) {
      out.push(`<line x1="${left}" y1="${y(v)}" x2="${left + plotWidth}" y2="${y(v)}" stroke="#e5e5e5"/>`)
      out.push(
        `<text x="${left - 6}" y="${y(v) + 4}" text-anchor="end" fill="#555">${v.toLocaleString("en-US")}</text>`
      )
    }
    for (let t = 0; t <= seconds; t += 30) {
      out.push(`<line x1="${x(t)}" y1="${y0 + panelHeight}" x2="${x(t)}" y2="${y0 + panelHeight + 4}" stroke="#555"/>`)
      out.push(`<text x="${x(t)}" y="${y0 + panelHeight + 17}" text-anchor="middle" fill="#555">${t} s</text>`)
    }
    out.push(
      `<line x1="${left}" y1="${y0 + panelHeight}" x2="${left + plotWidth}" y2="${y0 + panelHeight}" stroke="#555"/>`
    )
    for (const lane of result.lanes) {
      const points = lane.seconds.map((s, t) => `${x(t + 0.5).toFixed(1)},${y(metric.value(s)).toFixed(1)}`).join(" ")
      out.push(
        `<polyline fill="none" stroke="${styles[lane.name].color}" stroke-width="1.6" stroke-linejoin="round" points="${points}"><title>${escape(lane.name)}</title></polyline>`
      )
    }
  })
  out.push(`</svg>`)
  return out.join("\n") + "\n"
}
