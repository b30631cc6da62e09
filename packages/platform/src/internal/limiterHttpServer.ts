import { Limiter } from "@circuitry/limiter"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as LHS from "../LimiterHttpServer.js"

/** @internal */
export const retryAfterSeconds = (error: Limiter.LimiterRejectedError): number =>
  Math.max(1, Math.ceil(error.retryAfterMillis / 1000))

/** @internal */
export const problem = (error: Limiter.LimiterRejectedError, options?: LHS.Options): LHS.Problem => {
  const status = options?.status ?? 503
  const where = error.partition === undefined ? "" : ` for partition "${error.partition}"`
  return {
    type: options?.type ?? "about:blank",
    title: options?.title ?? (status === 429 ? "Too Many Requests" : "Service Unavailable"),
    status,
    detail: `Limiter "${error.limiter}" is at its limit of ${error.limit} concurrent requests${where}; retry after ${retryAfterSeconds(error)} s.`,
    limiter: error.limiter,
    limit: error.limit,
    inFlight: error.inFlight,
    partition: error.partition ?? null
  }
}

/** @internal */
export const toResponse = (
  error: Limiter.LimiterRejectedError,
  options?: LHS.Options
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(problem(error, options), {
    status: options?.status ?? 503,
    contentType: "application/problem+json",
    headers: { "retry-after": String(retryAfterSeconds(error)), "cache-control": "no-store" }
  })

/** @internal */
export const middleware =
  <I = never>(limiter: Limiter.Limiter | Context.Tag<I, Limiter.Limiter>, options?: LHS.Options) =>
  <E, R>(
    app: HttpApp.Default<E, R>
  ): HttpApp.Default<Exclude<E, Limiter.LimiterRejectedError>, R | I | HttpServerRequest.HttpServerRequest> => {
    const partitionOf = options?.partition
    const guarded = (l: Limiter.Limiter, request: HttpServerRequest.HttpServerRequest) =>
      Effect.catchIf(
        l.execute(app, partitionOf === undefined ? undefined : { partition: partitionOf(request) }),
        (e): e is Limiter.LimiterRejectedError => e instanceof Limiter.LimiterRejectedError,
        (e) => Effect.succeed(toResponse(e, options))
      ) as HttpApp.Default<Exclude<E, Limiter.LimiterRejectedError>, R>
    return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      Limiter.isLimiter(limiter)
        ? guarded(limiter, request)
        : Effect.flatMap(limiter as Context.Tag<I, Limiter.Limiter>, (l) => guarded(l, request))
    )
  }
