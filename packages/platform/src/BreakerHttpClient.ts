/**
 * A breaker in front of every request of an `@effect/platform` `HttpClient`: one breaker per key
 * from the `BreakerRegistry` (by default the request's origin).
 *
 * What counts against a circuit: connection errors, timeouts, 5xx and 429 answers. Other 4xx
 * answers are successes (the dependency answered). A counted answer is still handed back to the
 * caller exactly as the client gave it: a 503 stays a 503 response, not an error. An upstream
 * `Retry-After` on a 503 or 429 keeps the circuit open at least that long. A refused request
 * fails with `BreakerOpenError` and sends nothing.
 *
 * @since 0.1.0
 */
import * as Edition from "@circuitry/core/Edition"
import type { BreakerRegistry, CircuitBreaker } from "@circuitry/breaker"
import type { HttpClient, HttpClientError, HttpClientRequest, TimeoutFailure } from "#http"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as errors from "./internal/errors.js"
import * as internal from "./internal/breakerHttpClient.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * The registry name of the breaker guarding a request. Default: the request URL's origin
   * (`"https://payments.example.com"`), so each upstream host gets its own circuit. Return a
   * finer key to isolate routes, e.g. `"payment-gateway/charge"` and `"payment-gateway/refund"`.
   * It sees the request as sent (after `prependUrl` and the like) and must not throw (a throw is
   * a defect). Keep keys to a bounded set: route templates, not ids.
   */
  readonly key?: ((request: HttpClientRequest.HttpClientRequest) => string) | undefined
  /**
   * Which response statuses count as failures. Default: 5xx and 429. Every other status is a
   * success for the circuit: the dependency answered.
   */
  readonly isFailureStatus?: ((status: number) => boolean) | undefined
  /**
   * Which errors of the wrapped client count as failures. Default: a transport failure
   * (connection refused or reset, DNS, the `timeout` below) and anything that is not an
   * `HttpClientError`; a refused status (from a `filterStatus` inside) is judged by
   * `isFailureStatus`; a request that could not be made ("Encode", "InvalidUrl") never counts (it
   * never reached the dependency). On Effect 3 these are `RequestError` "Transport", `ResponseError`
   * "StatusCode" and `RequestError` "Encode" / "InvalidUrl"; on Effect 4 an `HttpClientError` whose
   * `reason` is a `TransportError`, a `StatusCodeError`, an `EncodeError` / `InvalidUrlError`.
   */
  readonly isFailureError?: ((error: unknown) => boolean) | undefined
  /**
   * The longest to wait for the response (its status and headers) inside the breaker. Past it the
   * request is aborted, counts as a failure, and fails with a transport error whose `cause` is a
   * timeout (`RequestError` "Transport" over a `TimeoutException` on Effect 3, `HttpClientError` of a
   * `TransportError` over a `TimeoutError` on 4). Default: no limit (a caller's own timeout outside the client
   * interrupts the request, and an interruption never counts).
   */
  readonly timeout?: Edition.DurationInput | undefined
  /**
   * Honour an upstream `Retry-After` (seconds or an HTTP date) on a 503 or 429: when the circuit is
   * open after that answer, it stays open at least until then. Default `true`.
   */
  readonly respectRetryAfter?: boolean | undefined
  /**
   * The longest open time a `Retry-After` may ask for; longer requests are cut to it. Default: no
   * limit (the upstream is believed).
   */
  readonly maxRetryAfter?: Edition.DurationInput | undefined
}

/**
 * A client guarded by breakers: every request may also fail with `BreakerOpenError`.
 *
 * @since 0.1.0
 * @category models
 */
export type BreakerHttpClient = HttpClient.HttpClient.With<
  HttpClientError.HttpClientError | CircuitBreaker.BreakerOpenError
>

/**
 * The guarded client as a service, provided by `layer`.
 *
 * @since 0.1.0
 * @category tags
 */
export const BreakerHttpClient: Edition.Key<BreakerHttpClient, BreakerHttpClient> = Edition.key<BreakerHttpClient>(
  "@circuitry/platform/BreakerHttpClient"
)

/**
 * The default `isFailureStatus`: 5xx and 429.
 *
 * @since 0.1.0
 * @category predicates
 */
export const defaultIsFailureStatus: (status: number) => boolean = internal.defaultIsFailureStatus

/**
 * The default key: the request URL's origin, or `undefined` when the URL does not parse (such a
 * request is passed to the client unguarded, which fails it with `RequestError` "InvalidUrl").
 *
 * @since 0.1.0
 * @category keys
 */
export const originKey: (request: HttpClientRequest.HttpClientRequest) => string | undefined = internal.originKey

/**
 * Parses a `Retry-After` header value into epoch milliseconds: a whole number of seconds after
 * `now`, or an HTTP date. `undefined` when the value is neither.
 *
 * @since 0.1.0
 * @category retry-after
 */
export const parseRetryAfter: (value: string, now: number) => number | undefined = internal.parseRetryAfter

/**
 * The default `isFailureError` (see `Options.isFailureError`), given the status rule.
 *
 * @since 0.1.0
 * @category predicates
 */
export const defaultIsFailureError: (isFailureStatus?: (status: number) => boolean) => (error: unknown) => boolean =
  internal.defaultIsFailureError

/**
 * The package's one options error: an option of `guard` or `make` that breaks a rule (out of range, or
 * not the kind of value it must be); `message` names the option and the rule.
 *
 * @since 0.2.0
 * @category errors
 */
export const InvalidPlatformOptions: typeof errors.InvalidPlatformOptions = errors.InvalidPlatformOptions

/**
 * @since 0.2.0
 * @category errors
 */
export type InvalidPlatformOptions = errors.InvalidPlatformOptions

/**
 * Guards a client with the given registry's breakers. Options are validated here, once.
 * Data-first and data-last. `TimeoutFailure` is the `timeout`'s error: `RequestError` on Effect 3,
 * `HttpClientError` on 4.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { BreakerRegistry } from "@circuitry/breaker"
 * import { BreakerHttpClient } from "@circuitry/platform"
 * import { HttpClient } from "@effect/platform"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const registry = yield* BreakerRegistry.BreakerRegistry
 *   const client = yield* (yield* HttpClient.HttpClient).pipe(
 *     BreakerHttpClient.guard(registry, { key: (request) => new URL(request.url).pathname })
 *   )
 *   return yield* client.get("https://payments.example.com/charge")
 * })
 * ```
 */
export const guard: {
  (
    registry: BreakerRegistry.BreakerRegistry,
    options?: Options
  ): <E, R>(
    client: HttpClient.HttpClient.With<E, R>
  ) => Effect.Effect<
    HttpClient.HttpClient.With<E | TimeoutFailure | CircuitBreaker.BreakerOpenError, R>,
    InvalidPlatformOptions
  >
  <E, R>(
    client: HttpClient.HttpClient.With<E, R>,
    registry: BreakerRegistry.BreakerRegistry,
    options?: Options
  ): Effect.Effect<
    HttpClient.HttpClient.With<E | TimeoutFailure | CircuitBreaker.BreakerOpenError, R>,
    InvalidPlatformOptions
  >
} = internal.guard

/**
 * The one-liner: the `HttpClient` in the context, guarded by the `BreakerRegistry` in the context.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { BreakerRegistry } from "@circuitry/breaker"
 * import { BreakerHttpClient } from "@circuitry/platform"
 * import { NodeHttpClient } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const client = yield* BreakerHttpClient.make()
 *   const response = yield* client.get("https://payments.example.com/health")
 *   return response.status
 * })
 *
 * const main = program.pipe(Effect.provide(Layer.merge(NodeHttpClient.layer, BreakerRegistry.layer())))
 * ```
 */
export const make: (
  options?: Options
) => Effect.Effect<BreakerHttpClient, InvalidPlatformOptions, HttpClient.HttpClient | BreakerRegistry.BreakerRegistry> =
  internal.make

/**
 * `make` as a layer of the `BreakerHttpClient` service.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options?: Options
): Layer.Layer<BreakerHttpClient, InvalidPlatformOptions, HttpClient.HttpClient | BreakerRegistry.BreakerRegistry> =>
  Layer.effect(BreakerHttpClient, make(options))
