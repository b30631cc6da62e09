/**
 * Load shedding for an `@effect/platform` HTTP server: every request goes through a limiter, and a
 * request over the limit is answered at once with `503 Service Unavailable` (or `429 Too Many
 * Requests`), an `application/problem+json` body (RFC 9457) and `Retry-After`, without reaching
 * the handler. `shedding` also refuses a request that waited too long before its handler (in the
 * socket, behind a busy event loop, or in the process), which a concurrency limit cannot see.
 *
 * @since 0.1.0
 */
import type { Limiter, Shedder } from "@circuitry/limiter"
import type * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as Context from "effect/Context"
import type * as Http from "node:http"
import * as internal from "./internal/limiterHttpServer.js"
import * as shed from "./internal/shedding.js"

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
 * What both middlewares do when a client's connection closes before its response.
 *
 * @since 0.2.0
 * @category models
 */
export interface DisconnectOptions {
  /**
   * Run the handler interruptibly (the default), so that it stops at its next suspension (an I/O
   * wait, a sleep, a yield to the event loop) once its client's connection closes;
   * `@effect/platform` runs handlers uninterruptibly, which lets them work on for a client that
   * has gone. Finalizers and `Effect.uninterruptible` regions in the handler still run to the end.
   * `false` keeps the handler uninterruptible.
   */
  readonly interruptOnDisconnect?: boolean | undefined
}

/**
 * `middleware` also runs its wait in the limiter's queue interruptibly (`interruptOnDisconnect`):
 * a client that goes while queued leaves the queue, and one that goes while served frees its slot
 * once its handler stops.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends DisconnectOptions {
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
 * handler. A `LimiterRejectedError` from a limiter inside the handler gets the same answer. A
 * client that disconnects stops its handler, or leaves the queue, and frees its place at once
 * (`DisconnectOptions`).
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

/**
 * The body of a shed request's refusal: RFC 9457 problem details, plus the shedder's verdict.
 *
 * @since 0.2.0
 * @category models
 */
export interface ShedProblem {
  readonly type: string
  readonly title: string
  readonly status: 503
  readonly detail: string
  /** The shedder's name. */
  readonly shedder: string
  readonly reason: Shedder.Reason
  /** How long the request waited before its handler, loop delay included, in whole milliseconds. */
  readonly waitedMillis: number
}

/**
 * @since 0.2.0
 * @category models
 */
export interface SheddingOptions extends DisconnectOptions {
  /** The problem `type` URI. Default `"about:blank"`. */
  readonly type?: string | undefined
  /** The problem `title`. Default `"Service Unavailable"`. */
  readonly title?: string | undefined
}

/**
 * @since 0.2.0
 * @category models
 */
export interface ArrivalOptions extends SheddingOptions {
  /**
   * Judge each request as it arrives, before any fiber is made for it: a request this shedder
   * refuses then (the loop is late: the request waited in the socket) is answered from the Node
   * listener with `shedResponse`'s status, headers and body, and no middleware, handler or fiber
   * runs for it, which is what keeps a refusal cheap when the process has no time to spare.
   */
  readonly shedder?: Shedder.Shedder | undefined
}

/**
 * Marks when each request reaches the process: a listener on the Node server's `request` event,
 * placed before every other (so before `@effect/platform-node`'s handler starts the request's
 * fiber). Pass the server through it where `NodeHttpServer` creates it. Without it `shedding`
 * counts no wait in the process, only the event loop's. With `options.shedder`, requests are
 * also judged as they arrive (see `ArrivalOptions`).
 *
 * @since 0.2.0
 * @category arrivals
 * @example
 * ```ts
 * import { LimiterHttpServer } from "@circuitry/platform"
 * import { NodeHttpServer } from "@effect/platform-node"
 * import { createServer } from "node:http"
 *
 * const ServerLive = NodeHttpServer.layer(() => LimiterHttpServer.trackArrivals(createServer()), { port: 3000 })
 * ```
 */
export const trackArrivals: <S extends Http.Server>(server: S, options?: ArrivalOptions) => S = shed.trackArrivals

/**
 * How long a request has waited since its server's `request` event (see `trackArrivals`), in
 * milliseconds of `performance.now()`; 0 for a request of a server that does not track arrivals.
 *
 * @since 0.2.0
 * @category arrivals
 */
export const waitedMillis: (request: HttpServerRequest.HttpServerRequest) => number = shed.waitedMillis

/**
 * The answer for a shed request: 503, `Content-Type: application/problem+json`, `Retry-After` (the
 * shedder's interval in whole seconds, at least 1) and `Cache-Control: no-store`.
 *
 * @since 0.2.0
 * @category rendering
 */
export const shedResponse: (
  error: Shedder.LoadShedError,
  options?: SheddingOptions
) => HttpServerResponse.HttpServerResponse = shed.shedResponse

/**
 * Middleware that sheds what the process cannot serve: each request's wait before its handler (its
 * time in the process since `trackArrivals` saw it, plus the event loop's delay while the loop is
 * saturated) goes to `shedder` (a value or a tag); a request it refuses is answered at once with
 * `shedResponse` and its handler never runs. Put it outermost, around `middleware` when both are
 * used: a shed then costs no limiter slot.
 *
 * @since 0.2.0
 * @category middleware
 * @example
 * ```ts
 * import { Limit, Limiter, Shedder } from "@circuitry/limiter"
 * import { LimiterHttpServer } from "@circuitry/platform"
 * import { HttpRouter, HttpServer, HttpServerResponse } from "@effect/platform"
 * import { NodeHttpServer } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 * import { createServer } from "node:http"
 *
 * const router = HttpRouter.empty.pipe(HttpRouter.get("/search", HttpServerResponse.text("results")))
 *
 * const serve = Effect.gen(function* () {
 *   const shedder = yield* Shedder.make({ name: "api" }) // target 50 ms, interval 500 ms
 *   const limiter = yield* Limiter.make({ name: "api", limit: Limit.gradient2() })
 *   return HttpServer.serve(
 *     router.pipe(LimiterHttpServer.middleware(limiter), LimiterHttpServer.shedding(shedder))
 *   )
 * })
 *
 * const main = Layer.unwrapScoped(serve).pipe(
 *   Layer.provide(NodeHttpServer.layer(() => LimiterHttpServer.trackArrivals(createServer()), { port: 3000 }))
 * )
 * ```
 */
export const shedding: <I = never>(
  shedder: Shedder.Shedder | Context.Tag<I, Shedder.Shedder>,
  options?: SheddingOptions
) => <E, R>(app: HttpApp.Default<E, R>) => HttpApp.Default<E, R | I | HttpServerRequest.HttpServerRequest> =
  shed.shedding
