/**
 * A circuit breaker that is an Effect service, made with `make` or `layer`, used with `withBreaker`.
 *
 * @since 0.1.0
 */
import * as Edition from "@circuitry/core/Edition"
import type * as Runtime from "#runtime"
import type * as Cause from "effect/Cause"
import type * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as internal from "./internal/circuitBreaker.js"
import * as errors from "./internal/errors.js"
import * as metrics from "./internal/metrics.js"
import * as repair from "./internal/repair.js"
import type * as Policy from "./Policy.js"

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
export type StateTag = "Closed" | "Open" | "HalfOpen" | "Isolated"

/**
 * The state of a circuit. `until` is epoch milliseconds from the Effect Clock.
 *
 * @since 0.1.0
 * @category models
 */
export type State = Data.TaggedEnum<{
  Closed: {}
  Open: { readonly until: number }
  HalfOpen: {}
  Isolated: {}
}>

/**
 * Constructors and matchers for `State`.
 *
 * @since 0.1.0
 * @category models
 */
export const State: Data.TaggedEnum.Constructor<State> = internal.State

/**
 * One change of state. `at` is epoch milliseconds from this breaker's Effect Clock.
 *
 * @since 0.1.0
 * @category models
 */
export interface Transition {
  readonly from: StateTag
  readonly to: StateTag
  readonly at: number
  /** Who asked for it (`isolateBy`, `resetBy`, `extendOpen`); absent when the policy decided. */
  readonly by?: string
  /** With a shared store: the member (`"<name>#<id>"`) whose verdict this breaker adopted. */
  readonly origin?: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Shows in errors, metrics and shared stores. Default `"default"`. */
  readonly name?: string | undefined
  /** When a closed circuit opens. Default `Policy.consecutiveFailures(5)`. */
  readonly policy?: Policy.Policy | undefined
  /**
   * How long each open episode lasts: a fixed wait (default `"30 seconds"`), or a `Schedule` stepped
   * once per episode (restarted on close; one that is done keeps its last delay).
   */
  readonly openFor?: Edition.DurationInput | Schedule.Schedule<unknown, unknown> | undefined
  readonly halfOpen?:
    | {
        /** Concurrent probes allowed. Default 1. */
        readonly permits?: number | undefined
        /** Successful probes needed to close. Default 1. */
        readonly successesToClose?: number | undefined
        /** With a shared store: the longest a fleet probe lease lasts unreleased. Default `"60 seconds"`. */
        readonly probeLease?: Edition.DurationInput | undefined
        /** When a running probe counts as failed (not interrupted). Default: the last open time, at least 1 s. */
        readonly probeTimeout?: Edition.DurationInput | undefined
      }
    | undefined
  /** No call deadline here: a `timeout` makes these `TimeoutOptions`. */
  readonly timeout?: undefined
  /** Which failures count (default: all failures and defects; never an interruption; the rest are successes). */
  readonly isFailure?: ((cause: Cause.Cause<unknown>) => boolean) | undefined
  /** With a `BreakerStore`: the fleet opens when `quorum` members tripped within `quorumWindow`. */
  readonly sharing?:
    | {
        /** A count, or a fraction of the live members (rounded up, at least 1). Default 1. */
        readonly quorum?: number | { readonly fraction: number } | undefined
        /** How close together the quorum's trips must be. Keep it at least `openFor`. Default `"1 minute"`. */
        readonly quorumWindow?: Edition.DurationInput | undefined
      }
    | undefined
}

/**
 * The options of a breaker with a call deadline: a `CircuitBreaker<BreakerTimeoutError>`.
 *
 * @since 0.1.0
 * @category models
 */
export interface TimeoutOptions extends Omit<Options, "timeout"> {
  /** A deadline for every call: at it the caller gets `BreakerTimeoutError` and the call counts as failed. */
  readonly timeout?: Edition.DurationInput | undefined
}

/**
 * What a breaker holds now: its state and the counts in its current window.
 *
 * @since 0.1.0
 * @category models
 */
export interface Snapshot {
  readonly name: string
  readonly state: State
  /** Calls, failures and slow calls in the current window, and failures in a row. */
  readonly counts: {
    readonly calls: number
    readonly failures: number
    readonly slowCalls: number
    readonly consecutiveFailures: number
  }
  /** Half-open probes in flight. */
  readonly probes: number
  /** In a registry with `maxOpen`: `true` while the cap keeps closed a breaker whose policy says open. */
  readonly capped?: true | undefined
  /** With a shared store: whether the store answered the breaker's last request. Absent without a store. */
  readonly store?:
    | {
        readonly connected: boolean
        /** With `sharing.quorum`: the state is this breaker's own verdict, not the fleet's. */
        readonly local?: boolean | undefined
      }
    | undefined
}

/**
 * A breaker. `TimeoutE` is what its `timeout` adds to a call's errors (`never` without one).
 *
 * @since 0.1.0
 * @category models
 */
export interface CircuitBreaker<out TimeoutE = never> {
  readonly [TypeId]: TypeId
  readonly name: string
  /** The current state; Open past its `until` reads HalfOpen. */
  readonly state: Effect.Effect<State>
  /** Read-only: would a call be admitted now? Takes no probe permit and records nothing. */
  readonly isCallAllowed: Effect.Effect<boolean>
  /** Every transition, once, in order, from the moment the stream runs. */
  readonly changes: Stream.Stream<Transition>
  /** A queue of every transition, subscribed when this effect returns. */
  readonly subscribe: Effect.Effect<Edition.Subscription<Transition>, never, Scope.Scope>
  /** Manual: reject everything until `reset`. With a shared store, the whole fleet is isolated. */
  readonly isolate: Effect.Effect<void>
  /** Manual: back to Closed, counts and schedule cleared. With a shared store, for the whole fleet. */
  readonly reset: Effect.Effect<void>
  /** `isolate`, naming who asked: the transition carries `by` (on every member of a fleet too). */
  readonly isolateBy: (by: string) => Effect.Effect<void>
  /** `reset`, naming who asked (see `isolateBy`). */
  readonly resetBy: (by: string) => Effect.Effect<void>
  /** The state and the window's counts, for health routes and dashboards. Records nothing. */
  readonly snapshot: Effect.Effect<Snapshot>
  /** Keeps an Open circuit (with a store, the fleet) open at least until `untilMillis` (Effect Clock). */
  readonly extendOpen: (untilMillis: number, options?: { readonly by?: string | undefined }) => Effect.Effect<void>
  /** Runs an effect through the breaker: what `withBreaker` does. */
  readonly execute: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | BreakerOpenError | TimeoutE, R>
}

/**
 * Whether a value is a `CircuitBreaker` (made by `make`, `layer` or a `BreakerRegistry`).
 *
 * @since 0.1.0
 * @category guards
 * @example
 * ```ts
 * import { CircuitBreaker } from "@circuitry/breaker"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const breaker = yield* CircuitBreaker.make()
 *   return CircuitBreaker.isCircuitBreaker(breaker) // true
 * })
 * ```
 */
export const isCircuitBreaker: (u: unknown) => u is CircuitBreaker = internal.isCircuitBreaker

/**
 * A call refused by the breaker. The refused effect was not run. `retryAfterMillis`: the time left
 * in the open episode (0 when not known; see docs/breaker.md, "Errors").
 *
 * @since 0.1.0
 * @category errors
 */
export const BreakerOpenError: typeof errors.BreakerOpenError = errors.BreakerOpenError

/**
 * @since 0.1.0
 * @category errors
 */
export type BreakerOpenError = errors.BreakerOpenError

/**
 * Whether a value is a `BreakerOpenError` from any copy of the package (by `Rejection.TypeId`).
 *
 * @since 0.2.0
 * @category guards
 */
export const isBreakerOpenError: (u: unknown) => u is BreakerOpenError = errors.isBreakerOpenError

/**
 * A call that ran past the breaker's `timeout`, failed at the deadline; the call counts as a failure.
 *
 * @example
 * ```ts
 * import { CircuitBreaker } from "@circuitry/breaker"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const breaker = yield* CircuitBreaker.make({ name: "db", timeout: "2 seconds" })
 *   return yield* CircuitBreaker.withBreaker(Effect.never, breaker).pipe(
 *     Effect.catchTag("BreakerTimeoutError", () => Effect.succeed("too slow"))
 *   )
 * })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export const BreakerTimeoutError: typeof errors.BreakerTimeoutError = errors.BreakerTimeoutError

/**
 * @since 0.1.0
 * @category errors
 */
export type BreakerTimeoutError = errors.BreakerTimeoutError

/**
 * Whether a value is a `BreakerTimeoutError`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isBreakerTimeoutError = (u: unknown): u is BreakerTimeoutError => u instanceof errors.BreakerTimeoutError

/**
 * Options that break a rule; `message` names the option and the rule.
 *
 * @since 0.1.0
 * @category errors
 */
export const InvalidBreakerOptions: typeof errors.InvalidBreakerOptions = errors.InvalidBreakerOptions

/**
 * @since 0.1.0
 * @category errors
 */
export type InvalidBreakerOptions = errors.InvalidBreakerOptions

/**
 * Makes a breaker; options are validated here, once. It shares its verdict through the `BreakerStore`
 * in the context, if any, until its scope closes.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { CircuitBreaker, Policy } from "@circuitry/breaker"
 * import { Effect, Schedule } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const breaker = yield* CircuitBreaker.make({
 *     name: "payments",
 *     policy: Policy.consecutiveFailures(3),
 *     openFor: Schedule.exponential("1 second")
 *   })
 *   return yield* Effect.succeed("charged").pipe(CircuitBreaker.withBreaker(breaker))
 * })
 * ```
 */
export const make: {
  (options?: Options): Effect.Effect<CircuitBreaker, InvalidBreakerOptions, Scope.Scope>
  (options?: TimeoutOptions): Effect.Effect<CircuitBreaker<BreakerTimeoutError>, InvalidBreakerOptions, Scope.Scope>
} = internal.make

/**
 * A breaker as a `Layer` for the given tag. A breaker with a `timeout` needs a tag whose service is
 * `CircuitBreaker<BreakerTimeoutError>`.
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { CircuitBreaker } from "@circuitry/breaker"
 * import { Context, Effect } from "effect"
 *
 * class PaymentsBreaker extends Context.Tag("PaymentsBreaker")<PaymentsBreaker, CircuitBreaker.CircuitBreaker>() {}
 *
 * const PaymentsBreakerLive = CircuitBreaker.layer(PaymentsBreaker, { name: "payments" })
 *
 * const charge = Effect.succeed("charged").pipe(CircuitBreaker.withBreaker(PaymentsBreaker))
 * const main = charge.pipe(Effect.provide(PaymentsBreakerLive))
 * ```
 */
export const layer: {
  <I>(tag: Edition.Key<I, CircuitBreaker>, options?: Options): Layer.Layer<I, InvalidBreakerOptions>
} & Runtime.TimedLayer<CircuitBreaker<BreakerTimeoutError>, TimeoutOptions, InvalidBreakerOptions> = internal.layer

/**
 * Runs an effect through a breaker (a value or a tag), adding `BreakerOpenError` and the breaker's `TimeoutE`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const withBreaker: {
  <I = never, TimeoutE = never>(
    breaker: CircuitBreaker<TimeoutE> | Edition.Key<I, CircuitBreaker<TimeoutE>>
  ): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | BreakerOpenError | TimeoutE, R | I>
  <A, E, R, I = never, TimeoutE = never>(
    self: Effect.Effect<A, E, R>,
    breaker: CircuitBreaker<TimeoutE> | Edition.Key<I, CircuitBreaker<TimeoutE>>
  ): Effect.Effect<A, E | BreakerOpenError | TimeoutE, R | I>
} = internal.withBreaker

/**
 * Marks an effect as repair traffic: while Open it still runs, unrecorded, until one repair fails in the episode.
 *
 * @since 0.1.0
 * @category combinators
 */
export const repairing: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> = repair.repairing

/**
 * The per-fiber mark behind `repairing`: a `FiberRef` on Effect 3, a `Context.Reference` on Effect 4.
 *
 * @since 0.1.0
 * @category fiber refs
 */
export const repairTraffic = repair.repairTraffic

/**
 * Calls through a breaker, a counter tagged `breaker` and `outcome` (`success`, `failure`, `rejected`, `repair`).
 *
 * @since 0.1.0
 * @category metrics
 */
export const callsTotal = metrics.callsTotal

/**
 * Transitions, a counter tagged `breaker`, `from` and `to`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const transitionsTotal = metrics.transitionsTotal

/**
 * The state after the last transition, a gauge tagged `breaker`: 0 closed, 1 open, 2 half-open, 3 isolated.
 *
 * @since 0.1.0
 * @category metrics
 */
export const stateGauge = metrics.stateGauge

/**
 * Whether a breaker's `BreakerStore` answered its last request (1) or not (0), a gauge tagged `breaker`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const storeReachable = metrics.storeReachable

/**
 * Seconds each call a closed breaker ran took, a histogram tagged `breaker` (buckets 1 ms to 30 s).
 *
 * @since 0.1.0
 * @category metrics
 */
export const callDuration = metrics.callDuration
