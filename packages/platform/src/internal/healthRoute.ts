/** The implementation behind ../HealthRoute.ts, where the public types and their documentation live. */
import { BreakerRegistry } from "@circuitry/breaker"
import type { CircuitBreaker } from "@circuitry/breaker"
import { LimiterRegistry } from "@circuitry/limiter"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { BreakerHealth, Health, HtmlOptions, LimiterHealth, RouterOptions } from "../HealthRoute.js"

const byName = <T extends { readonly name: string }>(a: T, b: T) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

/** Every limiter in the `LimiterRegistry`, if one is provided (so it adds no requirement). */
const limiterHealth: Effect.Effect<Option.Option<ReadonlyArray<LimiterHealth>>> = Effect.flatMap(
  Effect.serviceOption(LimiterRegistry.LimiterRegistry),
  Option.match({
    onNone: () => Effect.succeed(Option.none()),
    onSome: (registry) =>
      Effect.flatMap(registry.limiters, (limiters) =>
        Effect.map(
          Effect.forEach(limiters, (limiter) => limiter.snapshot),
          (snapshots) =>
            Option.some(
              snapshots
                .map(({ name, limit, inFlight, queued, rejected, partitions }) => ({
                  name,
                  limit,
                  inFlight,
                  queued,
                  rejected,
                  partitions
                }))
                .sort(byName)
            )
        )
      )
  })
)

/** @internal */
export const health: Effect.Effect<Health, never, BreakerRegistry.BreakerRegistry> = Effect.gen(function* () {
  const registry = yield* BreakerRegistry.BreakerRegistry
  const now = yield* Clock.currentTimeMillis
  const snapshots = yield* Effect.forEach(yield* registry.breakers, (breaker) => breaker.snapshot)
  const breakers = snapshots
    .map((snapshot): BreakerHealth => ({
      name: snapshot.name,
      state: snapshot.state._tag,
      openUntil: snapshot.state._tag === "Open" ? new Date(snapshot.state.until).toISOString() : null,
      counts: snapshot.counts,
      probes: snapshot.probes
    }))
    .sort(byName)
  const limiters = yield* limiterHealth
  return {
    at: new Date(now).toISOString(),
    open: breakers.filter((b) => b.state !== "Closed").length,
    breakers,
    ...(Option.isSome(limiters) ? { limiters: limiters.value } : {})
  }
})

const noStore = { "cache-control": "no-store" }

/** @internal */
export const json: HttpApp.Default<never, BreakerRegistry.BreakerRegistry> = Effect.map(health, (body) =>
  HttpServerResponse.unsafeJson(body, { headers: noStore })
)

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

/** @internal */
export const renderHtml = (health: Health, options?: HtmlOptions): string => {
  const refresh = Math.max(1, Math.round(options?.refreshSeconds ?? 5))
  const title = escapeHtml(options?.title ?? "Circuit breakers")
  const now = Date.parse(health.at)
  const rows = health.breakers
    .map((b) => {
      const state = b.state === "HalfOpen" ? "Half-open" : b.state
      return `<tr>
  <td class="name">${escapeHtml(b.name)}</td>
  <td><span class="state" style="background:${stateColours[b.state]}">${state}</span></td>
  <td class="num">${b.counts.calls}</td>
  <td class="num">${b.counts.failures}</td>
  <td class="num">${b.counts.consecutiveFailures}</td>
  <td class="num">${b.counts.slowCalls}</td>
  <td class="num">${b.probes}</td>
  <td>${b.openUntil === null ? "" : openUntilCell(b.openUntil, now)}</td>
</tr>`
    })
    .join("\n")
  const empty = health.breakers.length === 0 ? `<p class="empty">No breakers yet.</p>` : ""
  const limiters = health.limiters === undefined ? "" : limiterTable(health.limiters)
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="${refresh}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>
  body { font: 15px/1.4 system-ui, sans-serif; margin: 2rem; color: #1f2328; }
  h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
  h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
  tr.full td { background: #fff8c5; }
  p.meta { color: #59636e; margin: 0 0 1rem; }
  table { border-collapse: collapse; min-width: 40rem; }
  th, td { padding: .4rem .7rem; border-bottom: 1px solid #d1d9e0; text-align: left; white-space: nowrap; }
  th { background: #f6f8fa; font-weight: 600; }
  td.num { text-align: right; font-variant-numeric: tabular-nums; }
  td.name { font-family: ui-monospace, monospace; }
  .state { color: #fff; border-radius: 1rem; padding: .1rem .6rem; font-size: .85rem; font-weight: 600; }
</style>
</head>
<body>
<h1>${title}</h1>
<p class="meta">${health.breakers.length} breakers, ${health.open} not closed &middot; read at ${escapeHtml(health.at)} &middot; refreshes every ${refresh} s</p>
<table>
<thead><tr><th>Circuit</th><th>State</th><th>Calls</th><th>Failures</th><th>In a row</th><th>Slow</th><th>Probes</th><th>Open until</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
${empty}
${limiters}
</body>
</html>
`
}

/** @internal */
export const html = (options?: HtmlOptions): HttpApp.Default<never, BreakerRegistry.BreakerRegistry> =>
  Effect.map(health, (body) =>
    HttpServerResponse.text(renderHtml(body, options), {
      contentType: "text/html; charset=utf-8",
      headers: noStore
    })
  )

/** @internal */
export const router = (options?: RouterOptions): HttpRouter.HttpRouter<never, BreakerRegistry.BreakerRegistry> => {
  const path = options?.path ?? "/health/breakers"
  return HttpRouter.empty.pipe(HttpRouter.get(path, json), HttpRouter.get(`${path}/view`, html(options)))
}
