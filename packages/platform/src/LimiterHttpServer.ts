/**
 * Load shedding for an `@effect/platform` HTTP server: every request goes through a limiter, and a
 * request over the limit is answered at once with `503 Service Unavailable` (or `429 Too Many
 * Requests`), an `application/problem+json` body (RFC 9457) and `Retry-After`, without reaching
 * the handler.
 *
 * @since 0.1.0
 */
import type { Limiter } from "@circuitry/limiter"
import type * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as Context from "effect/Context"
import * as internal from "./internal/limiterHttpServer.js"

/**
 * The body of the refusal: RFC 9457 problem details, plus the limiter's state.
 *
 * @since 0.1.0
 * @category models
 */
export interface Problem {
  readonly type: string
  readonly title: string
  readonly status: 503 | 429
  readonly detail: string
  /** The limiter's name. */
  readonly limiter: string
  readonly limit: number
  readonly inFlight: number
  /** The request's partition, `null` when it has none. */
  readonly partition: string | null
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * The partition of a request, e.g. from a header or the route (`request.headers["x-tenant"]`).
   * It must not throw. Default: no partition.
   */
  readonly partition?: ((request: HttpServerRequest.HttpServerRequest) => string | undefined) | undefined
  /** 503 (the server is overloaded; the default) or 429 (this caller sends too much). */
  readonly status?: 503 | 429 | undefined
  /** The problem `type` URI. Default `"about:blank"`. */
  readonly type?: string | undefined
  /** The problem `title`. Default: the status's reason phrase. */
  readonly title?: string | undefined
}

/**
 * The `Retry-After` value in whole seconds, rounded up and never 0: the rejection's estimate of
 * when a slot frees (about one round trip).
 *
 * @since 0.1.0
 * @category rendering
 */
export const retryAfterSeconds: (error: Limiter.LimiterRejectedError) => number = internal.retryAfterSeconds

/**
 * The problem body for a rejection.
 *
 * @since 0.1.0
 * @category rendering
 */
export const problem: (error: Limiter.LimiterRejectedError, options?: Options) => Problem = internal.problem

/**
 * The answer for a rejection: the status, `Content-Type: application/problem+json`, `Retry-After`
 * and `Cache-Control: no-store`.
 *
 * @since 0.1.0
 * @category rendering
 */
export const toResponse: (
  error: Limiter.LimiterRejectedError,
  options?: Options
) => HttpServerResponse.HttpServerResponse = internal.toResponse

/**
 * Middleware for an `HttpApp` or `HttpRouter` (through `HttpRouter.use`, or around the app given
 * to `HttpServer.serve`): each request runs through `limiter` (a value or a tag) in the partition
 * `options.partition` gives it; a request over the limit gets the refusal and never reaches the
 * handler. A `LimiterRejectedError` from a limiter inside the handler gets the same answer.
 *
 * @since 0.1.0
 * @category middleware
 * @example
 * ```ts
 * import { Limit, Limiter } from "@circuitry/limiter"
 * import { LimiterHttpServer } from "@circuitry/platform"
 * import { HttpRouter, HttpServerResponse } from "@effect/platform"
 * import { Effect } from "effect"
 *
 * const app = Effect.gen(function* () {
 *   const limiter = yield* Limiter.make({
 *     name: "api",
 *     limit: Limit.windowed(Limit.gradient2({ min: 4, max: 500 })),
 *     partitions: { interactive: 0.8, batch: 0.2 }
 *   })
 *   return HttpRouter.empty.pipe(
 *     HttpRouter.get("/search", HttpServerResponse.text("results")),
 *     HttpRouter.use(
 *       LimiterHttpServer.middleware(limiter, {
 *         partition: (request) => (request.headers["x-batch"] === "1" ? "batch" : "interactive")
 *       })
 *     )
 *   )
 * })
 * ```
 */
export const middleware: <I = never>(
  limiter: Limiter.Limiter | Context.Tag<I, Limiter.Limiter>,
  options?: Options
) => <E, R>(
  app: HttpApp.Default<E, R>
) => HttpApp.Default<Exclude<E, Limiter.LimiterRejectedError>, R | I | HttpServerRequest.HttpServerRequest> =
  internal.middleware
