/**
 * A health route listing every breaker in the `BreakerRegistry` (or in the registries it is
 * given) and every breaker handed to it: its state, the counts in its
 * window and when it reopens, and, when a `LimiterRegistry` is provided too, every limiter's limit,
 * calls in flight and rejections; as JSON for machines, as server-sent events, and as a small HTML
 * page for a person that updates itself live. Reading it records nothing and does not count as use
 * of a breaker or a limiter. `make` adds a short history per breaker; an `authorize` hook given by
 * the application mounts operations (isolate, reset, extend an open circuit).
 *
 * @since 0.1.0
 */
import * as Edition from "@circuitry/core/Edition"
import type { BreakerRegistry, CircuitBreaker } from "@circuitry/breaker"
import type { Limiter } from "@circuitry/limiter"
import type { App, HttpServerRequest, Router } from "#http"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Breakers, DefaultRegistries, Registries, SourceContext, Sources } from "./HealthSources.js"
import * as errors from "./internal/errors.js"
import * as internal from "./internal/healthRoute.js"
import * as operations from "./internal/healthOperations.js"

/**
 * One breaker, as the health route shows it.
 *
 * @since 0.1.0
 * @category models
 */
export interface BreakerHealth {
  readonly name: string
  readonly state: CircuitBreaker.StateTag
  /** When an open circuit turns half-open (ISO 8601, Effect Clock); `null` unless Open. */
  readonly openUntil: string | null
  /** Calls, failures and slow calls in the current window, and failures in a row. */
  readonly counts: CircuitBreaker.Snapshot["counts"]
  /** Half-open probes in flight. */
  readonly probes: number
  /**
   * Where the verdict lives: `"local"` (this process only), or shared through a `BreakerStore` that
   * answered the breaker's last request (`"shared"`) or did not (`"unreachable"`: the breaker decides
   * locally until the store answers again).
   */
  readonly store: "local" | "shared" | "unreachable"
  /**
   * With a store: whose verdict the breaker follows now. `"fleet"`: the one shared by every member.
   * `"member"`: its own, with `sharing.quorum`, after its own policy opened it while the fleet
   * stays closed (it half-opens and closes on its own). Absent without a store.
   */
  readonly verdict?: "fleet" | "member"
  /** The last minutes of this breaker; present only on a route built by `make`. */
  readonly history?: BreakerHistory
}

/**
 * One sample of a breaker's history, taken on the Effect Clock.
 *
 * @since 0.1.0
 * @category models
 */
export interface Sample {
  /** When it was taken (ISO 8601, Effect Clock). */
  readonly at: string
  readonly state: CircuitBreaker.StateTag
  /** Calls and failures in the breaker's current window at that instant. */
  readonly calls: number
  readonly failures: number
  /** `failures / calls`, or `null` when the window held no call. */
  readonly failureRate: number | null
}

/**
 * A breaker's last minutes, as the route kept them: a bounded ring of samples and of transitions.
 *
 * @since 0.1.0
 * @category models
 */
export interface BreakerHistory {
  /** Oldest first; at most `history.samples`. */
  readonly samples: ReadonlyArray<Sample>
  /** Oldest first; at most `history.samples`, none older than `samples` x `every` before the newest sample. */
  readonly transitions: ReadonlyArray<{
    readonly from: CircuitBreaker.StateTag
    readonly to: CircuitBreaker.StateTag
    readonly at: string
  }>
}

/**
 * One limiter, as the health route shows it.
 *
 * @since 0.1.0
 * @category models
 */
export interface LimiterHealth {
  readonly name: string
  readonly limit: number
  readonly inFlight: number
  /** Callers waiting in its queue. */
  readonly queued: number
  /** Calls rejected since it was made. */
  readonly rejected: number
  readonly partitions: Limiter.Snapshot["partitions"]
}

/**
 * The whole registry at one instant.
 *
 * @since 0.1.0
 * @category models
 */
export interface Health {
  /** When this was read (ISO 8601, Effect Clock). */
  readonly at: string
  /** Breakers that are not Closed. */
  readonly open: number
  /** Every breaker, by name. */
  readonly breakers: ReadonlyArray<BreakerHealth>
  /** Every limiter, by name; present only when a `LimiterRegistry` is provided. */
  readonly limiters?: ReadonlyArray<LimiterHealth>
  /**
   * Whether a `BreakerStore` is in the route's own context. Breakers made by a registry built in
   * the same context share their verdicts through it; the breaker's snapshot does not yet say, per
   * breaker, whether it is shared, so this is what the route can know.
   */
  readonly storeInContext: boolean
}

/**
 * Reads every breaker in the registry (and every limiter in a provided `LimiterRegistry`), sorted
 * by name. Records nothing.
 *
 * @since 0.1.0
 * @category reading
 */
export const health: Effect.Effect<Health, never, BreakerRegistry.BreakerRegistry> = internal.health

/**
 * `health` over the given sources (see `HealthSources.Sources`): the breakers of `registries` and those handed.
 *
 * @since 0.2.0
 * @category reading
 * @example
 * ```ts
 * import { CircuitBreaker } from "@circuitry/breaker"
 * import { HealthRoute } from "@circuitry/platform"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const db = yield* CircuitBreaker.make({ name: "users-db", timeout: "1 second" })
 *   const health = yield* HealthRoute.healthOf({ breakers: [db], registries: [] })
 *   return health.open // 0 while "users-db" is closed
 * }).pipe(Effect.scoped)
 * ```
 */
export const healthOf: <B extends Breakers = [], G extends Registries = DefaultRegistries>(
  sources: Sources<B, G>
) => Effect.Effect<Health, never, SourceContext<B[number] | G[number]>> = internal.healthOf as typeof healthOf

/**
 * The JSON view: `200` with a `Health` body. The status stays 200 while circuits are open: an open
 * circuit is this service protecting itself from a dependency, not this service being down.
 *
 * @since 0.1.0
 * @category routes
 */
export const json: App<never, BreakerRegistry.BreakerRegistry> = internal.json

/**
 * @since 0.1.0
 * @category models
 */
export interface HtmlOptions {
  /**
   * Seconds between snapshots on the live stream, and between reloads of a page that has no
   * JavaScript or no `events` stream. Default 5.
   */
  readonly refreshSeconds?: number | undefined
  /** The page title. Default `"Circuit breakers"`. */
  readonly title?: string | undefined
  /**
   * The URL (relative to the page) of a stream of `view` events (`router` serves one); with it the
   * page replaces its tables from each event instead of reloading itself.
   */
  readonly events?: string | undefined
}

/**
 * Renders a `Health` as a small HTML page: live from `events` when given, else reloading itself
 * every `refreshSeconds`.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderHtml: (health: Health, options?: HtmlOptions) => string = internal.renderHtml

/**
 * The HTML view of `json`, for a person: a table that reloads itself (or updates live from
 * `options.events`).
 *
 * @since 0.1.0
 * @category routes
 */
export const html: (options?: HtmlOptions) => App<never, BreakerRegistry.BreakerRegistry> = internal.html

/**
 * An operation asked of the route, as the `authorize` hook sees it. `until` is epoch milliseconds
 * (Effect Clock), already computed from the request's `for` or `until`.
 *
 * @since 0.1.0
 * @category operations
 */
export type Operation =
  | { readonly _tag: "Isolate"; readonly breaker: string }
  | { readonly _tag: "Reset"; readonly breaker: string }
  | { readonly _tag: "ExtendOpen"; readonly breaker: string; readonly until: number }

/**
 * What the `authorize` hook decides. `Unauthenticated` answers 401 (with `challenge` as the
 * `WWW-Authenticate` header when given), `Denied` answers 403; neither changes anything.
 *
 * @since 0.1.0
 * @category operations
 */
export type Authorization =
  | { readonly _tag: "Allowed"; readonly identity: string }
  | { readonly _tag: "Denied"; readonly identity: string }
  | { readonly _tag: "Unauthenticated"; readonly challenge?: string | undefined }

/**
 * The caller `identity` may do it: it is logged and returned in the answer.
 *
 * @since 0.1.0
 * @category operations
 */
export const allowed: (identity: string) => Authorization = operations.allowed

/**
 * The caller is known (`identity`, logged) and may not do it: 403.
 *
 * @since 0.1.0
 * @category operations
 */
export const denied: (identity: string) => Authorization = operations.denied

/**
 * The request does not say who is calling: 401, with `challenge` as `WWW-Authenticate`.
 *
 * @since 0.1.0
 * @category operations
 */
export const unauthenticated: (challenge?: string) => Authorization = operations.unauthenticated

/**
 * The application's decision on one operation, from the request (its headers, a session, a mTLS
 * identity) and the operation. There is no default: without it no operation is mounted.
 *
 * @since 0.1.0
 * @category operations
 */
export type Authorize<R = never> = (
  request: HttpServerRequest.HttpServerRequest,
  operation: Operation
) => Effect.Effect<Authorization, never, R>

/**
 * The route's options: where it is served, what it shows (`HealthSources.Sources`: `breakers`, `registries`) and
 * the `authorize` hook of its operations.
 *
 * @since 0.1.0
 * @category models
 */
export interface RouterOptions<R = never, B extends Breakers = [], G extends Registries = DefaultRegistries>
  extends HtmlOptions, Sources<B, G> {
  /**
   * Where the JSON is served; the HTML view is at `${path}/view`, its live stream at
   * `${path}/view/events`, the JSON event stream at `${path}/events`. Default `"/health/breakers"`.
   */
  readonly path?: `/${string}` | undefined
  /**
   * Mounts `POST ${path}/isolate`, `${path}/reset` and `${path}/extend-open` (JSON bodies
   * `{ "breaker": name }`, plus `"for": "5 minutes"` or `"until": ISO 8601` for extend-open), each
   * decided by this hook. Absent, those paths are not mounted (404). An operation applies to every
   * breaker of that name the route shows (a registry's and one handed to it are one circuit).
   */
  readonly authorize?: Authorize<R> | undefined
}

/**
 * The JSON, the HTML view and their live streams as a router, to `HttpRouter.concat` with an
 * application's routes; with `authorize`, the operations too. It keeps no history (see `make`).
 * `Router` is the major's: an `HttpRouter.HttpRouter<never, R>` on Effect 3; on Effect 4 a route
 * layer (`HttpRouter.addAll`) to merge with the application's and serve with `HttpRouter.serve`.
 * Its options are checked where it is built: a bad one (a `path` not starting with `/`, a
 * `refreshSeconds` that is not a finite number > 0, an entry that is not a breaker) throws
 * `InvalidPlatformOptions`, naming the option; `make` fails with it instead.
 *
 * @since 0.1.0
 * @category routes
 * @example
 * ```ts
 * import { BreakerRegistry } from "@circuitry/breaker"
 * import { HealthRoute } from "@circuitry/platform"
 * import { HttpRouter, HttpServerResponse } from "@effect/platform"
 *
 * const app = HttpRouter.empty.pipe(
 *   HttpRouter.get("/", HttpServerResponse.text("hello")),
 *   HttpRouter.concat(HealthRoute.router()) // GET /health/breakers and /health/breakers/view
 * )
 * ```
 */
export const router: <R = never, B extends Breakers = [], G extends Registries = DefaultRegistries>(
  options?: RouterOptions<R, B, G>
) => Router<R | SourceContext<B[number] | G[number]>> = internal.router as typeof router

/**
 * @since 0.1.0
 * @category models
 */
export interface MakeOptions<
  R = never,
  B extends Breakers = [],
  G extends Registries = DefaultRegistries
> extends RouterOptions<R, B, G> {
  readonly history?:
    | {
        /** Samples kept per breaker (a whole number >= 1). Default 30. */
        readonly samples?: number | undefined
        /** Time between samples, on the Effect Clock (> 0). Default `"10 seconds"`: 5 minutes kept. */
        readonly every?: Edition.DurationInput | undefined
      }
    | undefined
}

/**
 * The package's one options error: an option of `make` that breaks a rule (out of range, or
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
 * `router` plus a short history per breaker (failure rate and transitions over the last minutes),
 * in the JSON and the HTML view. The history is sampled by a fiber that lives as long as the
 * scope. Fails with `InvalidPlatformOptions` naming the history option that is out of range, or the
 * entry of `breakers` or `registries` that is not a breaker or a registry (or a tag of one).
 *
 * @since 0.1.0
 * @category routes
 * @example
 * ```ts
 * import { HealthRoute } from "@circuitry/platform"
 * import { HttpServerRequest } from "@effect/platform"
 * import { Effect } from "effect"
 *
 * const routes = HealthRoute.make({
 *   history: { samples: 60, every: "5 seconds" },
 *   authorize: (request: HttpServerRequest.HttpServerRequest, _operation: HealthRoute.Operation) =>
 *     Effect.succeed(
 *       request.headers["authorization"] === "Bearer ops-token"
 *         ? HealthRoute.allowed("ops")
 *         : HealthRoute.unauthenticated("Bearer")
 *     )
 * })
 * ```
 */
export const make: <R = never, B extends Breakers = [], G extends Registries = DefaultRegistries>(
  options?: MakeOptions<R, B, G>
) => Effect.Effect<
  Router<R | SourceContext<B[number] | G[number]>>,
  InvalidPlatformOptions,
  Scope.Scope | SourceContext<B[number] | G[number]>
> = internal.make as typeof make
