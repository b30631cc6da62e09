/**
 * A health route listing every breaker in the `BreakerRegistry`: its state, the counts in its
 * window and when it reopens, and, when a `LimiterRegistry` is provided too, every limiter's limit,
 * calls in flight and rejections; as JSON for machines and as a small self-refreshing HTML page for
 * a person. Reading it records nothing and does not count as use of a breaker or a limiter.
 *
 * @since 0.1.0
 */
import type { BreakerRegistry, CircuitBreaker } from "@circuitry/breaker"
import type { Limiter } from "@circuitry/limiter"
import type * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpRouter from "@effect/platform/HttpRouter"
import type * as Effect from "effect/Effect"
import * as internal from "./internal/healthRoute.js"

/**
 * One breaker, as the health route shows it.
 *
 * @since 0.1.0
 * @category models
 */
export interface BreakerHealth {
  readonly name: string
  readonly state: CircuitBreaker.StateTag
  /** When an open circuit turns half-open (ISO 8601, Effect Clock); `null` unless Open. */
  readonly openUntil: string | null
  /** Calls, failures and slow calls in the current window, and failures in a row. */
  readonly counts: CircuitBreaker.Snapshot["counts"]
  /** Half-open probes in flight. */
  readonly probes: number
}

/**
 * One limiter, as the health route shows it.
 *
 * @since 0.1.0
 * @category models
 */
export interface LimiterHealth {
  readonly name: string
  readonly limit: number
  readonly inFlight: number
  /** Callers waiting in its queue. */
  readonly queued: number
  /** Calls rejected since it was made. */
  readonly rejected: number
  readonly partitions: Limiter.Snapshot["partitions"]
}

/**
 * The whole registry at one instant.
 *
 * @since 0.1.0
 * @category models
 */
export interface Health {
  /** When this was read (ISO 8601, Effect Clock). */
  readonly at: string
  /** Breakers that are not Closed. */
  readonly open: number
  /** Every breaker, by name. */
  readonly breakers: ReadonlyArray<BreakerHealth>
  /** Every limiter, by name; present only when a `LimiterRegistry` is provided. */
  readonly limiters?: ReadonlyArray<LimiterHealth>
}

/**
 * Reads every breaker in the registry (and every limiter in a provided `LimiterRegistry`), sorted
 * by name. Records nothing.
 *
 * @since 0.1.0
 * @category reading
 */
export const health: Effect.Effect<Health, never, BreakerRegistry.BreakerRegistry> = internal.health

/**
 * The JSON view: `200` with a `Health` body. The status stays 200 while circuits are open: an open
 * circuit is this service protecting itself from a dependency, not this service being down.
 *
 * @since 0.1.0
 * @category routes
 */
export const json: HttpApp.Default<never, BreakerRegistry.BreakerRegistry> = internal.json

/**
 * @since 0.1.0
 * @category models
 */
export interface HtmlOptions {
  /** Seconds between the page's own reloads. Default 5. */
  readonly refreshSeconds?: number | undefined
  /** The page title. Default `"Circuit breakers"`. */
  readonly title?: string | undefined
}

/**
 * Renders a `Health` as a small HTML page that reloads itself every `refreshSeconds`.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderHtml: (health: Health, options?: HtmlOptions) => string = internal.renderHtml

/**
 * The HTML view of `json`, for a person: a table that reloads itself.
 *
 * @since 0.1.0
 * @category routes
 */
export const html: (options?: HtmlOptions) => HttpApp.Default<never, BreakerRegistry.BreakerRegistry> = internal.html

/**
 * @since 0.1.0
 * @category models
 */
export interface RouterOptions extends HtmlOptions {
  /** Where the JSON is served; the HTML view is at `${path}/view`. Default `"/health/breakers"`. */
  readonly path?: `/${string}` | undefined
}

/**
 * Both views as a router, to `HttpRouter.concat` with an application's routes.
 *
 * @since 0.1.0
 * @category routes
 * @example
 * ```ts
 * import { BreakerRegistry } from "@circuitry/breaker"
 * import { HealthRoute } from "@circuitry/platform"
 * import { HttpRouter, HttpServerResponse } from "@effect/platform"
 *
 * const app = HttpRouter.empty.pipe(
 *   HttpRouter.get("/", HttpServerResponse.text("hello")),
 *   HttpRouter.concat(HealthRoute.router()) // GET /health/breakers and /health/breakers/view
 * )
 * ```
 */
export const router: (options?: RouterOptions) => HttpRouter.HttpRouter<never, BreakerRegistry.BreakerRegistry> =
  internal.router
