/**
 * The replay's report as one HTML page: for each incident, its story, the model's numbers, the
 * chart (the SVG, inline), the verdicts, the headline figures and the per-interval table.
 *
 * @since 0.1.0
 */
import { group, intervalFigure, type Outcome } from "./Incident.js"
import * as Svg from "./Svg.js"

const escape = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

const intervalTable = (outcome: Outcome, intervalSeconds: number): string => {
  const head1 = outcome.lanes
    .map((lane) => `<th colspan="${outcome.panels.length}" class="lane">${escape(lane.name)}</th>`)
    .join("")
  const head2 = outcome.lanes.map(() => outcome.panels.map((p) => `<th>${escape(p.short)}</th>`).join("")).join("")
  const rows: Array<string> = []
  for (let from = 0; from < outcome.seconds; from += intervalSeconds) {
    const to = Math.min(outcome.seconds, from + intervalSeconds)
    const cells = outcome.lanes.map((lane) =>
      outcome.panels
        .map((panel) => {
          const { seconds, value } = intervalFigure(lane, panel, from, to)
          const over =
            panel.capacity !== undefined &&
            panel.capacity.warnAbove !== false &&
            seconds.some((v) => v > panel.capacity!.value)
          return `<td${over ? ' class="over"' : ""}>${group(value)}</td>`
        })
        .join("")
    )
    rows.push(`<tr><th>${from}–${to} s</th>${cells.join("")}</tr>`)
  }
  const notes = outcome.panels
    .map(
      (p) =>
        `${escape(p.short)}: ${escape(p.title)}${p.per === "second" ? ", mean over the interval" : ", total over the interval"}`
    )
    .join("; ")
  const warned = outcome.panels.flatMap((p) =>
    p.capacity === undefined || p.capacity.warnAbove === false ? [] : [escape(p.capacity.label)]
  )
  return `<table class="intervals"><thead><tr><th></th>${head1}</tr><tr><th>time</th>${head2}</tr></thead><tbody>${rows.join("")}</tbody></table>
<p class="note">${notes}.${warned.length === 0 ? "" : ` A shaded cell: above ${warned.join(", ")} in at least one second of the interval.`}</p>`
}

const section = (outcome: Outcome, intervalSeconds: number): string => `<section id="${escape(outcome.name)}">
<h2>${escape(outcome.title)}</h2>
<p>${escape(outcome.story)}</p>
<pre class="setup">${escape(outcome.setup)}</pre>
<figure>${Svg.render(outcome, { heading: false }).replace(/^<svg /, '<svg role="img" ')}</figure>
<h3>Verdicts</h3>
<ul class="verdicts">${outcome.lanes
  .map(
    (lane) =>
      `<li class="${lane.good ? "good" : "bad"}"><span class="mark">${lane.good ? "✓" : "✗"}</span> <b>${escape(lane.name)}</b>: ${escape(lane.verdict)}</li>`
  )
  .join("")}</ul>
<p class="note">✓ ${escape(outcome.criteria)}; ✗ otherwise.</p>
<h3>Headline figures</h3>
<table class="summary"><thead><tr>${outcome.summary.columns.map((c) => `<th>${escape(c)}</th>`).join("")}</tr></thead>
<tbody>${outcome.summary.rows.map((row) => `<tr>${row.map((c, i) => (i === 0 ? `<th>${escape(c)}</th>` : `<td>${escape(c)}</td>`)).join("")}</tr>`).join("")}</tbody></table>
<h3>Every ${intervalSeconds} seconds</h3>
${intervalTable(outcome, intervalSeconds)}
</section>`

/**
 * Renders the report.
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (
  outcomes: ReadonlyArray<Outcome>,
  options: { readonly intervalSeconds: number }
): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>circuitry: incident replays</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto; max-width: 1160px; color: #222; }
h1 { font-size: 24px; } h2 { font-size: 20px; margin-top: 36px; } h3 { font-size: 16px; margin-bottom: 6px; }
pre.setup { background: #f4f4f4; padding: 8px 12px; font-size: 13px; }
figure { margin: 12px 0; }
ul.verdicts { list-style: none; padding: 0; } ul.verdicts li { margin: 4px 0; }
li.good .mark { color: #2ca02c; font-weight: 700; } li.bad .mark { color: #d62728; font-weight: 700; }
table { border-collapse: collapse; font-size: 13px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
thead th { background: #f4f4f4; } th.lane { text-align: center; } tbody th { text-align: left; }
td.over { background: #fde0dc; }
p.note { font-size: 12px; color: #555; }
</style>
</head>
<body>
<h1>circuitry: incident replays</h1>
<p>Each incident runs its strategies side by side on the same traffic and the same faults, in virtual time, with the real library (<code>pnpm start</code>).</p>
${outcomes.map((outcome) => section(outcome, options.intervalSeconds)).join("\n")}
</body>
</html>
`
