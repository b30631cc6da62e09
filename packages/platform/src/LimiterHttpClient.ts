/**
 * A concurrency limit in front of every request of an `@effect/platform` `HttpClient`: one
 * limiter per key from the `LimiterRegistry` (by default the request's origin), so that each
 * upstream host gets as many concurrent requests as it can take, found by the registry's `Limit`.
 *
 * Each request's round trip (to its response's status and headers) is a sample; a request over
 * the limit fails at once with `LimiterRejectedError` and sends nothing. With a breaker below
 * (`BreakerHttpClient` wrapped by this), an open circuit's `BreakerOpenError` is a drop, and so
 * is a timeout: the limit comes down while the dependency is in trouble.
 *
 * @since 0.1.0
 */
import * as Edition from "@circuitry/core/Edition"
import type { Limiter, LimiterRegistry } from "@circuitry/limiter"
import type { HttpClient, HttpClientError, HttpClientRequest } from "#http"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as internal from "./internal/limiterHttpClient.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * The registry name of the limiter for a request. Default: the request URL's origin. Keep keys
   * to a bounded set (hosts, route templates), or bound the registry with `maxLimiters`.
   */
  readonly key?: ((request: HttpClientRequest.HttpClientRequest) => string | undefined) | undefined
  /** The partition of a request within its limiter, e.g. by priority. Default: none. */
  readonly partition?: ((request: HttpClientRequest.HttpClientRequest) => string | undefined) | undefined
}

/**
 * A client under limiters: every request may also fail with `LimiterRejectedError`.
 *
 * @since 0.1.0
 * @category models
 */
export type LimiterHttpClient = HttpClient.HttpClient.With<
  HttpClientError.HttpClientError | Limiter.LimiterRejectedError
>

/**
 * The limited client as a service, provided by `layer`.
 *
 * @since 0.1.0
 * @category tags
 */
export const LimiterHttpClient: Edition.Key<LimiterHttpClient, LimiterHttpClient> = Edition.key<LimiterHttpClient>(
  "@circuitry/platform/LimiterHttpClient"
)

/**
 * The default key: the request URL's origin, or `undefined` when the URL does not parse (such a
 * request is passed on unlimited, and the client fails it with `RequestError` "InvalidUrl").
 *
 * @since 0.1.0
 * @category keys
 */
export const originKey: (request: HttpClientRequest.HttpClientRequest) => string | undefined = internal.originKey

/**
 * Puts a client under the registry's limiters. Data-first and data-last.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Limit, LimiterRegistry } from "@circuitry/limiter"
 * import { LimiterHttpClient } from "@circuitry/platform"
 * import { HttpClient } from "@effect/platform"
 * import { NodeHttpClient } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const registry = yield* LimiterRegistry.LimiterRegistry
 *   const client = (yield* HttpClient.HttpClient).pipe(LimiterHttpClient.guard(registry))
 *   return (yield* client.get("https://inventory.example.com/items")).status
 * })
 *
 * const main = program.pipe(
 *   Effect.provide(Layer.merge(NodeHttpClient.layer, LimiterRegistry.layer({ defaults: { limit: Limit.vegas() } })))
 * )
 * ```
 */
export const guard: {
  (
    registry: LimiterRegistry.LimiterRegistry,
    options?: Options
  ): <E, R>(client: HttpClient.HttpClient.With<E, R>) => HttpClient.HttpClient.With<E | Limiter.LimiterRejectedError, R>
  <E, R>(
    client: HttpClient.HttpClient.With<E, R>,
    registry: LimiterRegistry.LimiterRegistry,
    options?: Options
  ): HttpClient.HttpClient.With<E | Limiter.LimiterRejectedError, R>
} = internal.guard

/**
 * The `HttpClient` in the context under the `LimiterRegistry` in the context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (
  options?: Options
) => Effect.Effect<LimiterHttpClient, never, HttpClient.HttpClient | LimiterRegistry.LimiterRegistry> = internal.make

/**
 * `make` as a layer of the `LimiterHttpClient` service.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options?: Options
): Layer.Layer<LimiterHttpClient, never, HttpClient.HttpClient | LimiterRegistry.LimiterRegistry> =>
  Layer.effect(LimiterHttpClient, make(options))
