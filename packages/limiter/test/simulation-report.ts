/**
 * Writes the overload simulation's figures for docs/limiter.md: the table (printed as Markdown)
 * and the chart (docs/limiter-simulation.svg), from the same runs the test pins.
 *
 *   npx tsx --conditions=@circuitry/source packages/limiter/test/simulation-report.ts
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import {
  capacityChange,
  CHANGES,
  DEFAULT_LOADS,
  DEFAULTS,
  type DefaultSubject,
  FAST,
  LOADS,
  partitioned,
  settleSeconds,
  steady,
  SUBJECTS,
  type Subject,
  withDefaults
} from "./scenarios.js"
import { DEPENDENCY } from "./simulation.js"

const subjects = Object.keys(SUBJECTS) as ReadonlyArray<Subject>
const fmt = (n: number, digits = 0) => (Number.isNaN(n) ? "-" : n.toFixed(digits))

const lines: Array<string> = []
lines.push("| strategy | load | goodput (of C) | p50 ms | p99 ms | timeouts | rejected | mean limit |")
lines.push("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for (const subject of subjects) {
  for (const load of LOADS) {
    const w = steady(subject, load)
    lines.push(
      `| ${subject} | ${load}x | ${fmt(w.goodput * 100)}% | ${fmt(w.p50)} | ${fmt(w.p99)} | ${w.timeouts} | ${w.rejected} | ${fmt(w.meanLimit, 1)} |`
    )
  }
}
lines.push("")
lines.push(
  "| strategy | settled after C halves | settled after C recovers | mean limit, C halved | mean limit, C back |"
)
lines.push("| --- | ---: | ---: | ---: | ---: |")
const runs = new Map(subjects.map((s) => [s, capacityChange(s)] as const))
for (const [subject, run] of runs) {
  const settle = (from: number, to: number) => {
    const s = settleSeconds(run, from, to)
    return Number.isFinite(s) ? `${s} s` : "never"
  }
  lines.push(
    `| ${subject} | ${settle(CHANGES[0], CHANGES[1])} | ${settle(CHANGES[1], 60)} | ${fmt(run.window(CHANGES[0] + 10, CHANGES[1]).meanLimit, 1)} | ${fmt(run.window(CHANGES[1] + 10, 60).meanLimit, 1)} |`
  )
}
lines.push("")
lines.push("| strategy | shares | a's share of admitted calls | goodput |")
lines.push("| --- | --- | ---: | ---: |")
for (const subject of ["gradient2", "aimd"] as const) {
  for (const shares of [{ a: 0.7 }, { a: 0.7, b: 0.3 }, {}]) {
    const w = partitioned(subject, shares)
    const a = w.byPartition["a"] ?? 0
    const share = a / (a + (w.byPartition["b"] ?? 0))
    lines.push(`| ${subject} | ${JSON.stringify(shares)} | ${fmt(share * 100, 1)}% | ${fmt(w.goodput * 100)}% |`)
  }
}
lines.push("")
lines.push("| defaults | load | goodput (of C) | p50 ms | p99 ms | p99 / base | timeouts | rejected | mean limit |")
lines.push("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for (const subject of Object.keys(DEFAULTS) as ReadonlyArray<DefaultSubject>) {
  for (const load of DEFAULT_LOADS) {
    const w = withDefaults(subject, load)
    lines.push(
      `| \`${subject}\` | ${load}x | ${fmt(w.goodput * 100)}% | ${fmt(w.p50)} | ${fmt(w.p99)} | ${fmt(w.p99 / FAST.baseMillis, 2)}x | ${w.timeouts} | ${w.rejected} | ${fmt(w.meanLimit, 1)} |`
    )
  }
}
process.stdout.write(lines.join("\n") + "\n")

// -- the chart: the limit and the goodput over the capacity-change run ---------------------------

const W = 900
const H = 560
const left = 60
const right = 170
const plotW = W - left - right
const panel = (top: number, height: number) => ({ top, height })
const limitPanel = panel(64, 210)
const goodPanel = panel(330, 170)
const colours: Record<Subject, string> = {
  "no limiter": "#cf222e",
  "fixed 4C": "#9a6700",
  gradient2: "#0969da",
  aimd: "#1a7f37",
  vegas: "#8250df"
}
const x = (seconds: number) => left + (seconds / 60) * plotW
const out: Array<string> = []
out.push(
  `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, sans-serif" font-size="12">`,
  `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
  `<text x="${left}" y="22" font-size="15" font-weight="600">Overload simulation: 2x C offered throughout; C halves at 20 s and recovers at 40 s</text>`
)
const axes = (p: { top: number; height: number }, max: number, ticks: ReadonlyArray<number>, label: string) => {
  const y = (v: number) => p.top + p.height - (v / max) * p.height
  for (const t of ticks) {
    out.push(`<line x1="${left}" x2="${left + plotW}" y1="${y(t)}" y2="${y(t)}" stroke="#d1d9e0"/>`)
    out.push(`<text x="${left - 6}" y="${y(t) + 4}" text-anchor="end" fill="#59636e">${t}</text>`)
  }
  for (let s = 0; s <= 60; s += 10) {
    out.push(`<text x="${x(s)}" y="${p.top + p.height + 16}" text-anchor="middle" fill="#59636e">${s} s</text>`)
  }
  out.push(`<text x="${left}" y="${p.top - 8}" font-weight="600">${label}</text>`)
  for (const c of CHANGES) {
    out.push(
      `<line x1="${x(c)}" x2="${x(c)}" y1="${p.top}" y2="${p.top + p.height}" stroke="#59636e" stroke-dasharray="4 3"/>`
    )
  }
  return y
}
const polyline = (
  points: ReadonlyArray<readonly [number, number]>,
  colour: string,
  width = 2,
  dash = "",
  opacity = 1
) =>
  out.push(
    `<polyline fill="none" stroke="${colour}" stroke-width="${width}" stroke-opacity="${opacity}"${dash ? ` stroke-dasharray="${dash}"` : ""} points="${points.map(([a, b]) => `${a.toFixed(1)},${b.toFixed(1)}`).join(" ")}"/>`
  )

const yLimit = axes(limitPanel, 45, [0, 10, 20, 30, 40], "Concurrency limit (the capacity C, dashed grey)")
const capacity = [0, 20, 20, 40, 40, 60].map((s, i) => [s, i === 2 || i === 3 ? 5 : 10] as const)
polyline(
  capacity.map(([s, c]) => [x(s), yLimit(c)] as const),
  "#59636e",
  2,
  "6 4"
)
// Vegas first and faint: it moves by large steps every few samples and would hide the others.
for (const subject of ["vegas", "fixed 4C", "gradient2", "aimd"] as const) {
  const run = runs.get(subject)!
  const faint = subject === "vegas"
  polyline(
    run.limits.map(([t, l]) => [x(t / 1000), yLimit(Math.min(l, 45))] as const),
    colours[subject],
    faint ? 1 : 2.5,
    "",
    faint ? 0.45 : 1
  )
}
const yGood = axes(goodPanel, 1.1, [0, 0.5, 1], "Goodput, share of the capacity at that time (1-second windows)")
for (const subject of subjects) {
  const run = runs.get(subject)!
  const points: Array<readonly [number, number]> = []
  for (let s = 0; s < 60; s++) points.push([x(s + 0.5), yGood(Math.min(1.1, run.window(s, s + 1).goodput))])
  polyline(points, colours[subject])
}
subjects.forEach((subject, i) => {
  const y = 60 + i * 22
  out.push(
    `<line x1="${W - right + 20}" x2="${W - right + 44}" y1="${y}" y2="${y}" stroke="${colours[subject]}" stroke-width="3"/>`
  )
  out.push(`<text x="${W - right + 50}" y="${y + 4}">${subject}</text>`)
})
out.push(
  `<text x="${left}" y="${H - 12}" fill="#59636e">C = ${DEPENDENCY.capacity} concurrent calls at ${DEPENDENCY.baseMillis} ms (latency grows linearly past C), callers time out at ${DEPENDENCY.deadlineMillis} ms; virtual time.</text>`,
  `</svg>`
)
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")
fs.writeFileSync(path.join(root, "docs", "limiter-simulation.svg"), out.join("\n") + "\n")
