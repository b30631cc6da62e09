/**
 * Turns an open circuit into an HTTP answer: a `BreakerOpenError` anywhere in a handler becomes
 * `503 Service Unavailable` with an `application/problem+json` body (RFC 9457) and a
 * `Retry-After` header, for `HttpRouter` / `HttpApp` and for `HttpApi`.
 *
 * @since 0.1.0
 */
import type { CircuitBreaker } from "@circuitry/breaker"
import type { ApiMiddleware, App, HttpServerResponse } from "#http"
import type * as Effect from "effect/Effect"
import * as internal from "./internal/breakerHttpServer.js"

/**
 * The body of the 503 answer: RFC 9457 problem details, plus the circuit.
 *
 * @since 0.1.0
 * @category models
 */
export interface Problem {
  readonly type: string
  readonly title: string
  readonly status: 503
  readonly detail: string
  /** The breaker's name. */
  readonly circuit: string
  readonly state: "Open" | "HalfOpen" | "Isolated"
  /**
   * When the open episode ends (ISO 8601, from the Effect Clock); `null` when no time is known:
   * HalfOpen (probes are running now) and Isolated (until a person resets it).
   */
  readonly openUntil: string | null
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The problem `type` URI. Default `"about:blank"` (RFC 9457: the status says it all). */
  readonly type?: string | undefined
  /** The problem `title`. Default `"Service Unavailable"`. */
  readonly title?: string | undefined
}

/**
 * The `Retry-After` header value in whole seconds, rounded up and never 0: the time left in the
 * open episode, 1 s while HalfOpen (a probe is deciding now), and `undefined` while Isolated (no
 * time is known, so none is promised).
 *
 * @since 0.1.0
 * @category rendering
 */
export const retryAfterSeconds: (error: CircuitBreaker.BreakerOpenError) => number | undefined =
  internal.retryAfterSeconds

/**
 * The problem body for a refusal, at `now` (epoch milliseconds).
 *
 * @since 0.1.0
 * @category rendering
 */
export const problem: (error: CircuitBreaker.BreakerOpenError, now: number, options?: Options) => Problem =
  internal.problem

/**
 * The 503 answer for a refusal: `Content-Type: application/problem+json`, `Retry-After` (see
 * `retryAfterSeconds`) and `Cache-Control: no-store`.
 *
 * @since 0.1.0
 * @category rendering
 */
export const toResponse: (
  error: CircuitBreaker.BreakerOpenError,
  options?: Options
) => Effect.Effect<HttpServerResponse.HttpServerResponse> = internal.toResponse

/**
 * `middleware` with options for the problem body.
 *
 * @since 0.1.0
 * @category middleware
 */
export const makeMiddleware: (
  options?: Options
) => <E, R>(app: App<E, R>) => App<Exclude<E, CircuitBreaker.BreakerOpenError>, R> = internal.makeMiddleware

/**
 * Middleware for an `HttpApp` or `HttpRouter` (through `HttpRouter.use`, or around the app given
 * to `HttpServer.serve`): a `BreakerOpenError` that a handler fails with, or dies with, becomes the
 * 503 problem answer. Every other outcome passes through untouched.
 *
 * @since 0.1.0
 * @category middleware
 * @example
 * ```ts
 * import { BreakerRegistry } from "@circuitry/breaker"
 * import { BreakerHttpServer } from "@circuitry/platform"
 * import { HttpRouter, HttpServerResponse } from "@effect/platform"
 * import { Effect } from "effect"
 *
 * const router = HttpRouter.empty.pipe(
 *   HttpRouter.get(
 *     "/charge",
 *     Effect.succeed(HttpServerResponse.text("charged")).pipe(BreakerRegistry.withBreakerFor("payments"))
 *   ),
 *   HttpRouter.use(BreakerHttpServer.middleware)
 * )
 * ```
 */
export const middleware: <E, R>(app: App<E, R>) => App<Exclude<E, CircuitBreaker.BreakerOpenError>, R> =
  makeMiddleware()

/**
 * The middleware for an `HttpApi`, as a layer. On Effect 3 it is provided next to
 * `HttpApiBuilder.api` (a `Layer<never>`) and runs before the API encodes errors, so a handler may
 * fail with `BreakerOpenError` when the endpoint (or group, or API) declares it with
 * `.addError(CircuitBreaker.BreakerOpenError, { status: 503 })` (which also documents it in
 * OpenAPI), or die with it (`Effect.orDie`) when it does not. On Effect 4 it is a global
 * `HttpRouter` middleware (a layer that needs the `HttpRouter`), merged with
 * `HttpApiBuilder.layer(api)`: it turns the `BreakerOpenError`s the API does not declare (a defect
 * through `Effect.orDie`) into the 503; a declared one is encoded by the API as it declares it.
 *
 * @since 0.1.0
 * @category middleware
 */
export const layerHttpApi: (options?: Options) => ApiMiddleware = internal.layerHttpApi
