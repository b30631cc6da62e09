/**
 * The health route's HTML: the page shell, and the live part of it (`renderLive`), which the page
 * swaps in from each `view` event of its stream, so that the server renders (and escapes) it all.
 */
import type { CircuitBreaker } from "@circuitry/breaker"
import type { BreakerHealth, BreakerHistory, Health, HtmlOptions, LimiterHealth } from "../HealthRoute.js"

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

const stateColours: Record<CircuitBreaker.StateTag, string> = {
  Closed: "#1a7f37",
  Open: "#cf222e",
  HalfOpen: "#9a6700",
  Isolated: "#6e7781"
}

/** The time of day (UTC) and the wait left; the full ISO instant in a tooltip. */
const openUntilCell = (openUntil: string, now: number): string => {
  const seconds = Math.max(1, Math.ceil((Date.parse(openUntil) - now) / 1000))
  return `<time datetime="${escapeHtml(openUntil)}" title="${escapeHtml(openUntil)}">${escapeHtml(openUntil.slice(11, 19))} UTC</time> (in ${seconds} s)`
}

/** The failure rate over the samples as a small SVG line (no call in a sample: a gap). */
const sparkline = (history: BreakerHistory): string => {
  const width = 120
  const height = 22
  const samples = history.samples
  const step = samples.length > 1 ? width / (samples.length - 1) : 0
  const segments: Array<Array<string>> = [[]]
  samples.forEach((s, i) => {
    if (s.failureRate === null) {
      if (segments[segments.length - 1]!.length > 0) segments.push([])
      return
    }
    segments[segments.length - 1]!.push(
      `${(i * step).toFixed(1)},${(height - 1 - s.failureRate * (height - 2)).toFixed(1)}`
    )
  })
  const lines = segments
    .filter((points) => points.length > 0)
    .map((points) =>
      points.length === 1
        ? `<circle cx="${points[0]!.split(",")[0]}" cy="${points[0]!.split(",")[1]}" r="1.5" fill="#cf222e"/>`
        : `<polyline points="${points.join(" ")}" fill="none" stroke="#cf222e" stroke-width="1.5"/>`
    )
    .join("")
  const last = samples[samples.length - 1]
  const label = last?.failureRate == null ? "no calls" : `${Math.round(last.failureRate * 100)}% failing`
  return `<svg class="spark" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="failure rate, ${samples.length} samples"><line x1="0" y1="${height - 1}" x2="${width}" y2="${height - 1}" stroke="#d1d9e0"/>${lines}</svg> <span class="rate">${label}</span>`
}

const transitionsCell = (history: BreakerHistory): string => {
  const shown = history.transitions.slice(-3)
  if (shown.length === 0) return `<span class="quiet">none</span>`
  const name = (s: CircuitBreaker.StateTag) => (s === "HalfOpen" ? "Half-open" : s)
  return shown
    .map(
      (t) =>
        `<span class="transition" title="${escapeHtml(t.at)}">${escapeHtml(t.at.slice(11, 19))} ${name(t.from)}&rarr;${name(t.to)}</span>`
    )
    .join(" ")
}

/** Where the verdict lives, and whose it is: the fleet's, or (with a quorum) this member's own. */
const verdictCell = (b: BreakerHealth): string => {
  const store = b.store === "unreachable" ? `<strong>store unreachable</strong>` : b.store
  if (b.verdict === "member")
    return `${store}: <strong title="its own policy opened it; the fleet stays closed">this member's own</strong>`
  if (b.verdict === "fleet") return `${store}: the fleet's`
  return store
}

const breakerRow = (b: BreakerHealth, now: number, withHistory: boolean): string => {
  const state = b.state === "HalfOpen" ? "Half-open" : b.state
  const history =
    withHistory && b.history !== undefined
      ? `\n  <td class="history">${sparkline(b.history)}</td>\n  <td>${transitionsCell(b.history)}</td>`
      : withHistory
        ? `\n  <td></td>\n  <td></td>`
        : ""
  return `<tr>
  <td class="name">${escapeHtml(b.name)}</td>
  <td><span class="state" style="background:${stateColours[b.state]}">${state}</span></td>
  <td class="num">${b.counts.calls}</td>
  <td class="num">${b.counts.failures}</td>
  <td class="num">${b.counts.consecutiveFailures}</td>
  <td class="num">${b.counts.slowCalls}</td>
  <td class="num">${b.probes}</td>
  <td>${verdictCell(b)}</td>
  <td>${b.openUntil === null ? "" : openUntilCell(b.openUntil, now)}</td>${history}
</tr>`
}

const limiterTable = (limiters: ReadonlyArray<LimiterHealth>): string => {
  if (limiters.length === 0) return `<h2>Limiters</h2>\n<p class="empty">No limiters yet.</p>`
  const rows = limiters
    .map((l) => {
      const shares = l.partitions
        .map((p) => `${escapeHtml(p.name)} ${p.inFlight}/${p.guaranteed} (${Math.round(p.share * 100)}%)`)
        .join(", ")
      const full = l.inFlight >= l.limit ? ` class="full"` : ""
      return `<tr${full}>
  <td class="name">${escapeHtml(l.name)}</td>
  <td class="num">${l.limit}</td>
  <td class="num">${l.inFlight}</td>
  <td class="num">${l.queued}</td>
  <td class="num">${l.rejected}</td>
  <td>${shares}</td>
</tr>`
    })
    .join("\n")
  return `<h2>Limiters</h2>
<table>
<thead><tr><th>Limiter</th><th>Limit</th><th>In flight</th><th>Queued</th><th>Rejected</th><th>Partitions (in flight/guaranteed)</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`
}

const refreshOf = (options?: HtmlOptions) => Math.max(1, Math.round(options?.refreshSeconds ?? 5))

/** Everything below the title: what a `view` event carries. @internal */
export const renderLive = (health: Health, options?: HtmlOptions): string => {
  const refresh = refreshOf(options)
  const now = Date.parse(health.at)
  const withHistory = health.breakers.some((b) => b.history !== undefined)
  const rows = health.breakers.map((b) => breakerRow(b, now, withHistory)).join("\n")
  const historyHeads = withHistory ? `<th>Failure rate (last samples)</th><th>Transitions</th>` : ""
  const empty = health.breakers.length === 0 ? `<p class="empty">No breakers yet.</p>` : ""
  const limiters = health.limiters === undefined ? "" : limiterTable(health.limiters)
  const updates = options?.events === undefined ? `refreshes every ${refresh} s` : `live, a snapshot every ${refresh} s`
  const store = health.storeInContext
    ? `A <code>BreakerStore</code> is in this route's context: breakers made in the same context share their verdicts through it.`
    : `No <code>BreakerStore</code> in this route's context: breakers made in the same context keep their state in this process.`
  return `<p class="meta">${health.breakers.length} breakers, ${health.open} not closed &middot; read at ${escapeHtml(health.at)} &middot; ${updates}</p>
<p class="store">${store} The Verdict column says, per breaker, whether its state is local or shared, whether its store answers, and whether it follows the fleet's verdict or (with a quorum) its own.</p>
<table>
<thead><tr><th>Circuit</th><th>State</th><th>Calls</th><th>Failures</th><th>In a row</th><th>Slow</th><th>Probes</th><th>Verdict</th><th>Open until</th>${historyHeads}</tr></thead>
<tbody>
${rows}
</tbody>
</table>
${empty}
${limiters}`
}

/** Swaps the live part in from each `view` event; marks the root so a test can see it ran. */
const script = `<script>
(function () {
  var root = document.documentElement;
  var live = document.getElementById("live");
  root.setAttribute("data-script", "ran");
  if (!live || typeof EventSource === "undefined") return;
  var updates = 0;
  var source = new EventSource(live.getAttribute("data-events"));
  source.addEventListener("view", function (event) {
    live.innerHTML = event.data;
    root.setAttribute("data-live", "on");
    root.setAttribute("data-updates", String(++updates));
  });
  source.onerror = function () { root.setAttribute("data-live", "reconnecting"); };
})();
</script>`

/** @internal */
export const renderHtml = (health: Health, options?: HtmlOptions): string => {
  const refresh = refreshOf(options)
  const title = escapeHtml(options?.title ?? "Circuit breakers")
  const events = options?.events
  const reload = `<meta http-equiv="refresh" content="${refresh}">`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
${events === undefined ? reload : `<noscript>${reload}</noscript>`}
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>
  body { font: 15px/1.4 system-ui, sans-serif; margin: 2rem; color: #1f2328; }
  h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
  h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
  tr.full td { background: #fff8c5; }
  p.meta, p.store { color: #59636e; margin: 0 0 1rem; }
  table { border-collapse: collapse; min-width: 40rem; }
  th, td { padding: .4rem .7rem; border-bottom: 1px solid #d1d9e0; text-align: left; white-space: nowrap; }
  th { background: #f6f8fa; font-weight: 600; }
  td.num { text-align: right; font-variant-numeric: tabular-nums; }
  td.name { font-family: ui-monospace, monospace; }
  .state { color: #fff; border-radius: 1rem; padding: .1rem .6rem; font-size: .85rem; font-weight: 600; }
  .spark { vertical-align: middle; }
  .rate, .quiet, .transition { color: #59636e; font-size: .85rem; }
</style>
</head>
<body>
<h1>${title}</h1>
<main id="live"${events === undefined ? "" : ` data-events="${escapeHtml(events)}"`}>
${renderLive(health, options)}
</main>
${events === undefined ? "" : script}
</body>
</html>
`
}
