/**
 * The HTTP modules the platform is built on, on Effect 4: effect/http and effect/http-api, where
 * Effect 4 folded @effect/platform's HTTP modules, under the names http.effect3.ts gives on Effect 3.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import type * as Effect from "effect/Effect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpRouter from "effect/http/HttpRouter"
import type * as Layer from "effect/Layer"
import * as HttpServerResponse from "effect/http/HttpServerResponse"

export * as HttpClient from "effect/http/HttpClient"
export * as HttpClientError from "effect/http/HttpClientError"
export type * as HttpClientRequest from "effect/http/HttpClientRequest"
export type * as HttpClientResponse from "effect/http/HttpClientResponse"
export * as HttpRouter from "effect/http/HttpRouter"
export * as HttpServerRequest from "effect/http/HttpServerRequest"
export * as HttpServerResponse from "effect/http/HttpServerResponse"

/**
 * A handler: an effect that answers the request it reads (`HttpApp.Default` on Effect 3; Effect 4
 * has no `HttpApp` module, and the same type is spelled out).
 *
 * @internal
 */
export type App<E = never, R = never> = Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  E,
  R | HttpServerRequest.HttpServerRequest
>

/**
 * Whether a value is an `HttpClient` (Effect 3 has no `HttpClient.isHttpClient`: its `TypeId` is read).
 *
 * @internal
 */
export const isHttpClient: (u: unknown) => u is HttpClient.HttpClient = HttpClient.isHttpClient

/**
 * A JSON response from a value known to encode (`HttpServerResponse.unsafeJson` on Effect 3,
 * `jsonUnsafe` on 4).
 *
 * @internal
 */
export const jsonUnsafe: typeof HttpServerResponse.jsonUnsafe = HttpServerResponse.jsonUnsafe

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
 * A router as the major has it: on Effect 4 a layer that adds its routes to the `HttpRouter`
 * service, to merge with an application's route layers and give to `HttpRouter.serve` (or
 * `toHttpEffect`); what its handlers need is a request requirement of the router (on Effect 3, an
 * `HttpRouter` value).
 *
 * @internal
 */
export type Router<R> = Layer.Layer<
  never,
  never,
  HttpRouter.HttpRouter | HttpRouter.Request.From<"Requires", Exclude<R, HttpRouter.Provided>>
>

/**
 * The major's router of these routes (`HttpRouter.addAll` of `HttpRouter.route`s on Effect 4).
 *
 * @internal
 */
export const router = <R>(routes: ReadonlyArray<Route<R>>): Router<R> =>
  HttpRouter.addAll(routes.map((route) => HttpRouter.route(route.method, route.path, route.handler))) as Router<R>

/**
 * What a failed client call went wrong with, in one vocabulary for both majors: a transport failure
 * (with the timeout the guard adds), a response whose status was refused (`StatusCode`), or another
 * reason. Effect 4 has one `HttpClientError` whose `reason` is tagged (`TransportError`,
 * `StatusCodeError`, `InvalidUrlError`, `EncodeError`, `DecodeError`, `EmptyBodyError`).
 *
 * @internal
 */
export const clientFailure = (
  error: HttpClientError.HttpClientError
):
  | { readonly _tag: "Transport" }
  | { readonly _tag: "StatusCode"; readonly status: number }
  | { readonly _tag: "Other"; readonly reason: string } => {
  const reason = error.reason
  switch (reason._tag) {
    case "TransportError":
      return { _tag: "Transport" }
    case "StatusCodeError":
      return { _tag: "StatusCode", status: reason.response.status }
    default:
      return { _tag: "Other", reason: reason._tag }
  }
}

/**
 * The error type of the guard's timeout (`RequestError` on Effect 3, `HttpClientError` on 4).
 *
 * @internal
 */
export type TimeoutFailure = HttpClientError.HttpClientError

/**
 * The failure the guard's `timeout` gives: a transport error whose cause is a timeout
 * (`HttpClientError` of a `TransportError` over a `Cause.TimeoutError` on Effect 4).
 *
 * @internal
 */
export const timeoutFailure = (request: HttpClientRequest.HttpClientRequest, description: string): TimeoutFailure =>
  new HttpClientError.HttpClientError({
    reason: new HttpClientError.TransportError({ request, cause: new Cause.TimeoutError(description), description })
  })

/**
 * Middleware around every handler of the router an `HttpApi` is served by, as a layer (a global
 * `HttpRouter.middleware` on Effect 4, merged with `HttpApiBuilder.layer`; the API has encoded its
 * declared errors by then, so it sees the failures the API does not declare and the defects).
 *
 * @internal
 */
export type ApiMiddleware = Layer.Layer<never, never, HttpRouter.HttpRouter>

/** @internal */
export const apiMiddleware = (f: <E, R>(app: App<E, R>) => App<E, R>): ApiMiddleware =>
  // `f` adds no requirement and no error: what the router's global middleware needs is the handlers'.
  HttpRouter.middleware((app) => f(app), { global: true }) as ApiMiddleware
