/**
 * The HTTP modules the platform is built on, on Effect 4: effect/http and effect/http-api, where
 * Effect 4 folded @effect/platform's HTTP modules, under the names http.effect3.ts gives on Effect 3.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpServerResponse from "effect/http/HttpServerResponse"

export * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
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
