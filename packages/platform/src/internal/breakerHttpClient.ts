/** The implementation behind ../BreakerHttpClient.ts, where the public types and their documentation live. */
import * as Edition from "@circuitry/core/Edition"
import { BreakerRegistry, CircuitBreaker } from "@circuitry/breaker"
import {
  HttpClient,
  HttpClientError,
  clientFailure,
  isHttpClient,
  timeoutFailure,
  type TimeoutFailure,
  type HttpClientRequest,
  type HttpClientResponse
} from "#http"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import type { BreakerHttpClient, guard as PublicGuard, Options } from "../BreakerHttpClient.js"
import { originKey } from "./origin.js"
import type { InvalidPlatformOptions } from "./errors.js"
import { decodeBreakerClient } from "./options.js"

export { originKey }

/** @internal */
export const defaultIsFailureStatus = (status: number): boolean => status >= 500 || status === 429

/** @internal */
export const parseRetryAfter = (value: string, now: number): number | undefined => {
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return now + Number(trimmed) * 1000
  // An HTTP date names a weekday and a month: refuse bare numbers with signs, decimals, etc.
  if (!/[A-Za-z]/.test(trimmed)) return undefined
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? undefined : date
}

/** @internal */
export const defaultIsFailureError =
  (isFailureStatus: (status: number) => boolean = defaultIsFailureStatus) =>
  (error: unknown): boolean => {
    if (!HttpClientError.isHttpClientError(error)) return true
    // What went wrong is read by the major's pair (#http): Effect 3's RequestError / ResponseError,
    // Effect 4's HttpClientError with a tagged reason. A request that could not be made (a bad URL,
    // a body that did not encode) says nothing of the upstream; a response that did not decode does.
    const failure = clientFailure(error)
    switch (failure._tag) {
      case "Transport":
        return true
      case "StatusCode":
        return isFailureStatus(failure.status)
      case "Other":
        return !requestReasons.has(failure.reason)
    }
  }

/** The reasons (both majors' spellings) for a request that never reached the upstream. */
const requestReasons: ReadonlySet<string> = new Set(["InvalidUrl", "Encode", "InvalidUrlError", "EncodeError"])

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

const resolve = (options: Options | undefined): Edition.Result<Resolved, InvalidPlatformOptions> =>
  Edition.Result.map(decodeBreakerClient(options), (o) => {
    const isFailureStatus = o.isFailureStatus ?? defaultIsFailureStatus
    return {
      key: o.key ?? originKey,
      isFailureStatus,
      isFailureError: o.isFailureError ?? defaultIsFailureError(isFailureStatus),
      timeout: o.timeout === undefined ? undefined : Duration.millis(o.timeout),
      respectRetryAfter: o.respectRetryAfter ?? true,
      maxRetryAfterMillis: o.maxRetryAfter ?? Infinity
    }
  })

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
): HttpClient.HttpClient.With<E | TimeoutFailure | CircuitBreaker.BreakerOpenError, R> =>
  HttpClient.transform(client, (effect, request) =>
    Effect.suspend(() => {
      const name = options.key(request)
      if (name === undefined) return effect
      const timeout = options.timeout
      const bounded: Effect.Effect<HttpClientResponse.HttpClientResponse, E | TimeoutFailure, R> =
        timeout === undefined
          ? effect
          : Effect.flatMap(
              Effect.timeoutOption(effect, timeout),
              Option.match({
                onNone: () => Effect.fail(timeoutFailure(request, `no response within ${Duration.format(timeout)}`)),
                onSome: Effect.succeed
              })
            )
      // Inside the breaker, counted outcomes fail and everything else succeeds, so the breaker's
      // accounting follows these rules; outside, the caller gets exactly what the client gave.
      const judged = Effect.matchEffect(bounded, {
        onFailure: (error) =>
          judge(options.isFailureError, error)
            ? Effect.fail(error)
            : Effect.succeed(Edition.Result.fail(error) as Outcome<typeof error>),
        onSuccess: (response) =>
          judge(options.isFailureStatus, response.status)
            ? Effect.fail(new CountedResponse(response))
            : Effect.succeed(Edition.Result.succeed(response) as Outcome<never>)
      })
      return Effect.flatMap(registry.get(name), (breaker) =>
        breaker.execute(judged).pipe(
          Effect.catchIf(
            (error): error is CountedResponse => error instanceof CountedResponse,
            (counted) =>
              Effect.as(
                honourRetryAfter(breaker, counted.response, options),
                Edition.Result.succeed(counted.response) as Outcome<never>
              )
          ),
          Effect.flatMap((outcome) => Edition.fromResult(outcome))
        )
      )
    })
  ) as HttpClient.HttpClient.With<E | TimeoutFailure | CircuitBreaker.BreakerOpenError, R>

/** What the breaker lets through: a response, or a failure it did not count, handed back unchanged. */
type Outcome<E> = Edition.Result<HttpClientResponse.HttpClientResponse, E>

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
    const now = Edition.nowUnsafe(clock)
    const until = parseRetryAfter(header, now)
    if (until === undefined) return Effect.void
    return breaker.extendOpen(Math.min(until, now + options.maxRetryAfterMillis))
  })
}

/** @internal */
export const guard: typeof PublicGuard = dual(
  (args) => isHttpClient(args[0]),
  <E, R>(client: HttpClient.HttpClient.With<E, R>, registry: BreakerRegistry.BreakerRegistry, options?: Options) =>
    Effect.map(Edition.fromResult(resolve(options)), (resolved) => guardWith(client, registry, resolved))
)

/** @internal */
export const make = (
  options?: Options
): Effect.Effect<BreakerHttpClient, InvalidPlatformOptions, HttpClient.HttpClient | BreakerRegistry.BreakerRegistry> =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const registry = yield* BreakerRegistry.BreakerRegistry
    return guardWith(client, registry, yield* Edition.fromResult(resolve(options)))
  })
