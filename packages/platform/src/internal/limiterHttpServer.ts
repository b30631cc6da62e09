import * as Edition from "@circuitry/core/Edition"
import { Limiter } from "@circuitry/limiter"
import { HttpServerRequest, type App, type HttpServerResponse } from "#http"
import * as Effect from "effect/Effect"
import type * as LHS from "../LimiterHttpServer.js"
import { interruptibleOnDisconnect } from "./disconnect.js"
import * as refusal from "./refusal.js"

/** @internal */
export const retryAfterSeconds = (error: Limiter.LimiterRejectedError): number =>
  refusal.retryAfterSeconds(error.retryAfterMillis)

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
): HttpServerResponse.HttpServerResponse => refusal.problemResponse(problem(error, options), retryAfterSeconds(error))

/** @internal */
export const middleware =
  <I = never>(limiter: Limiter.Limiter | Edition.Key<I, Limiter.Limiter>, options?: LHS.Options) =>
  <E, R>(
    app: App<E, R>
  ): App<Exclude<E, Limiter.LimiterRejectedError>, R | I | HttpServerRequest.HttpServerRequest> => {
    const partitionOf = options?.partition
    const guarded = (l: Limiter.Limiter, request: HttpServerRequest.HttpServerRequest) =>
      Effect.catchIf(
        l.execute(app, partitionOf === undefined ? undefined : { partition: partitionOf(request) }),
        Limiter.isLimiterRejectedError,
        (e) => Effect.succeed(toResponse(e, options))
      ) as App<Exclude<E, Limiter.LimiterRejectedError>, R>
    // The wait for a slot as well as the handler: a client that has gone leaves the queue too.
    return interruptibleOnDisconnect(
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        Limiter.isLimiter(limiter)
          ? guarded(limiter, request)
          : Effect.flatMap(limiter as Edition.Key<I, Limiter.Limiter>, (l) => guarded(l, request))
      ),
      options
    )
  }
