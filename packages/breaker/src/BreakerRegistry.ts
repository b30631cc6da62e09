/**
 * Breakers by name: one per dependency, host or route, made on first use with shared defaults and
 * per-name overrides, and bounded in number.
 *
 * @since 0.1.0
 */
import * as Edition from "@circuitry/core/Edition"
import type * as Runtime from "#runtime"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as CircuitBreaker from "./CircuitBreaker.js"
import { InvalidBreakerOptions } from "./internal/errors.js"
import * as JsonConfig from "./internal/jsonConfig.js"
import * as LiveConfig from "./internal/liveConfig.js"
import * as internal from "./internal/registry.js"
import * as Rules from "./internal/rules.js"

/**
 * A registry. `TimeoutE` is what its breakers' `timeout` adds to a call's error channel: `never`
 * for a registry made without a timeout, `BreakerTimeoutError` for one whose defaults or overrides
 * carry one (made from `TimeoutRegistryOptions`).
 *
 * @since 0.1.0
 * @category models
 */
export interface BreakerRegistry<out TimeoutE = never> {
  /** The breaker called `name`, made on first use: same name, same breaker. */
  readonly get: (name: string) => Effect.Effect<CircuitBreaker.CircuitBreaker<TimeoutE>>
  /** The names held now, least recently used first. */
  readonly names: Effect.Effect<ReadonlyArray<string>>
  /** The breakers held now, least recently used first. Does not count as use. */
  readonly breakers: Effect.Effect<ReadonlyArray<CircuitBreaker.CircuitBreaker<TimeoutE>>>
  /**
   * A queue of the trips `maxOpen` refuses, one per spell (see `RegistryOptions.maxOpen`),
   * subscribed when this effect returns.
   */
  readonly cappedTrips: Effect.Effect<Edition.Subscription<CappedTrip>, never, Scope.Scope>
}

/**
 * @since 0.1.0
 * @category tags
 */
export const BreakerRegistry: Edition.Key<BreakerRegistry, BreakerRegistry> = Edition.KeyClass<
  BreakerRegistry,
  BreakerRegistry
>()("@circuitry/breaker/BreakerRegistry")

/**
 * A trip that `maxOpen` refused: the breaker's policy said open, and it stayed closed.
 *
 * @since 0.1.0
 * @category models
 */
export interface CappedTrip {
  readonly breaker: string
  /** When (epoch milliseconds, Effect Clock). */
  readonly at: number
  /** The registry's breakers open (Open or HalfOpen) then. */
  readonly open: number
  /** The most that may be open then (a fraction, applied to the breakers held then). */
  readonly maxOpen: number
  /** The breakers the registry held then. */
  readonly breakers: number
}

/**
 * The options of a registry whose breakers have no call deadline. A registry with a `timeout` in its
 * defaults or overrides is made from `TimeoutRegistryOptions`.
 *
 * @since 0.1.0
 * @category models
 */
export interface RegistryOptions {
  /** Options of every breaker (their `name` is ignored: each breaker takes its own). */
  readonly defaults?: CircuitBreaker.Options | undefined
  /** Options for particular names, over the defaults. */
  readonly overrides?: Record<string, CircuitBreaker.Options> | undefined
  /**
   * The most breakers held at once. Past it, a closed breaker not used lately is dropped (second
   * chance: one used since it was last placed is passed over once), an open one only when none is
   * closed, with its metric series, so a breaker per host or per key cannot grow memory without
   * bound. Default: unbounded.
   */
  readonly maxBreakers?: number | undefined
  /**
   * The ejection cap, as Envoy's `max_ejection_percent`: at most this many (a whole number >= 1)
   * or this share (`{ fraction }`, 0 < fraction <= 1, of the breakers held now, rounded down, at
   * least 1) of the registry's breakers open at once, so that a bad deploy of the caller (every call
   * failing, whichever upstream it goes to) cannot eject every upstream. Default: no cap.
   *
   * - Open means Open or HalfOpen. Isolated does not count: an operator isolating circuits should
   *   not switch off the automatic ejection of the rest.
   * - Past the cap, a closed breaker whose policy trips stays Closed (its calls go through) and keeps
   *   its window. The refusal is reported once per spell (until its policy stops tripping, or it
   *   moves): a `CappedTrip` on `cappedTrips`, the counter `circuitry_breaker_trips_capped_total`, a
   *   warning annotated with `breaker`; and `snapshot.capped` is `true` for as long as it lasts.
   * - When an open breaker closes (or is isolated, or dropped), the next call of a capped breaker
   *   whose policy still trips opens it.
   * - Only a breaker's own trip is capped: a verdict adopted from a shared store (the fleet decides:
   *   its quorum) and a failed half-open probe are not, and both count as open.
   */
  readonly maxOpen?: number | { readonly fraction: number } | undefined
  /**
   * Live configuration: each value is applied to the breakers held, in place. A value is taken over
   * the layer's options field by field (`defaults`, `overrides`, `maxBreakers`, `maxOpen`; what it
   * leaves out is the layer's) and replaces the value before it. A breaker keeps its state and its
   * window: 30 failures in a failure-rate window of 100 calls stay there under a new threshold (judged
   * at the next call); a smaller count window keeps the most recent calls that fit, a shorter time
   * window what is still inside it; a window of another kind starts empty. An open episode keeps its
   * `until`; the next one uses the new `openFor`. A value that breaks a rule is reported (a warning
   * with the `InvalidBreakerOptions`, and `circuitry_breaker_registry_configs_total{outcome="rejected"}`)
   * and ignored: the config before it stays. A stream that fails is reported; the last config stays.
   * `config` inside a value is ignored. See `watchConfig` for a config kept as JSON in a shared place.
   *
   * A value may carry a `timeout` only for a registry made with one (`TimeoutRegistryOptions`: its
   * type has `BreakerTimeoutError`); for a registry made without, such a value is rejected as above.
   */
  readonly config?: Stream.Stream<TimeoutRegistryOptions, unknown> | undefined
}

/**
 * The options of a registry whose breakers may have a call deadline: a `timeout` in the defaults
 * (every breaker) or in an override (that name). Its type is `BreakerRegistry<BreakerTimeoutError>`:
 * a call through one of its breakers may fail with `BreakerTimeoutError` at the deadline, answered
 * at once whatever the call's interruption costs (see `CircuitBreaker.TimeoutOptions.timeout`).
 * Whether a registry takes timeouts is decided when it is made: its live `config` may then set,
 * change or lift them per name.
 *
 * @since 0.2.0
 * @category models
 */
export interface TimeoutRegistryOptions extends Omit<RegistryOptions, "defaults" | "overrides"> {
  /** Options of every breaker, `timeout` included (their `name` is ignored). */
  readonly defaults?: CircuitBreaker.TimeoutOptions | undefined
  /** Options for particular names, over the defaults: a name's own `timeout`. */
  readonly overrides?: Record<string, CircuitBreaker.TimeoutOptions> | undefined
}

/**
 * Trips refused by a registry's `maxOpen`, a counter (one per spell; see `RegistryOptions.maxOpen`).
 * Not tagged by breaker: names are unbounded (a breaker per host); the warning and the
 * `CappedTrip` name it.
 *
 * @since 0.1.0
 * @category metrics
 */
export const tripsCapped: Edition.Counter = internal.tripsCapped

/**
 * Values of a registry's live `config` stream, a counter tagged `outcome`: `applied` or `rejected`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const configsTotal: Edition.Counter = LiveConfig.configsTotal

/**
 * Makes a registry in the current scope (its breakers, and its `config` stream's fiber, last as
 * long as it does). Every option is validated here, into `InvalidBreakerOptions`. A `timeout` in the
 * defaults or an override gives a `BreakerRegistry<BreakerTimeoutError>`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { BreakerRegistry, Policy } from "@circuitry/breaker"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const registry = yield* BreakerRegistry.make({
 *     defaults: { policy: Policy.consecutiveFailures(5) },
 *     maxOpen: { fraction: 0.3 } // at most 30% of the hosts ejected at once
 *   })
 *   const breaker = yield* registry.get("10.0.0.7:8080")
 *   return (yield* breaker.snapshot).capped // true while the cap keeps it closed
 * }).pipe(Effect.scoped)
 *
 * // With a deadline for one name: a BreakerRegistry<BreakerTimeoutError>
 * const bounded = BreakerRegistry.make({ overrides: { "users-db": { timeout: "1 second" } } })
 * ```
 */
export const make: {
  (options?: RegistryOptions): Effect.Effect<BreakerRegistry, InvalidBreakerOptions, Scope.Scope>
  (
    options?: TimeoutRegistryOptions
  ): Effect.Effect<BreakerRegistry<CircuitBreaker.BreakerTimeoutError>, InvalidBreakerOptions, Scope.Scope>
} = internal.make as (
  options?: TimeoutRegistryOptions
) => Effect.Effect<BreakerRegistry<never>, InvalidBreakerOptions, Scope.Scope>

/**
 * Reads a JSON document of registry options, as a live `config` kept as text would hold it.
 * Policies are written as data, by `_tag`: `{ "_tag": "ConsecutiveFailures", "threshold": 5 }`,
 * `{ "_tag": "FailureRate", "threshold": 0.5, "minimumCalls": 20, "window": { "_tag": "CountWindow",
 * "size": 100 } }` (a window is `Policy.countWindow`'s or `Policy.timeWindow`'s value); a duration
 * (`openFor`, `timeout`, ...) is milliseconds or a string such as `"30 seconds"`. `isFailure` and
 * schedules cannot be written in JSON.
 *
 * The document is checked here: text that is not JSON, a field a registry does not know, a policy
 * of another `_tag`, or a value that breaks its option's rule is an `InvalidBreakerOptions` that
 * names the field and says what is valid (`defaults.policy._tag must be "ConsecutiveFailures" or
 * "FailureRate", got "Nope"`). A `timeout` is read, and taken only by a registry made with one.
 *
 * @since 0.1.0
 * @category config
 * @example
 * ```ts
 * import { BreakerRegistry } from "@circuitry/breaker"
 *
 * const options = BreakerRegistry.parseConfig(
 *   '{ "defaults": { "policy": { "_tag": "ConsecutiveFailures", "threshold": 3 } }, "maxOpen": { "fraction": 0.3 } }'
 * )
 * ```
 */
export const parseConfig: (text: string) => Edition.Result<TimeoutRegistryOptions, InvalidBreakerOptions> =
  JsonConfig.parse as (text: string) => Edition.Result<TimeoutRegistryOptions, InvalidBreakerOptions>

/**
 * A live `config` kept as JSON (see `parseConfig`) under one key that every member of a fleet
 * reads, so that one change reaches the fleet: `load` reads the key (`CacheStore.get(key)` of
 * `@circuitry/redis`, a SQL row, a file), at once and then every `every` (default 5 seconds), and
 * the document is emitted when it changed. A key that is gone emits `{}`: the layer's options
 * again. A document that `parseConfig` rejects is reported and skipped; a read that fails is
 * reported once per outage and tried again at the next tick; the config before stays. Each member
 * sees a change within `every`. A bad `every` fails the stream with `InvalidBreakerOptions` (the
 * registry reports it).
 *
 * @since 0.1.0
 * @category config
 * @example
 * ```ts
 * import { BreakerRegistry, Policy } from "@circuitry/breaker"
 * import { Effect, Option, Ref } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   // Here a Ref; in a fleet, a key every member reads (e.g. a Redis CacheStore's `get("breakers/config")`).
 *   const key = yield* Ref.make(Option.some('{ "maxOpen": { "fraction": 0.3 } }'))
 *   const registry = yield* BreakerRegistry.make({
 *     defaults: { policy: Policy.consecutiveFailures(5) },
 *     config: BreakerRegistry.watchConfig(Ref.get(key), { every: "10 seconds" })
 *   })
 *   return yield* registry.get("payments.example")
 * }).pipe(Effect.scoped)
 * ```
 */
export const watchConfig = <E, R>(
  load: Effect.Effect<Option.Option<string>, E, R>,
  options?: { readonly every?: Edition.DurationInput | undefined }
): Stream.Stream<TimeoutRegistryOptions, InvalidBreakerOptions, R> =>
  Edition.Result.match(Rules.check("every", Rules.durationAboveZero, options?.every ?? "5 seconds"), {
    onFailure: (message) => Stream.fail(new InvalidBreakerOptions({ message: `watchConfig: ${message}` })),
    onSuccess: (millis) => JsonConfig.watch(load, millis) as Stream.Stream<TimeoutRegistryOptions, never, R>
  })

/**
 * A registry as a `Layer`: for the `BreakerRegistry` tag, or for a tag of the application's. A
 * registry with a `timeout` needs a tag whose service is `BreakerRegistry<BreakerTimeoutError>`
 * (the `BreakerRegistry` tag's registry is typed without it).
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { BreakerRegistry, CircuitBreaker, Policy } from "@circuitry/breaker"
 * import { Context, Effect } from "effect"
 *
 * const RegistryLive = BreakerRegistry.layer({
 *   defaults: { policy: Policy.consecutiveFailures(5), openFor: "30 seconds" },
 *   overrides: { "payment-gateway": { openFor: "2 minutes" } },
 *   maxBreakers: 10_000,
 *   maxOpen: { fraction: 0.3 }
 * })
 *
 * const charge = Effect.succeed("ok").pipe(BreakerRegistry.withBreakerFor("payment-gateway"))
 * const main = charge.pipe(Effect.provide(RegistryLive))
 *
 * // Breakers with deadlines, under a tag of the application's
 * class Databases extends Context.Tag("Databases")<
 *   Databases,
 *   BreakerRegistry.BreakerRegistry<CircuitBreaker.BreakerTimeoutError>
 * >() {}
 * const DatabasesLive = BreakerRegistry.layer(Databases, { defaults: { timeout: "1 second" } })
 * const read = Effect.succeed("row").pipe(
 *   BreakerRegistry.withBreakerFor("users-db", Databases),
 *   Effect.catchTag("BreakerTimeoutError", () => Effect.succeed("fallback"))
 * )
 * const app = read.pipe(Effect.provide(DatabasesLive))
 * ```
 */
export const layer: {
  <I>(tag: Edition.Key<I, BreakerRegistry>, options?: RegistryOptions): Layer.Layer<I, InvalidBreakerOptions>
} & Runtime.TimedLayer<
  BreakerRegistry<CircuitBreaker.BreakerTimeoutError>,
  TimeoutRegistryOptions,
  InvalidBreakerOptions
> & {
    (options?: RegistryOptions): Layer.Layer<BreakerRegistry, InvalidBreakerOptions>
  } = ((tagOrOptions?: unknown, options?: TimeoutRegistryOptions) =>
  Edition.isKey(tagOrOptions)
    ? Edition.layerScoped(tagOrOptions as Edition.Key<unknown, unknown>, internal.make(options))
    : Edition.layerScoped(BreakerRegistry, make(tagOrOptions as RegistryOptions | undefined))) as typeof layer

/**
 * Runs an effect through the breaker called `name` of a registry: the `BreakerRegistry` in the
 * context, or the one given (a value, or a tag of the application's). The error channel adds
 * `BreakerOpenError`, and `BreakerTimeoutError` when the registry's type has it. Data-first and
 * data-last.
 *
 * @since 0.1.0
 * @category combinators
 * @example
 * ```ts
 * import { BreakerRegistry } from "@circuitry/breaker"
 * import { Effect } from "effect"
 *
 * const dataLast = Effect.succeed("ok").pipe(BreakerRegistry.withBreakerFor("db"))
 * const dataFirst = BreakerRegistry.withBreakerFor(Effect.succeed("ok"), "db")
 * ```
 */
export const withBreakerFor: {
  (
    name: string
  ): <A, E, R>(
    self: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | CircuitBreaker.BreakerOpenError, R | BreakerRegistry>
  <I = never, TimeoutE = never>(
    name: string,
    registry: BreakerRegistry<TimeoutE> | Edition.Key<I, BreakerRegistry<TimeoutE>>
  ): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | CircuitBreaker.BreakerOpenError | TimeoutE, R | I>
  <A, E, R>(
    self: Effect.Effect<A, E, R>,
    name: string
  ): Effect.Effect<A, E | CircuitBreaker.BreakerOpenError, R | BreakerRegistry>
  <A, E, R, I = never, TimeoutE = never>(
    self: Effect.Effect<A, E, R>,
    name: string,
    registry: BreakerRegistry<TimeoutE> | Edition.Key<I, BreakerRegistry<TimeoutE>>
  ): Effect.Effect<A, E | CircuitBreaker.BreakerOpenError | TimeoutE, R | I>
} = dual(
  (args) => Effect.isEffect(args[0]),
  <A, E, R>(
    self: Effect.Effect<A, E, R>,
    name: string,
    registry: unknown = BreakerRegistry
  ): Effect.Effect<A, unknown, unknown> =>
    Effect.flatMap(
      Edition.isKey(registry)
        ? (registry as Edition.Key<unknown, internal.Registry>)
        : Effect.succeed(registry as internal.Registry),
      (r) => Effect.flatMap(r.get(name), (breaker) => breaker.execute(self))
    )
)
