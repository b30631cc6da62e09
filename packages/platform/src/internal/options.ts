/**
 * The package's options and their rules: each an Effect Schema made of `OptionRules`' rules (and a
 * few of this package's, written with `Edition.refine`), decoded once into the package's one
 * options error, `InvalidPlatformOptions`, whose message starts with the module given them:
 * `"BreakerHttpClient: timeout must be a finite duration > 0, got 0"`. Defaults are the modules'.
 */
import { CircuitBreaker, type BreakerRegistry } from "@circuitry/breaker"
import { OptionRules } from "@circuitry/core"
import * as Edition from "@circuitry/core/Edition"
import type { HttpClientRequest } from "#http"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidPlatformOptions } from "./errors.js"
import type { Resolved as History } from "./healthHistory.js"

/** Decodes `input` by `schema`; `owner` starts the message (`"HealthRoute: history.samples must be ..."`). */
const decode = <A, I>(
  owner: string,
  schema: OptionRules.Codec<A, I>,
  input: unknown
): Edition.Result<A, InvalidPlatformOptions> =>
  OptionRules.decode(schema, input, (message) => new InvalidPlatformOptions({ message: `${owner}: ${message}` }))

/** A function, typed `F`: what it takes and gives is for its type to say, which no schema can check. */
const Fn = <F>(): OptionRules.Codec<F> => OptionRules.Is((u): u is F => typeof u === "function", "a function")

const BreakerClientOptions = Schema.Struct({
  key: Schema.optional(Fn<(request: HttpClientRequest.HttpClientRequest) => string | undefined>()),
  isFailureStatus: Schema.optional(Fn<(status: number) => boolean>()),
  isFailureError: Schema.optional(Fn<(error: unknown) => boolean>()),
  timeout: Schema.optional(OptionRules.PositiveMillis),
  maxRetryAfter: Schema.optional(OptionRules.PositiveMillis),
  respectRetryAfter: Schema.optional(OptionRules.Flag)
})

/**
 * `BreakerHttpClient`'s options, durations as milliseconds.
 *
 * @internal
 */
export const decodeBreakerClient = (input: unknown) => decode("BreakerHttpClient", BreakerClientOptions, input)

const isRegistry = (u: unknown): u is BreakerRegistry.BreakerRegistry<unknown> =>
  typeof u === "object" && u !== null && "breakers" in u && Effect.isEffect((u as { breakers: unknown }).breakers)

/** A source of a health route: a value `is` accepts, or a tag (whose service is read when the route is). */
const source = (is: (u: unknown) => boolean, what: string) =>
  OptionRules.Is((u): u is unknown => Edition.isKey(u) || is(u), `${what} or a Context.Tag of one`)

const anArray = OptionRules.Is((u): u is ReadonlyArray<unknown> => Array.isArray(u), "an array")

/** What a route serves under: a path from the root. */
const RoutePath = OptionRules.Is(
  (u): u is `/${string}` => typeof u === "string" && u.startsWith("/"),
  'a path starting with "/"'
)

const Seconds = Edition.refine(Schema.Number, (n) => Number.isFinite(n) && n > 0, "a finite number of seconds > 0")

/** The options `router` and `make` share: where the route is, how its views refresh, who may operate. */
const RouteFields = {
  breakers: Schema.optional(anArray),
  registries: Schema.optional(anArray),
  path: Schema.optional(RoutePath),
  refreshSeconds: Schema.optional(Seconds),
  title: Schema.optional(OptionRules.Text),
  events: Schema.optional(OptionRules.Text),
  authorize: Schema.optional(Fn<(...args: never) => unknown>())
}

const RouteOptions = Schema.Struct(RouteFields)

const HealthOptions = Schema.Struct({
  ...RouteFields,
  history: Schema.optional(
    Schema.Struct({
      samples: Schema.optional(OptionRules.Whole(1)),
      every: Schema.optional(OptionRules.PositiveMillis)
    })
  )
})

// The entries apart from the arrays: a `Schema.Array` that refuses a non-array says so in words
// that differ between the majors, and `OptionRules` has no way yet to give it ours ("an array").
const HealthSources = Schema.Struct({
  breakers: Schema.optional(Schema.Array(source(CircuitBreaker.isCircuitBreaker, "a CircuitBreaker"))),
  registries: Schema.optional(Schema.Array(source(isRegistry, "a BreakerRegistry")))
})

/**
 * `HealthRoute.router`'s options: those it shares with `make`, and what it is handed to show.
 *
 * @internal
 */
export const decodeRoute = (input: unknown): Edition.Result<unknown, InvalidPlatformOptions> =>
  Edition.Result.flatMap(decode("HealthRoute", RouteOptions, input), () => decode("HealthRoute", HealthSources, input))

/**
 * `HealthRoute.make`'s options: what it is handed to show (its types say it; a value from elsewhere
 * may not: a breaker is a `CircuitBreaker` or a tag, a registry a `BreakerRegistry` or a tag, and the
 * message names the entry) and its history, with the history's defaults.
 *
 * @internal
 */
export const decodeHealth = (input: unknown): Edition.Result<History, InvalidPlatformOptions> =>
  Edition.Result.flatMap(decode("HealthRoute", HealthOptions, input), ({ history }) =>
    Edition.Result.map(decode("HealthRoute", HealthSources, input), (): History => ({
      samples: history?.samples ?? 30,
      everyMillis: history?.every ?? 10_000
    }))
  )
