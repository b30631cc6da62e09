/**
 * Faults injected into any effect or any service: added latency, failures at a rate, stalls, each
 * for a window of scenario time. Draws come from a seeded generator, so a run is reproducible.
 *
 * @since 0.1.0
 */
import type * as Edition from "@circuitry/core/Edition"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import type * as Layer from "effect/Layer"
import * as errors from "./internal/errors.js"
import * as internal from "./internal/fault.js"
import * as layers from "./internal/layer.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: typeof internal.TypeId = internal.TypeId

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * A fault: what happens to a call it applies to. `E` is the error it can inject (`never` for
 * latency and stalls). Opaque; made with `latency`, `fail`, `stall`, `stallThenFail`, `during`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Fault<out E = never> extends internal.Fault<E> {}

/**
 * The error a fault (or a union of faults) can inject.
 *
 * @since 0.1.0
 * @category models
 */
export type ErrorOf<F> = F extends Fault<infer E> ? E : never

/**
 * The faults `layer` accepts for one member of a service: for a method returning an
 * `Effect<A, E, R>` (or an `Effect<A, E, R>` member), faults whose errors are `E`s. Members that are
 * neither take no faults.
 *
 * @since 0.1.0
 * @category models
 */
export type FaultsFor<M> = M extends (...args: ReadonlyArray<any>) => Effect.Effect<infer _A, infer E, infer _R>
  ? Fault<E> | ReadonlyArray<Fault<E>>
  : M extends Effect.Effect<infer _A, infer E, infer _R>
    ? Fault<E> | ReadonlyArray<Fault<E>>
    : never

/**
 * Options that break a rule (a rate outside 0..1, a window that ends before it starts, a bad
 * seed, a member that is not a method); `message` names the option, the rule and the value.
 * `Chaos.layer`, `Chaos.inject`, `Scenario.run` and `Scenario.expect` fail with it (never a defect).
 *
 * @since 0.1.0
 * @category errors
 */
export const InvalidChaosOptions: typeof errors.InvalidChaosOptions = errors.InvalidChaosOptions

/**
 * @since 0.1.0
 * @category errors
 */
export type InvalidChaosOptions = errors.InvalidChaosOptions

/**
 * Is this a `Fault`?
 *
 * @since 0.1.0
 * @category guards
 */
export const isFault: (u: unknown) => u is Fault<unknown> = internal.isFault

/**
 * Added latency: a fixed duration, or a log-normal draw with the given median and 99th
 * percentile (a long tail, as real latencies have). It is waited before the call runs.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Chaos } from "@circuitry/chaos"
 *
 * const slow = Chaos.latency("20 millis")
 * const tail = Chaos.latency({ p50: "5 millis", p99: "250 millis" })
 * ```
 */
export const latency: (
  latency: Edition.DurationInput | { readonly p50: Edition.DurationInput; readonly p99: Edition.DurationInput }
) => Fault = internal.latency

/**
 * Fails a share `rate` (0 to 1) of the calls with `error()`, instead of running them: a failed call
 * never reaches the dependency.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Chaos } from "@circuitry/chaos"
 * import { Data } from "effect"
 *
 * class Unavailable extends Data.TaggedError("Unavailable")<{}> {}
 *
 * const flaky = Chaos.fail({ rate: 0.2, error: () => new Unavailable() }) // Fault<Unavailable>
 * ```
 */
export const fail: <E>(options: { readonly rate: number; readonly error: () => E }) => Fault<E> = internal.fail

/**
 * Never answers: the call waits until it is interrupted (by its caller's timeout, say). A stall is
 * a dependency that accepted the connection and went silent, the fault that timeouts and breakers
 * exist for.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Chaos } from "@circuitry/chaos"
 *
 * const silent = Chaos.during({ from: "60 seconds", to: "66 seconds" }, Chaos.stall)
 * ```
 */
export const stall: Fault = internal.stall

/**
 * A stall that ends the way a dropped connection does: every call stuck in it fails with
 * `error()` when its window ends (without a window it never ends). Calls made after the window are
 * healthy.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Chaos } from "@circuitry/chaos"
 *
 * const reset = Chaos.during(
 *   { from: "60 seconds", to: "66 seconds" },
 *   Chaos.stallThenFail({ error: () => new Error("connection reset") })
 * )
 * ```
 */
export const stallThenFail: <E>(options: { readonly error: () => E }) => Fault<E> = internal.stallThenFail

/**
 * The fault, only for calls that start in `[from, to)` of scenario time (from the start of
 * `Scenario.run`; outside a scenario, from Clock time 0, the start of a `TestClock`). Windows nest:
 * the fault applies where both do.
 *
 * @since 0.1.0
 * @category combinators
 * @example
 * ```ts
 * import { Chaos } from "@circuitry/chaos"
 *
 * const lateSpike = Chaos.during({ from: "2 minutes", to: "3 minutes" }, Chaos.latency("400 millis"))
 * ```
 */
export const during: <E>(
  window: { readonly from: Edition.DurationInput; readonly to: Edition.DurationInput },
  fault: Fault<E>
) => Fault<E> = internal.during

/**
 * Runs `self` under `faults`, in order: latencies add up and are waited first; then the first
 * failure drawn (or stall) replaces the call. Each run of the returned effect decides anew. Draws
 * come from the generator of the `Scenario` request it runs in (outside one, a generator of the
 * process seeded 0). Fails with `InvalidChaosOptions` when a fault's options are invalid (checked
 * once, when `inject` is applied; the effect is then never run).
 *
 * @since 0.1.0
 * @category combinators
 * @example
 * ```ts
 * import { Chaos } from "@circuitry/chaos"
 * import { Effect } from "effect"
 *
 * const query = Effect.succeed({ rows: 3 })
 * // Effect<{ rows: number }, string | Chaos.InvalidChaosOptions>
 * const flaky = query.pipe(
 *   Chaos.inject(Chaos.latency("30 millis"), Chaos.fail({ rate: 0.1, error: () => "timeout" }))
 * )
 * ```
 */
export const inject: {
  <const F extends ReadonlyArray<Fault<any>>>(
    ...faults: F
  ): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | ErrorOf<F[number]> | InvalidChaosOptions, R>
  <A, E, R, const F extends ReadonlyArray<Fault<any>>>(
    self: Effect.Effect<A, E, R>,
    ...faults: F
  ): Effect.Effect<A, E | ErrorOf<F[number]> | InvalidChaosOptions, R>
} = dual(
  (args) => Effect.isEffect(args[0]),
  <A, E, R>(self: Effect.Effect<A, E, R>, ...faults: ReadonlyArray<Fault<any>>) =>
    internal.inject(self, faults, undefined)
)

/**
 * Wraps the service already in the context for `tag`: every member named in `faults` (a method
 * returning an effect, or an effect) runs under its faults; every other member is left as it is.
 * A fault's error must be one the member can fail with, so the service's type does not change.
 * With `seed`, the layer draws from a generator of its own; without, from the scenario request's.
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { Chaos } from "@circuitry/chaos"
 * import { Context, Data, Effect, Layer } from "effect"
 *
 * class DbError extends Data.TaggedError("DbError")<{}> {}
 * class Db extends Context.Tag("Db")<Db, {
 *   readonly query: (sql: string) => Effect.Effect<ReadonlyArray<unknown>, DbError>
 *   readonly ping: Effect.Effect<boolean>
 * }>() {}
 *
 * const DbLive = Layer.succeed(Db, { query: () => Effect.succeed([]), ping: Effect.succeed(true) })
 *
 * // query is slow and sometimes fails; ping is left alone.
 * const DbUnderChaos = Chaos.layer(Db, {
 *   query: [Chaos.latency({ p50: "5 millis", p99: "80 millis" }), Chaos.fail({ rate: 0.05, error: () => new DbError() })]
 * }).pipe(Layer.provide(DbLive))
 * ```
 */
export const layer: <I, S>(
  tag: Edition.Key<I, S>,
  faults: { readonly [K in keyof S]?: FaultsFor<S[K]> },
  options?: { readonly seed?: number | undefined }
) => Layer.Layer<I, InvalidChaosOptions, I> = layers.layer

/**
 * Faults that applied to a call, a counter tagged `fault` (`latency`, `fail`, `stall`): a test can
 * check that its faults fired, and a dashboard that a chaos run is on.
 *
 * @since 0.1.0
 * @category metrics
 */
export const faultsTotal: Edition.Counter = internal.faultsTotal
