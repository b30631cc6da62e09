/**
 * An incident's chart as a standalone SVG, made to be read at a glance: small multiples, a row per
 * strategy (its verdict above it) and a column per quantity, one line per panel so nothing hides
 * anything. Each column shares a log scale, so a burst of 10,000 and a baseline of 250 are both
 * readable and rows compare directly; a capacity (red dashes) or a deadline (dark dots) is drawn
 * where there is one; the fault is shaded, and each strategy's own open episodes are a bar under
 * its panels. The heading states every line of the setup and what a tick means.
 *
 * @since 0.1.0
 */
import type { Outcome } from "./Incident.js"

const escape = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/** Colours: one per column (quantity), and the shades. */
const lineColors = ["#6a3d9a", "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e"]
const stallShade = "#ff7f0e"
const openShade = "#555555"
/**
 * The breaker's open episodes are a bar just under a panel's bottom border: it never mixes with a
 * shaded fault, and never hides a line drawn at 0.
 */
const openStrip = 5
const openOpacity = 0.7
/** Headroom above a column's top, so a line at the top of the scale is not drawn on the border. */
const headroom = 10

interface Reference {
  readonly color: string
  readonly dash: string
}
const referenceOf = (kind: "capacity" | "deadline" | undefined): Reference =>
  kind === "deadline" ? { color: "#333333", dash: "1.5 2.5" } : { color: "#d62728", dash: "5 3" }

/** The top of a log axis: the peak rounded up to 1, 2 or 5 times a power of ten. */
const axisTop = (peak: number): number => {
  const power = Math.pow(10, Math.floor(Math.log10(Math.max(1, peak))))
  const n = peak / power
  return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * power
}

/** 0 and the powers of ten from 10 up to `top`: the log axis's ticks (1 would sit on 0). */
const ticks = (top: number): Array<number> => {
  const list = [0]
  for (let p = 10; p <= top; p *= 10) list.push(p)
  return list
}

const label = (n: number): string => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : `${n}`)

/**
 * Renders the chart.
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (outcome: Outcome, options?: { readonly heading?: boolean | undefined }): string => {
  // Inside the HTML report the page says the title and the setup already.
  const heading = options?.heading ?? true
  const { lanes, panels } = outcome
  const width = 1120
  const left = 56
  const right = 16
  const gap = 36
  const panelWidth = (width - left - right - gap * (panels.length - 1)) / panels.length
  const panelHeight = 104
  const rowHeader = 52
  const rowGap = 22
  const setupLines = heading ? outcome.setup.split("\n") : []
  // Title, every line of the setup, what the marks mean, then the legend.
  const criteriaY = heading ? 46 + setupLines.length * 16 : 18
  const rowHeight = rowHeader + panelHeight + rowGap
  const seconds = Math.max(1, outcome.seconds)
  const out: Array<string> = []
  if (heading) {
    out.push(`<text x="${left}" y="26" font-size="17" font-weight="600">${escape(outcome.title)}</text>`)
    setupLines.forEach((line, i) => {
      out.push(`<text x="${left}" y="${46 + i * 16}" fill="#444">${escape(line)}</text>`)
    })
  }
  out.push(
    `<text x="${left}" y="${criteriaY}" fill="#222"><tspan fill="#2ca02c" font-weight="700">✓</tspan> ${escape(outcome.criteria)}; <tspan fill="#d62728" font-weight="700">✗</tspan> otherwise</text>`
  )
  // Legend, on as many lines as it needs.
  let lx = left
  let legendY = criteriaY + 14
  const legend = (swatch: string, text: string) => {
    const itemWidth = 40 + text.length * 6.6
    if (lx > left && lx + itemWidth > width - right) {
      lx = left
      legendY += 20
    }
    out.push(
      swatch
        .replace(/\{x\}/g, String(lx))
        .replace(/\{y\}/g, String(legendY))
        .replace(/\{ym\}/g, String(legendY + 6))
        .replace(/\{x2\}/g, String(lx + 22))
    )
    out.push(`<text x="${lx + 28}" y="${legendY + 10}">${escape(text)}</text>`)
    lx += itemWidth
  }
  for (const mark of outcome.marks) {
    legend(`<rect x="{x}" y="{y}" width="22" height="13" fill="${stallShade}" fill-opacity="0.22"/>`, mark.label)
  }
  if (lanes.some((lane) => lane.episodes.length > 0)) {
    legend(
      `<rect x="{x}" y="{ym}" width="22" height="${openStrip}" fill="${openShade}" fill-opacity="${openOpacity}"/>`,
      "that strategy's breaker open (bar under the panel)"
    )
  }
  // The reference lines, each once: "capacity 1,000/s" dashed red, "deadline 1,000 ms" dotted.
  const references = new Map<string, Reference>()
  for (const panel of panels) {
    if (panel.capacity !== undefined) references.set(panel.capacity.label, referenceOf(panel.capacity.kind))
  }
  for (const [text, ref] of references) {
    legend(
      `<line x1="{x}" y1="{ym}" x2="{x2}" y2="{ym}" stroke="${ref.color}" stroke-width="1.5" stroke-dasharray="${ref.dash}"/>`,
      text
    )
  }
  legend("", "log scales: each column shares one")
  const top = legendY + 50
  const height = top + lanes.length * rowHeight + 28
  out.unshift(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`
  )

  // One scale per column, shared by its rows.
  const scales = panels.map((panel) => {
    const peak = Math.max(1, panel.capacity?.value ?? 0, ...lanes.flatMap((lane) => lane.series[panel.key] ?? []))
    const top = axisTop(peak)
    const marks = ticks(top)
    const max = Math.log10(1 + top)
    const span = panelHeight - headroom
    return { marks, y: (v: number) => panelHeight - (Math.log10(1 + Math.max(0, v)) / max) * span }
  })
  const x = (t: number) => (t / seconds) * panelWidth

  lanes.forEach((lane, row) => {
    const y0 = top + row * rowHeight
    const mark = lane.good ? "✓" : "✗"
    out.push(
      `<text x="${left - 40}" y="${y0 + 14}" font-size="14" font-weight="700" fill="${lane.good ? "#2ca02c" : "#d62728"}">${mark}</text>`
    )
    out.push(
      `<text x="${left - 22}" y="${y0 + 14}" font-size="14" font-weight="600">${escape(lane.name)}<tspan font-weight="400" fill="#555" font-size="12">  ${escape(lane.description)}</tspan></text>`
    )
    out.push(`<text x="${left - 22}" y="${y0 + 29}" fill="#222">${escape(lane.verdict)}</text>`)
    panels.forEach((panel, col) => {
      const px = left + col * (panelWidth + gap)
      const py = y0 + rowHeader
      const scale = scales[col]!
      const values = lane.series[panel.key] ?? []
      out.push(`<g transform="translate(${px.toFixed(1)},${py})">`)
      out.push(`<rect width="${panelWidth.toFixed(1)}" height="${panelHeight}" fill="#fafafa" stroke="#ddd"/>`)
      for (const m of outcome.marks) {
        out.push(
          `<rect x="${x(m.from).toFixed(1)}" width="${Math.max(1, x(m.to) - x(m.from)).toFixed(1)}" height="${panelHeight}" fill="${stallShade}" fill-opacity="0.22"/>`
        )
      }
      for (const [from, to] of lane.episodes) {
        out.push(
          `<rect x="${x(from).toFixed(1)}" y="${panelHeight + 1}" width="${Math.max(1, x(to) - x(from)).toFixed(1)}" height="${openStrip}" fill="${openShade}" fill-opacity="${openOpacity}"/>`
        )
      }
      for (const v of scale.marks) {
        const y = scale.y(v).toFixed(1)
        out.push(`<line x1="0" y1="${y}" x2="${panelWidth.toFixed(1)}" y2="${y}" stroke="#e6e6e6"/>`)
        out.push(
          `<text x="-5" y="${(scale.y(v) + 4).toFixed(1)}" text-anchor="end" fill="#666" font-size="10">${label(v)}</text>`
        )
      }
      if (panel.capacity !== undefined) {
        const y = scale.y(panel.capacity.value).toFixed(1)
        const ref = referenceOf(panel.capacity.kind)
        out.push(
          `<line x1="0" y1="${y}" x2="${panelWidth.toFixed(1)}" y2="${y}" stroke="${ref.color}" stroke-width="1.5" stroke-dasharray="${ref.dash}"/>`
        )
        // Above the line, or under it when the line runs along the top (where the title is).
        const cy = scale.y(panel.capacity.value)
        out.push(
          `<text x="${(panelWidth - 4).toFixed(1)}" y="${(cy < 14 ? cy + 12 : cy - 4).toFixed(1)}" text-anchor="end" fill="${ref.color}" font-size="10">${escape(panel.capacity.label)}</text>`
        )
      }
      const color = lineColors[col % lineColors.length]!
      const points = values.map((v, t) => `${x(t + 0.5).toFixed(1)},${scale.y(v).toFixed(1)}`).join(" ")
      out.push(
        `<polyline fill="none" stroke="${color}" stroke-width="1.6" stroke-linejoin="round" points="${points}"><title>${escape(`${lane.name}: ${panel.title}`)}</title></polyline>`
      )
      const peak = Math.max(0, ...values)
      out.push(
        `<text x="0" y="-5" font-size="11" fill="${color}"><tspan font-weight="600">${escape(panel.title)}</tspan> · peak ${Math.round(peak).toLocaleString("en-US")}</text>`
      )
      // Time axis: a tick every 30 s; labels on the last row only.
      for (let t = 0; t <= outcome.seconds; t += 30) {
        out.push(
          `<line x1="${x(t).toFixed(1)}" y1="${panelHeight}" x2="${x(t).toFixed(1)}" y2="${panelHeight + 3}" stroke="#888"/>`
        )
        if (row === lanes.length - 1) {
          out.push(
            `<text x="${x(t).toFixed(1)}" y="${panelHeight + 15}" text-anchor="middle" fill="#666" font-size="10">${t} s</text>`
          )
        }
      }
      out.push(`</g>`)
    })
  })
  out.push(`</svg>`)
  return out.join("\n") + "\n"
}
