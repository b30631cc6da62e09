/** The implementation behind ../BreakerHttpServer.ts, where the public types and their documentation live. */
import * as Edition from "@circuitry/core/Edition"
import { CircuitBreaker } from "@circuitry/breaker"
import { apiMiddleware, type ApiMiddleware, type App, type HttpServerResponse } from "#http"
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Options, Problem } from "../BreakerHttpServer.js"
import * as refusal from "./refusal.js"

/** @internal */
export const retryAfterSeconds = (error: CircuitBreaker.BreakerOpenError): number | undefined => {
  switch (error.state) {
    case "Open":
      return refusal.retryAfterSeconds(error.retryAfterMillis)
    case "HalfOpen":
      return 1
    case "Isolated":
      return undefined
  }
}

/** @internal */
export const problem = (error: CircuitBreaker.BreakerOpenError, now: number, options?: Options): Problem => {
  const seconds = retryAfterSeconds(error)
  const openUntil = error.state === "Open" ? new Date(now + error.retryAfterMillis).toISOString() : null
  const detail =
    error.state === "Open"
      ? `Circuit "${error.breaker}" is open until ${openUntil}; retry after ${seconds} s.`
      : error.state === "HalfOpen"
        ? `Circuit "${error.breaker}" is half-open and testing its dependency; retry after ${seconds} s.`
        : `Circuit "${error.breaker}" is isolated until an operator resets it.`
  return {
    type: options?.type ?? "about:blank",
    title: options?.title ?? "Service Unavailable",
    status: 503,
    detail,
    circuit: error.breaker,
    state: error.state,
    openUntil
  }
}

/** @internal */
export const toResponse = (
  error: CircuitBreaker.BreakerOpenError,
  options?: Options
): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  Effect.clockWith((clock) =>
    Effect.sync(() =>
      refusal.problemResponse(problem(error, Edition.nowUnsafe(clock), options), retryAfterSeconds(error))
    )
  )

/** A `BreakerOpenError` in a cause, whether a failure or a defect (e.g. after `Effect.orDie`). */
const findOpenError = (cause: Cause.Cause<unknown>): Option.Option<CircuitBreaker.BreakerOpenError> => {
  const found = [...Edition.failures(cause), ...Edition.defects(cause)].find(CircuitBreaker.isBreakerOpenError)
  return found === undefined ? Option.none() : Option.some(found)
}

/** @internal */
export const makeMiddleware =
  (options?: Options) =>
  <E, R>(app: App<E, R>): App<Exclude<E, CircuitBreaker.BreakerOpenError>, R> =>
    Edition.catchCause(app, (cause) =>
      Option.match(findOpenError(cause), {
        onNone: () => Effect.failCause(cause as Cause.Cause<Exclude<E, CircuitBreaker.BreakerOpenError>>),
        onSome: (error) => toResponse(error, options)
      })
    )

/** @internal */
export const layerHttpApi = (options?: Options): ApiMiddleware => {
  const wrap = makeMiddleware(options)
  // Errors other than BreakerOpenError pass through untouched, for the API to encode as declared.
  return apiMiddleware((app) => wrap(app))
}
