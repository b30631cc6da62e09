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
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Predicate from "effect/Predicate"

export * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
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
