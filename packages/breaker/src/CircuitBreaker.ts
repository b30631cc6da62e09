/**
 * A circuit breaker that is an Effect service: made with `make` or provided as a `Layer`, and
 * piped into any effect with `withBreaker`.
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
  /**
   * Who asked for it: the `by` given to `isolateBy`, `resetBy` or `extendOpen`, on this member and
   * on every member of the fleet that adopts the verdict. Absent when the policy decided.
   */
  readonly by?: string
  /**
   * With a shared store: the member (its store origin, `"<name>#<id>"`) whose verdict this
   * breaker adopted. Absent for this breaker's own transitions.
   */
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
   * How long each open episode lasts. A duration is a fixed wait (default `"30 seconds"`). A
   * `Schedule` is stepped once per open episode and its next delay is that episode's wait; it
   * restarts when the circuit closes. A schedule that is done keeps its last delay.
   */
  readonly openFor?: Edition.DurationInput | Schedule.Schedule<unknown, unknown> | undefined
  readonly halfOpen?:
    | {
        /** Concurrent probes allowed. Default 1. */
        readonly permits?: number | undefined
        /** Successful probes needed to close. Default 1. */
        readonly successesToClose?: number | undefined
        /**
         * With a shared store: the longest a member's fleet-wide probe lease lasts if it is never
         * released (the member died, or its release was lost). A lease is asked for the probe's
         * timeout plus 2 s (a live holder has given it back by then), never longer than this.
         * Default `"60 seconds"`.
         */
        readonly probeLease?: Edition.DurationInput | undefined
        /**
         * How long a probe may hold the circuit. Past it the probe counts as failed: the circuit
         * reopens with its next delay and the probe's permit (and fleet lease) go back. The call
         * itself is not interrupted: its caller waits for it as before (bound it with `timeout`),
         * and its late outcome is ignored. Default: the open time of the episode that ended, at
         * least 1 second.
         */
        readonly probeTimeout?: Edition.DurationInput | undefined
      }
    | undefined
  /**
   * No call deadline: a breaker made with a `timeout` is made from `TimeoutOptions`, and its type
   * says its calls may fail with `BreakerTimeoutError`.
   */
  readonly timeout?: undefined
  /**
   * Which failures count against the circuit. Default: every failure and defect. An interruption
   * never counts; a failure that does not count is recorded as a success (the dependency answered).
   */
  readonly isFailure?: ((cause: Cause.Cause<unknown>) => boolean) | undefined
  /**
   * With a shared store (`BreakerStore`): how a fleet of breakers of the same name opens.
   *
   * A member whose own policy trips opens at once (its local verdict) and reports its trip to the
   * store; the fleet opens (a stored verdict every member adopts) only when `quorum` distinct
   * members tripped within `quorumWindow`. Until then the other members stay closed, and the
   * member that tripped half-opens and closes on its own probes. Once the fleet is open, its
   * half-open probe is one per fleet. Members keep a heartbeat in the store (every 5 seconds, live
   * for 15), so that a fraction is of the live members. Without a store these options do nothing.
   */
  readonly sharing?:
    | {
        /**
         * Members that must trip within `quorumWindow` before the fleet opens: a count, or a
         * fraction of the live members (rounded up, at least 1). Default 1: one member's trip
         * opens the fleet.
         */
        readonly quorum?: number | { readonly fraction: number } | undefined
        /** How close together the quorum's trips must be. Keep it at least `openFor`. Default `"1 minute"`. */
        readonly quorumWindow?: Edition.DurationInput | undefined
      }
    | undefined
}

/**
 * The options of a breaker with a call deadline. Its type is `CircuitBreaker<BreakerTimeoutError>`:
 * `withBreaker` adds `BreakerTimeoutError` to the error channel.
 *
 * @since 0.1.0
 * @category models
 */
export interface TimeoutOptions extends Omit<Options, "timeout"> {
  /**
   * A deadline for every call through the breaker (resilience4j's TimeLimiter). At the deadline the
   * caller is answered at once, whatever the call's interruption costs (it finishes in the
   * background: `Effect.disconnect`), with the failure `BreakerTimeoutError`, and the call counts
   * as a failure, whatever `isFailure` says. Prefer this to `Effect.timeout` inside `withBreaker`,
   * which waits for the interruption to finish (a driver's cancel: seconds with `@effect/sql-pg`).
   * Default: none. A `BreakerRegistry` takes it in its defaults or overrides
   * (`BreakerRegistry.TimeoutRegistryOptions`), and is then a `BreakerRegistry<BreakerTimeoutError>`.
   */
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
  /**
   * In a registry with `maxOpen`: `true` while the breaker's policy says open but the cap keeps it
   * closed (its calls go through). Absent otherwise. See `BreakerRegistry.RegistryOptions.maxOpen`.
   */
  readonly capped?: true | undefined
  /**
   * With a shared store: whether the store answered the breaker's last request (`false` from the
   * first request that failed or timed out until one is answered). Absent without a store.
   */
  readonly store?:
    | {
        readonly connected: boolean
        /**
         * With `sharing.quorum`: whether the state is this breaker's own verdict, not the fleet's
         * (it opened alone and its fleet is closed). Absent without a quorum.
         */
        readonly local?: boolean | undefined
      }
    | undefined
}

/**
 * A breaker. `TimeoutE` is what its `timeout` adds to a call's error channel: `never` for a
 * breaker made without one, `BreakerTimeoutError` for one made from `TimeoutOptions`.
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
  /**
   * `isolate`, naming who asked: the transition carries `by`, here and on every member of the
   * fleet (through the shared store).
   */
  readonly isolateBy: (by: string) => Effect.Effect<void>
  /** `reset`, naming who asked (see `isolateBy`). */
  readonly resetBy: (by: string) => Effect.Effect<void>
  /** The state and the window's counts, for health routes and dashboards. Records nothing. */
  readonly snapshot: Effect.Effect<Snapshot>
  /**
   * Keeps an open circuit open at least until `untilMillis` (epoch milliseconds, Effect Clock),
   * e.g. for an upstream's `Retry-After`. Does nothing unless the circuit is Open. With a shared
   * store the whole fleet stays open as long (each member by its own clock); `by` names who asked,
   * and shows in the transition of a member the extension reopens (one already half-open). An
   * extension is not a transition: a member that is open stays open, and announces nothing.
   */
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
 * A call refused by the breaker. The refused effect was not run.
 *
 * `retryAfterMillis` is the time left in the open episode (0 when not known: HalfOpen, Isolated),
 * or, HalfOpen with a shared store, the time until a member the fleet refused the probe lease asks
 * for it again (at most 250 ms).
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
 * Whether a value is a `BreakerOpenError`, from this copy of the package or another (it is
 * recognised by `Rejection.TypeId` from `@circuitry/core`, not by its class); a look-alike with the
 * same `_tag` is not one.
 *
 * @since 0.2.0
 * @category guards
 * @example
 * ```ts
 * import { CircuitBreaker } from "@circuitry/breaker"
 * import { Effect } from "effect"
 *
 * const fallback = <A, E, R>(self: Effect.Effect<A, E, R>) =>
 *   Effect.catchIf(self, CircuitBreaker.isBreakerOpenError, () => Effect.succeed("cached"))
 * ```
 */
export const isBreakerOpenError: (u: unknown) => u is BreakerOpenError = errors.isBreakerOpenError

/**
 * A call that ran past the breaker's `timeout`: a typed failure, at the deadline, in the error
 * channel of every breaker made from `TimeoutOptions`; the call counts as a failure.
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
 * Makes a breaker. Options are validated here, once.
 *
 * Uses the `BreakerStore` in the context when there is one (so breakers of the same name share a
 * verdict), and keeps its state in memory otherwise.
 *
 * The scope holds the breaker's link to the store (the fibers that follow the fleet's verdicts and
 * send this breaker's). A breaker used after its scope closed still answers every call: it decides
 * locally, as a breaker without a store does (it counts, opens, probes and closes on its own, shares
 * nothing more, and its `snapshot.store.connected` is `false`). It never interrupts a caller.
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
 * `CircuitBreaker<BreakerTimeoutError>`. Once the layer's scope closes, a breaker still held
 * decides locally, as `make` says.
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
 * Runs an effect through a breaker (a value or a tag). Data-first and data-last. Its error channel
 * is the effect's, `BreakerOpenError`, and the breaker's `TimeoutE` (`BreakerTimeoutError` when it
 * was made with a `timeout`).
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
 * Marks an effect (its fiber, through the per-fiber mark `repairTraffic`) as repair traffic: while
 * a circuit is Open, repair traffic still runs, unrecorded, until one repair fails in that open episode.
 *
 * @since 0.1.0
 * @category combinators
 */
export const repairing: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> = repair.repairing

/**
 * The per-fiber mark behind `repairing`, true on repair traffic: a `FiberRef` on Effect 3, a
 * `Context.Reference` on Effect 4.
 *
 * @since 0.1.0
 * @category fiber refs
 */
export const repairTraffic = repair.repairTraffic

/**
 * Calls through a breaker by outcome, a counter tagged `breaker` and `outcome` (`success`,
 * `failure`, `rejected`, `repair`). Inspecting a breaker (state, isCallAllowed, snapshot) records
 * nothing.
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
 * The current state as a gauge tagged `breaker`: 0 closed, 1 open, 2 half-open, 3 isolated. It
 * moves on transitions (so an open circuit whose time is up reads 1 until its next call).
 *
 * @since 0.1.0
 * @category metrics
 */
export const stateGauge = metrics.stateGauge

/**
 * Whether a breaker's shared store is reachable, as a gauge tagged `breaker`: 1 when the store
 * answered the breaker's last request, 0 when that request failed or did not answer in time (the
 * breaker then decides locally, and logs that once). Only a breaker with a `BreakerStore` has it;
 * it is set when the breaker joins its store and on each change, and leaves Effect's registry with
 * the breaker's other series. A stall of the process's own event loop does not set it to 0 (see
 * `LoopStall`).
 *
 * @since 0.2.0
 * @category metrics
 */
export const storeReachable = metrics.storeReachable

/**
 * The duration of the calls a closed breaker ran (success or failure), a histogram in seconds
 * tagged `breaker`, with buckets from 1 ms to 30 s (1, 2.5, 5, 10, 25, 50, 100, 250, 500 ms, 1,
 * 2.5, 5, 10, 30 s). A breaker's series leave Effect's registry when it is released: its scope
 * closes, or its registry evicts it.
 *
 * @since 0.1.0
 * @category metrics
 */
export const callDuration = metrics.callDuration
