/**
 * A Prometheus scrape route: every metric in Effect's registry (`Metric.snapshot`), circuitry's and
 * the application's own, in the Prometheus text exposition format 0.0.4. Counters made with
 * `incremental: true` are counters; other Effect counters may go down, so they are gauges (as an
 * OpenTelemetry up-down counter is); gauges are gauges; histograms have cumulative `_bucket{le}`
 * lines up to `le="+Inf"`, `_sum` and `_count`; summaries have `{quantile}` lines, `_sum` and
 * `_count`; a frequency is a counter with one series per value seen, labelled `key`. Names and
 * label names are sanitised to what Prometheus accepts (anything else becomes `_`), label values
 * are escaped. Reading it records nothing.
 *
 * @since 0.2.0
 */
import type { App, Router } from "#http"
import type { Input } from "#metrics"
import type * as Effect from "effect/Effect"
import * as internal from "./internal/metricsRoute.js"

/**
 * The `Content-Type` of the text exposition format 0.0.4.
 *
 * @since 0.2.0
 * @category rendering
 */
export const contentType: string = internal.CONTENT_TYPE

/**
 * Renders what `Metric.snapshot` gives (`Input`: Effect 3's `MetricPair`s, Effect 4's
 * `Metric.Snapshot`s) as Prometheus text: one family per name,
 * sorted by name, its series sorted by labels. A name that two kinds of metric share keeps the
 * first kind, and a comment line says what was left out.
 *
 * @since 0.2.0
 * @category rendering
 * @example
 * ```ts
 * import { MetricsRoute } from "@circuitry/platform"
 * import { Effect, Metric } from "effect"
 *
 * const requests = Metric.counter("http_requests_total", { incremental: true })
 * const page = Effect.gen(function* () {
 *   yield* Metric.increment(requests)
 *   return MetricsRoute.render(yield* Metric.snapshot)
 * })
 * // # TYPE http_requests_total counter
 * // http_requests_total 1
 * ```
 */
export const render: (pairs: Iterable<Input>) => string = internal.render

/**
 * Every metric in Effect's registry now, as Prometheus text.
 *
 * @since 0.2.0
 * @category rendering
 */
export const text: Effect.Effect<string> = internal.text

/**
 * The scrape response: `200` with `text`, as `contentType`, not cached.
 *
 * @since 0.2.0
 * @category routes
 */
export const app: App = internal.app

/**
 * @since 0.2.0
 * @category models
 */
export interface RouterOptions {
  /** Where the metrics are served. Default `"/metrics"`. */
  readonly path?: `/${string}` | undefined
}

/**
 * `GET /metrics` (or `options.path`) as a router, to `HttpRouter.concat` with an application's routes
 * (Effect 3; on Effect 4 `Router` is a route layer to merge with the application's).
 *
 * @since 0.2.0
 * @category routes
 * @example
 * ```ts
 * import { HealthRoute, MetricsRoute } from "@circuitry/platform"
 * import { HttpRouter, HttpServerResponse } from "@effect/platform"
 *
 * const app = HttpRouter.empty.pipe(
 *   HttpRouter.get("/", HttpServerResponse.text("hello")),
 *   HttpRouter.concat(HealthRoute.router()),
 *   HttpRouter.concat(MetricsRoute.router()) // GET /metrics, for Prometheus to scrape
 * )
 * ```
 */
export const router: (options?: RouterOptions) => Router<never> = internal.router
