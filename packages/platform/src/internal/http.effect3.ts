/**
 * The HTTP modules the platform is built on, on Effect 3: @effect/platform 0.97 (http.effect4.ts has
 * the same names over effect/http, where Effect 4 folded them). The sources import them from
 * "#http", a subpath import chosen by the "@circuitry/effect4" condition and rewritten to a relative
 * path by the build, as core's "#edition" is. Only what the sources use is here.
 *
 * @internal
 */
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Cause from "effect/Cause"
import type * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"

export * as HttpClient from "@effect/platform/HttpClient"
export * as HttpClientError from "@effect/platform/HttpClientError"
export type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
export type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
export * as HttpRouter from "@effect/platform/HttpRouter"
export * as HttpServerRequest from "@effect/platform/HttpServerRequest"
export * as HttpServerResponse from "@effect/platform/HttpServerResponse"

/**
 * A handler: an effect that answers the request it reads (`App` on Effect 3; Effect 4
 * has no `HttpApp` module, and the same type is spelled out).
 *
 * @internal
 */
export type App<E = never, R = never> = HttpApp.Default<E, R>

/**
 * Whether a value is an `HttpClient` (Effect 3 has no `HttpClient.isHttpClient`: its `TypeId` is read).
 *
 * @internal
 */
export const isHttpClient = (u: unknown): u is HttpClient.HttpClient => Predicate.hasProperty(u, HttpClient.TypeId)

/**
 * A JSON response from a value known to encode (`HttpServerResponse.unsafeJson` on Effect 3,
 * `jsonUnsafe` on 4).
 *
 * @internal
 */
export const jsonUnsafe: typeof HttpServerResponse.unsafeJson = HttpServerResponse.unsafeJson

/**
 * One route of a router the platform builds (`HealthRoute`, `MetricsRoute`): the same data on both
 * majors, made into the major's router by `router`.
 *
 * @internal
 */
export interface Route<R> {
  readonly method: "GET" | "POST"
  readonly path: `/${string}`
  readonly handler: App<never, R>
}

/**
 * A router as the major has it: on Effect 3 an `HttpRouter` value, to `HttpRouter.concat` with an
 * application's routes (on Effect 4, a layer that adds its routes to the `HttpRouter` service).
 *
 * @internal
 */
export type Router<R> = HttpRouter.HttpRouter<never, R>

/**
 * The major's router of these routes (`HttpRouter.empty` and `HttpRouter.route` on Effect 3).
 *
 * @internal
 */
export const router = <R>(routes: ReadonlyArray<Route<R>>): Router<R> =>
  routes.reduce<Router<R>>(
    (router, route) => HttpRouter.route(route.method)(route.path, route.handler)(router),
    HttpRouter.empty
  )

/**
 * What a failed client call went wrong with, in one vocabulary for both majors: a transport failure
 * (with the timeout the guard adds), a response whose status was refused (`StatusCode`), or another
 * reason (`InvalidUrl`, `Encode`, `Decode`, `EmptyBody`, ...). Effect 3 has `RequestError` and
 * `ResponseError`, each with a `reason` string.
 *
 * @internal
 */
export const clientFailure = (
  error: HttpClientError.HttpClientError
):
  | { readonly _tag: "Transport" }
  | { readonly _tag: "StatusCode"; readonly status: number }
  | { readonly _tag: "Other"; readonly reason: string } =>
  error._tag === "RequestError"
    ? error.reason === "Transport"
      ? { _tag: "Transport" }
      : { _tag: "Other", reason: error.reason }
    : error.reason === "StatusCode"
      ? { _tag: "StatusCode", status: error.response.status }
      : { _tag: "Other", reason: error.reason }

/**
 * The error type of the guard's timeout (`RequestError` on Effect 3, `HttpClientError` on 4).
 *
 * @internal
 */
export type TimeoutFailure = HttpClientError.RequestError

/**
 * The failure the guard's `timeout` gives: a transport error whose cause is a timeout
 * (`RequestError` "Transport" over a `TimeoutException` on Effect 3).
 *
 * @internal
 */
export const timeoutFailure = (request: HttpClientRequest.HttpClientRequest, description: string): TimeoutFailure =>
  new HttpClientError.RequestError({
    request,
    reason: "Transport",
    cause: new Cause.TimeoutException(description),
    description
  })

/**
 * Middleware around every handler of an `HttpApi`, as a layer (`HttpApiBuilder.middleware` on
 * Effect 3, provided next to `HttpApiBuilder.api`; it runs before the API encodes errors).
 *
 * @internal
 */
export type ApiMiddleware = Layer.Layer<never>

/** @internal */
export const apiMiddleware = (f: <E, R>(app: App<E, R>) => App<E, R>): ApiMiddleware =>
  HttpApiBuilder.middleware((app) => f(app))
