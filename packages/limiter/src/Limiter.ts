/**
 * A concurrency limiter that is an Effect service: at most `limit` calls run at once, the limit set
 * by a `Limit` (fixed, or adaptive to the measured latency), with an optional FIFO queue and
 * guaranteed shares for partitions. Made with `make` or provided as a `Layer`, piped into any
 * effect with `withLimiter`.
 *
 * @since 0.1.0
 */
import type * as Edition from "@circuitry/core/Edition"
import type * as Cause from "effect/Cause"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as errors from "./internal/errors.js"
import * as internal from "./internal/limiter.js"
import type * as Limit from "./Limit.js"

/**
 * @since 0.1.0
 * @category symbols
 */
export const TypeId: unique symbol = internal.TypeId

/**
 * @since 0.1.0
 * @category symbols
 */
export type TypeId = typeof TypeId

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Shows in errors, metrics and health routes. Default `"default"`. */
  readonly name?: string | undefined
  /** The algorithm that sets the limit. Default `Limit.gradient2()`. */
  readonly limit?: Limit.Limit | undefined
  /**
   * Callers over the limit wait, first in first out, up to `size` deep (default 0: no queue) for
   * at most `timeout` (default 1 second; on the Effect Clock), then are rejected.
   */
  readonly queue?:
    | {
        readonly size?: number | undefined
        readonly timeout?: Edition.DurationInput | undefined
      }
    | undefined
  /**
   * Guaranteed share of the limit per partition (each 0 < share <= 1, together at most 1). Under
   * saturation each partition that is in use gets at least its share; a share that is not in use
   * may be borrowed. A partition is in use while it has calls in flight or waiting, or had a call
   * in the last second.
   */
  readonly partitions?: Record<string, number> | undefined
  /**
   * Outcomes that signal overload (a drop lowers an adaptive limit). Default: a `TimeoutException`
   * (as `Effect.timeout` fails or dies with) or an error whose `cause` is one (an HTTP client's
   * timed-out request), and a rejection from further down (a `BreakerOpenError`,
   * `LimiterRejectedError` or `LoadShedError`, recognised by `Rejection.isRejection` from
   * `@circuitry/core`).
   */
  readonly isDrop?: ((cause: Cause.Cause<unknown>) => boolean) | undefined
}

/**
 * A change of the limit, at epoch milliseconds from the Effect Clock.
 *
 * @since 0.1.0
 * @category models
 */
export interface Change {
  readonly limit: number
  readonly at: number
}

/**
 * What a limiter holds now, for health routes and dashboards.
 *
 * @since 0.1.0
 * @category models
 */
export interface Snapshot {
  readonly name: string
  readonly limit: number
  readonly inFlight: number
  /** Callers waiting in the queue. */
  readonly queued: number
  /** Calls rejected since the limiter was made (at once, or after waiting in the queue). */
  readonly rejected: number
  /** Each partition's share, the slots it is guaranteed at the current limit, and its calls in flight. */
  readonly partitions: ReadonlyArray<{
    readonly name: string
    readonly share: number
    readonly guaranteed: number
    readonly inFlight: number
  }>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Limiter {
  readonly [TypeId]: TypeId
  readonly name: string
  /** The current limit. */
  readonly limit: Effect.Effect<number>
  /** Calls running now. */
  readonly inFlight: Effect.Effect<number>
  /** Every change of the limit, from the moment the stream runs. */
  readonly changes: Stream.Stream<Change>
  /** The limit, the counts and the partitions at one instant. */
  readonly snapshot: Effect.Effect<Snapshot>
  /** Runs an effect through the limiter: what `withLimiter` does. */
  readonly execute: <A, E, R>(
    self: Effect.Effect<A, E, R>,
    options?: CallOptions
  ) => Effect.Effect<A, E | LimiterRejectedError, R>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface CallOptions {
  /** The partition the call belongs to; a name the limiter does not know gets no guaranteed share. */
  readonly partition?: string | undefined
}

/**
 * A call refused by the limiter: it was never run. `retryAfterMillis` estimates when to try again
 * from the current latency (the smoothed round trip; 0 before any call has finished).
 *
 * @since 0.1.0
 * @category errors
 */
export const LimiterRejectedError: typeof errors.LimiterRejectedError = errors.LimiterRejectedError

/**
 * @since 0.1.0
 * @category errors
 */
export type LimiterRejectedError = errors.LimiterRejectedError

/**
 * Whether a value is a `LimiterRejectedError`, from this copy of the package or another (it is
 * recognised by `Rejection.TypeId` from `@circuitry/core`, not by its class); a look-alike with the
 * same `_tag` is not one.
 *
 * @since 0.2.0
 * @category guards
 * @example
 * ```ts
 * import { Limiter } from "@circuitry/limiter"
 * import { Effect } from "effect"
 *
 * const fallback = <A, E, R>(self: Effect.Effect<A, E, R>) =>
 *   Effect.catchIf(self, Limiter.isLimiterRejectedError, () => Effect.succeed("busy"))
 * ```
 */
export const isLimiterRejectedError: (u: unknown) => u is LimiterRejectedError = errors.isLimiterRejectedError

/**
 * Options that break a rule; `message` names the option and the rule.
 *
 * @since 0.1.0
 * @category errors
 */
export const InvalidLimiterOptions: typeof errors.InvalidLimiterOptions = errors.InvalidLimiterOptions

/**
 * @since 0.1.0
 * @category errors
 */
export type InvalidLimiterOptions = errors.InvalidLimiterOptions

/**
 * @since 0.1.0
 * @category guards
 */
export const isLimiter: (u: unknown) => u is Limiter = internal.isLimiter

/**
 * Makes a limiter. Options (and the `Limit`) are validated here, once. Its metric series leave
 * the registry when the scope closes; it keeps limiting after that, recording no metrics.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Limit, Limiter } from "@circuitry/limiter"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const limiter = yield* Limiter.make({ name: "search", limit: Limit.gradient2({ min: 5, max: 200 }) })
 *   return yield* Effect.succeed("results").pipe(Limiter.withLimiter(limiter))
 * })
 * ```
 */
export const make: (options?: Options) => Effect.Effect<Limiter, InvalidLimiterOptions, Scope.Scope> = internal.make

/**
 * A limiter as a `Layer` for the given tag.
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { Limit, Limiter } from "@circuitry/limiter"
 * import { Context, Effect } from "effect"
 *
 * class Inventory extends Context.Tag("Inventory")<Inventory, Limiter.Limiter>() {}
 *
 * const InventoryLive = Limiter.layer(Inventory, {
 *   name: "inventory",
 *   limit: Limit.fixed(8),
 *   queue: { size: 32, timeout: "250 millis" }
 * })
 *
 * const lookup = Effect.succeed(3).pipe(Limiter.withLimiter(Inventory))
 * const main = lookup.pipe(Effect.provide(InventoryLive))
 * ```
 */
export const layer: <I>(tag: Edition.Key<I, Limiter>, options?: Options) => Layer.Layer<I, InvalidLimiterOptions> =
  internal.layer

/**
 * Runs an effect through a limiter (a value or a tag), optionally in a partition. Data-first and
 * data-last.
 *
 * @since 0.1.0
 * @category combinators
 * @example
 * ```ts
 * import { Limiter } from "@circuitry/limiter"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const limiter = yield* Limiter.make({ name: "api", partitions: { interactive: 0.8, batch: 0.2 } })
 *   return yield* Effect.succeed("page").pipe(Limiter.withLimiter(limiter, { partition: "interactive" }))
 * })
 * ```
 */
export const withLimiter: {
  <I = never>(
    limiter: Limiter | Edition.Key<I, Limiter>,
    options?: CallOptions
  ): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | LimiterRejectedError, R | I>
  <A, E, R, I = never>(
    self: Effect.Effect<A, E, R>,
    limiter: Limiter | Edition.Key<I, Limiter>,
    options?: CallOptions
  ): Effect.Effect<A, E | LimiterRejectedError, R | I>
} = internal.withLimiter

/**
 * The default `isDrop`: a `TimeoutException` (failure or defect) or a failure caused by one, or a
 * rejection (`BreakerOpenError`, `LimiterRejectedError`, `LoadShedError`: `Rejection.isRejection` from
 * `@circuitry/core`).
 *
 * @since 0.1.0
 * @category predicates
 */
export const defaultIsDrop: (cause: Cause.Cause<unknown>) => boolean = internal.defaultIsDrop

/**
 * The current limit as a gauge tagged `limiter`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const limitGauge: Edition.Gauge = internal.limitGauge

/**
 * Calls in flight as a gauge tagged `limiter` (and `partition` for calls in one).
 *
 * @since 0.1.0
 * @category metrics
 */
export const inFlightGauge: Edition.Gauge = internal.inFlightGauge

/**
 * Calls by outcome, a counter tagged `limiter`, `outcome` (`success`, `failure`, `dropped`,
 * `rejected`, `interrupted`) and `partition` for calls in one.
 *
 * @since 0.1.0
 * @category metrics
 */
export const callsTotal: Edition.Counter = internal.callsTotal

/**
 * Round-trip times of finished calls in milliseconds, a histogram tagged `limiter` (and
 * `partition`). Interrupted calls are not in it.
 *
 * @since 0.1.0
 * @category metrics
 */
export const roundTrip: Edition.Histogram = internal.roundTrip
