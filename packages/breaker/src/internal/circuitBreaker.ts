/**
 * What CircuitBreaker.ts exports: making a breaker (with its store link in place), its layer, and
 * `withBreaker`. The breaker itself is in breaker.ts.
 */
import * as Edition from "@circuitry/core/Edition"
import * as Runtime from "#runtime"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as BreakerStore from "../BreakerStore.js"
import type * as CB from "../CircuitBreaker.js"
import { Breaker, isCircuitBreaker } from "./breaker.js"
import type { BreakerOpenError, BreakerTimeoutError, InvalidBreakerOptions } from "./errors.js"
import * as LastOptions from "./lastOptions.js"
import * as Options from "./options.js"
import * as Sharing from "./sharing.js"

export { Breaker, isCircuitBreaker, State, TypeId } from "./breaker.js"

type CircuitBreaker<TimeoutE = never> = CB.CircuitBreaker<TimeoutE>

/**
 * Makes a breaker with its store link (if a `BreakerStore` is in the context) in place.
 *
 * @internal
 */
export const makeBreaker = (options?: CB.TimeoutOptions): Effect.Effect<Breaker, InvalidBreakerOptions, Scope.Scope> =>
  // One step, read from the fiber, rather than a chain of effects: `make` is on the request path
  // when an application makes a breaker per tenant or host.
  Runtime.withFiber((fiber) => {
    const resolved = LastOptions.resolve(options)
    if (Edition.Result.isFailure(resolved)) return Effect.fail(Edition.Result.failureOf(resolved))
    const context = Runtime.contextOf(fiber) as Context.Context<Scope.Scope>
    const scope = Context.get(context, Scope.Scope)
    // `Scope.addFinalizer`, not `Effect.addFinalizer`: a release needs none of the fiber's refs (~10 µs less).
    const released = (breaker: Breaker) =>
      Scope.addFinalizer(
        scope,
        Effect.sync(() => breaker.release())
      )
    if (Option.isSome(Context.getOption(context, BreakerStore.BreakerStore))) {
      return Effect.tap(makeResolved(Edition.Result.successOf(resolved)), released)
    }
    const delays = Options.openDelays(Edition.Result.successOf(resolved), Runtime.runnerOf(fiber))
    if (Edition.Result.isFailure(delays)) return Effect.fail(Edition.Result.failureOf(delays))
    const breaker = new Breaker(Edition.Result.successOf(resolved), Edition.Result.successOf(delays), undefined)
    return Effect.as(released(breaker), breaker)
  })

/**
 * Makes a breaker from options already resolved (a registry resolves them once). Its metric series
 * are the caller's to release (`breaker.release()`): a registry does it on eviction.
 *
 * @internal
 */
export const makeResolved = (resolved: Options.Resolved): Effect.Effect<Breaker, InvalidBreakerOptions, Scope.Scope> =>
  Effect.gen(function* () {
    const delays = yield* Edition.fromResult(Options.openDelays(resolved, yield* Runtime.runner))
    const store = yield* Effect.serviceOption(BreakerStore.BreakerStore)
    const link = Option.isSome(store) ? yield* Sharing.connect(store.value, resolved.name, resolved.quorum) : undefined
    const breaker = new Breaker(resolved, delays, link)
    if (link === undefined) return breaker
    // The reachability gauge: set now (the first load may have failed already), then on each change.
    const metrics = breaker.metrics
    metrics.reachable(link.health.connected)
    link.health.onChange = (connected) => metrics.reachable(connected)
    yield* Sharing.follow(link, (verdict, now) => breaker.adopt(verdict, now))
    return breaker
  })

/**
 * Makes a breaker that shares nothing (no `BreakerStore`), synchronously: what `makeResolved`
 * does without a store, for a registry making breakers on the request path. `runner` runs the
 * `openFor` schedule's steps. Its metric series are the caller's to release.
 *
 * @internal
 */
export const makeLocal = (resolved: Options.Resolved, runner: Runtime.Runner): Breaker =>
  new Breaker(resolved, Edition.Result.getOrThrow(Options.openDelays(resolved, runner)), undefined)

/**
 * The breaker's own type says no timeout; `make` says `BreakerTimeoutError` whenever its options
 * may give a timeout (a registry's types do the same for its breakers, in BreakerRegistry.ts).
 *
 * @internal
 */
export const make = makeBreaker as {
  (options?: CB.Options): Effect.Effect<CircuitBreaker, InvalidBreakerOptions, Scope.Scope>
  (options?: CB.TimeoutOptions): Effect.Effect<CircuitBreaker<BreakerTimeoutError>, InvalidBreakerOptions, Scope.Scope>
}

/** @internal */
export const layer = (<I>(
  tag: Edition.Key<I, CircuitBreaker<BreakerTimeoutError>>,
  options?: CB.TimeoutOptions
): Layer.Layer<I, InvalidBreakerOptions> => Edition.layerScoped(tag, make(options))) as {
  <I>(tag: Edition.Key<I, CircuitBreaker>, options?: CB.Options): Layer.Layer<I, InvalidBreakerOptions>
  <I>(
    tag: Edition.Key<I, CircuitBreaker<BreakerTimeoutError>>,
    options?: CB.TimeoutOptions
  ): Layer.Layer<I, InvalidBreakerOptions>
}

/** @internal */
export const withBreaker: {
  <I = never, TimeoutE = never>(
    breaker: CircuitBreaker<TimeoutE> | Edition.Key<I, CircuitBreaker<TimeoutE>>
  ): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | BreakerOpenError | TimeoutE, R | I>
  <A, E, R, I = never, TimeoutE = never>(
    self: Effect.Effect<A, E, R>,
    breaker: CircuitBreaker<TimeoutE> | Edition.Key<I, CircuitBreaker<TimeoutE>>
  ): Effect.Effect<A, E | BreakerOpenError | TimeoutE, R | I>
} = dual(
  2,
  <A, E, R, I, TimeoutE>(
    self: Effect.Effect<A, E, R>,
    breaker: CircuitBreaker<TimeoutE> | Edition.Key<I, CircuitBreaker<TimeoutE>>
  ): Effect.Effect<A, E | BreakerOpenError | TimeoutE, R | I> =>
    isCircuitBreaker(breaker)
      ? (breaker as CircuitBreaker<TimeoutE>).execute(self)
      : Effect.flatMap(Edition.service(breaker as Edition.Key<I, CircuitBreaker<TimeoutE>>), (b) => b.execute(self))
)
