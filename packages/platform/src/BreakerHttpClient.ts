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
import { BreakerRegistry, CircuitBreaker } from "@circuitry/breaker"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { dual } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"

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
   * Which errors of the wrapped client count as failures. Default: `RequestError` "Transport"
   * (connection refused or reset, DNS, the `timeout` below) and anything that is not an
   * `HttpClientError`; a `ResponseError` with reason "StatusCode" (from a `filterStatus` inside)
   * is judged by `isFailureStatus`; `RequestError` "Encode" and "InvalidUrl" never count (the
   * request never reached the dependency).
   */
  readonly isFailureError?: ((error: unknown) => boolean) | undefined
  /**
   * The longest to wait for the response (its status and headers) inside the breaker. Past it the
   * request is aborted, counts as a failure, and fails with a `RequestError` "Transport" whose
   * `cause` is a `TimeoutException`. Default: no limit (a caller's own timeout outside the client
   * interrupts the request, and an interruption never counts).
   */
  readonly timeout?: Duration.DurationInput | undefined
  /**
   * Honour an upstream `Retry-After` (seconds or an HTTP date) on a 503 or 429: when the circuit is
   * open after that answer, it stays open at least until then. Default `true`.
   */
  readonly respectRetryAfter?: boolean | undefined
  /**
   * The longest open time a `Retry-After` may ask for; longer requests are cut to it. Default: no
   * limit (the upstream is believed).
   */
  readonly maxRetryAfter?: Duration.DurationInput | undefined
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
export const BreakerHttpClient: Context.Tag<BreakerHttpClient, BreakerHttpClient> =
  Context.GenericTag<BreakerHttpClient>("@circuitry/platform/BreakerHttpClient")

/**
 * The default `isFailureStatus`: 5xx and 429.
 *
 * @since 0.1.0
 * @category predicates
 */
export const defaultIsFailureStatus = (status: number): boolean => status >= 500 || status === 429

/**
 * The default key: the request URL's origin, or `undefined` when the URL does not parse (such a
 * request is passed to the client unguarded, which fails it with `RequestError` "InvalidUrl").
 *
 * @since 0.1.0
 * @category keys
 */
export const originKey = (request: HttpClientRequest.HttpClientRequest): string | undefined => {
  try {
    const origin = new URL(request.url).origin
    return origin === "null" ? undefined : origin
  } catch {
    return undefined
  }
}

/**
 * Parses a `Retry-After` header value into epoch milliseconds: a whole number of seconds after
 * `now`, or an HTTP date. `undefined` when the value is neither.
 *
 * @since 0.1.0
 * @category retry-after
 */
export const parseRetryAfter = (value: string, now: number): number | undefined => {
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return now + Number(trimmed) * 1000
  // An HTTP date names a weekday and a month: refuse bare numbers with signs, decimals, etc.
  if (!/[A-Za-z]/.test(trimmed)) return undefined
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? undefined : date
}

/**
 * The default `isFailureError` (see `Options.isFailureError`), given the status rule.
 *
 * @since 0.1.0
 * @category predicates
 */
export const defaultIsFailureError =
  (isFailureStatus: (status: number) => boolean = defaultIsFailureStatus) =>
  (error: unknown): boolean => {
    if (!HttpClientError.isHttpClientError(error)) return true
    if (error._tag === "RequestError") return error.reason === "Transport"
    return error.reason === "StatusCode" ? isFailureStatus(error.response.status) : true
  }

/** A response that counts as a failure, carried out of `execute` and handed back unchanged. */
class CountedResponse {
  constructor(readonly response: HttpClientResponse.HttpClientResponse) {}
}

interface Resolved {
  readonly key: (request: HttpClientRequest.HttpClientRequest) => string | undefined
  readonly isFailureStatus: (status: number) => boolean
  readonly isFailureError: (error: unknown) => boolean
  readonly timeout: Duration.Duration | undefined
  readonly respectRetryAfter: boolean
  readonly maxRetryAfterMillis: number
}

const decodeDuration = (input: Duration.DurationInput): Duration.Duration | undefined => {
  try {
    const duration = Duration.decode(input)
    return Duration.isFinite(duration) && Duration.toMillis(duration) > 0 ? duration : undefined
  } catch {
    return undefined
  }
}

const resolve = (options: Options | undefined): Either.Either<Resolved, CircuitBreaker.InvalidBreakerOptions> => {
  const fail = (message: string) => Either.left(new CircuitBreaker.InvalidBreakerOptions({ message }))
  const o = options ?? {}
  for (const name of ["key", "isFailureStatus", "isFailureError"] as const) {
    if (o[name] !== undefined && typeof o[name] !== "function") {
      return fail(`BreakerHttpClient: ${name} must be a function, got ${typeof o[name]}`)
    }
  }
  let timeout: Duration.Duration | undefined
  if (o.timeout !== undefined) {
    timeout = decodeDuration(o.timeout)
    if (timeout === undefined) {
      return fail(`BreakerHttpClient: timeout must be a finite duration > 0, got ${JSON.stringify(String(o.timeout))}`)
    }
  }
  let maxRetryAfterMillis = Infinity
  if (o.maxRetryAfter !== undefined) {
    const max = decodeDuration(o.maxRetryAfter)
    if (max === undefined) {
      return fail(
        `BreakerHttpClient: maxRetryAfter must be a finite duration > 0, got ${JSON.stringify(String(o.maxRetryAfter))}`
      )
    }
    maxRetryAfterMillis = Duration.toMillis(max)
  }
  if (o.respectRetryAfter !== undefined && typeof o.respectRetryAfter !== "boolean") {
    return fail(`BreakerHttpClient: respectRetryAfter must be a boolean, got ${typeof o.respectRetryAfter}`)
  }
  const isFailureStatus = o.isFailureStatus ?? defaultIsFailureStatus
  const userKey = o.key
  return Either.right({
    key: userKey === undefined ? originKey : userKey,
    isFailureStatus,
    isFailureError: o.isFailureError ?? defaultIsFailureError(isFailureStatus),
    timeout,
    respectRetryAfter: o.respectRetryAfter ?? true,
    maxRetryAfterMillis
  })
}

/** A user predicate that throws is a bug in it: judge the outcome a failure rather than crash. */
const judge = <A>(predicate: (a: A) => boolean, a: A): boolean => {
  try {
    return predicate(a)
  } catch {
    return true
  }
}

const guardWith = <E, R>(
  client: HttpClient.HttpClient.With<E, R>,
  registry: BreakerRegistry.BreakerRegistry,
  options: Resolved
): HttpClient.HttpClient.With<E | HttpClientError.RequestError | CircuitBreaker.BreakerOpenError, R> =>
  HttpClient.transform(client, (effect, request) =>
    Effect.suspend(() => {
      const name = options.key(request)
      if (name === undefined) return effect
      const timeout = options.timeout
      const bounded: Effect.Effect<HttpClientResponse.HttpClientResponse, E | HttpClientError.RequestError, R> =
        timeout === undefined
          ? effect
          : Effect.timeoutFail(effect, {
              duration: timeout,
              onTimeout: () =>
                new HttpClientError.RequestError({
                  request,
                  reason: "Transport",
                  cause: new Cause.TimeoutException(`no response within ${Duration.format(timeout)}`),
                  description: `no response within ${Duration.format(timeout)}`
                })
            })
      // Inside the breaker, counted outcomes fail and everything else succeeds, so the breaker's
      // accounting follows these rules; outside, the caller gets exactly what the client gave.
      const judged = Effect.matchEffect(bounded, {
        onFailure: (error) =>
          judge(options.isFailureError, error) ? Effect.fail(error) : Effect.succeed(Either.left(error)),
        onSuccess: (response) =>
          judge(options.isFailureStatus, response.status)
            ? Effect.fail(new CountedResponse(response))
            : Effect.succeed(Either.right(response))
      })
      return Effect.flatMap(registry.get(name), (breaker) =>
        breaker.execute(judged).pipe(
          Effect.catchIf(
            (error): error is CountedResponse => error instanceof CountedResponse,
            (counted) => Effect.as(honourRetryAfter(breaker, counted.response, options), Either.right(counted.response))
          ),
          Effect.flatMap((outcome) =>
            Either.isRight(outcome) ? Effect.succeed(outcome.right) : Effect.fail(outcome.left)
          )
        )
      )
    })
  ) as HttpClient.HttpClient.With<E | HttpClientError.RequestError | CircuitBreaker.BreakerOpenError, R>

/** After a counted 503 or 429: keep the circuit open at least until the upstream's Retry-After. */
const honourRetryAfter = (
  breaker: CircuitBreaker.CircuitBreaker,
  response: HttpClientResponse.HttpClientResponse,
  options: Resolved
): Effect.Effect<void> => {
  if (!options.respectRetryAfter || (response.status !== 503 && response.status !== 429)) return Effect.void
  const header = response.headers["retry-after"]
  if (header === undefined) return Effect.void
  return Effect.clockWith((clock) => {
    const now = clock.unsafeCurrentTimeMillis()
    const until = parseRetryAfter(header, now)
    if (until === undefined) return Effect.void
    return breaker.extendOpen(Math.min(until, now + options.maxRetryAfterMillis))
  })
}

/**
 * Guards a client with the given registry's breakers. Options are validated here, once.
 * Data-first and data-last.
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
    HttpClient.HttpClient.With<E | HttpClientError.RequestError | CircuitBreaker.BreakerOpenError, R>,
    CircuitBreaker.InvalidBreakerOptions
  >
  <E, R>(
    client: HttpClient.HttpClient.With<E, R>,
    registry: BreakerRegistry.BreakerRegistry,
    options?: Options
  ): Effect.Effect<
    HttpClient.HttpClient.With<E | HttpClientError.RequestError | CircuitBreaker.BreakerOpenError, R>,
    CircuitBreaker.InvalidBreakerOptions
  >
} = dual(
  (args) => Predicate.hasProperty(args[0], HttpClient.TypeId),
  <E, R>(client: HttpClient.HttpClient.With<E, R>, registry: BreakerRegistry.BreakerRegistry, options?: Options) =>
    Effect.map(resolve(options), (resolved) => guardWith(client, registry, resolved))
)

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
export const make = (
  options?: Options
): Effect.Effect<
  BreakerHttpClient,
  CircuitBreaker.InvalidBreakerOptions,
  HttpClient.HttpClient | BreakerRegistry.BreakerRegistry
> =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const registry = yield* BreakerRegistry.BreakerRegistry
    return yield* guard(client, registry, options)
  })

/**
 * `make` as a layer of the `BreakerHttpClient` service.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options?: Options
): Layer.Layer<
  BreakerHttpClient,
  CircuitBreaker.InvalidBreakerOptions,
  HttpClient.HttpClient | BreakerRegistry.BreakerRegistry
> => Layer.effect(BreakerHttpClient, make(options))
