/**
 * The things measured: the floor guard, a naive Ref + Semaphore breaker, circuitry's breaker and
 * the peers (cockatiel, opossum), raw and bridged into Effect the way an Effect user must.
 */
import { CircuitBreaker as Circuitry, Policy } from "@circuitry/breaker"
import * as Edition from "@circuitry/core/Edition"
import {
  circuitBreaker,
  CircuitBreakerPolicy,
  CircuitState,
  ConsecutiveBreaker,
  handleAll,
  SamplingBreaker
} from "cockatiel"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import Opossum from "opossum"

/** The effect every row runs: it succeeds with a number or fails with a string. */
export type Work = Effect.Effect<number, string>

/** Runs an effect through some guard. */
export type Guard = (self: Work) => Effect.Effect<unknown, unknown>

/** Long enough that no open episode ends during a run. */
export const OPEN_MILLIS = 3_600_000

/** How many failures in a row open the consecutive-failure breakers. */
export const THRESHOLD = 5

// -- the floor ----------------------------------------------------------------------------------

class FloorOpen extends Data.TaggedError("FloorOpen") {}

/**
 * The cheapest guard one can write with Effect combinators: `Effect.suspend` that checks a
 * variable, then `Effect.catchAllCause(Effect.map(self, ...), ...)` that counts. It has no clock,
 * no half-open state and no metrics: it is the floor that nothing doing the same job can go under.
 */
export const makeFloor = () => {
  let open = false
  let failures = 0
  const rejected = new FloorOpen()
  const guard: Guard = (self) =>
    Effect.suspend((): Effect.Effect<number, string | FloorOpen> =>
      open
        ? Effect.fail(rejected)
        : Edition.catchCause(
            Effect.map(self, (a) => {
              failures = 0
              return a
            }),
            (cause) => {
              if (++failures >= THRESHOLD) open = true
              return Effect.failCause(cause)
            }
          )
    )
  return { guard, isOpen: () => open }
}

// -- a naive breaker ----------------------------------------------------------------------------

class NaiveOpen extends Data.TaggedError("NaiveOpen") {}

/**
 * What one writes first with Effect's primitives: state in a `Ref`, a `Semaphore` around every
 * read and update, and an `Effect.gen` per call. A reference row, not a recommendation.
 */
export const makeNaive = Effect.gen(function* () {
  const state = yield* Ref.make({ open: false, failures: 0 })
  const lock = yield* Edition.makeSemaphore(1)
  const guard: Guard = (self) =>
    Effect.gen(function* () {
      const s = yield* lock.withPermits(1)(Ref.get(state))
      if (s.open) return yield* new NaiveOpen()
      const exit = yield* Effect.exit(self)
      yield* lock.withPermits(1)(
        Ref.update(state, (s) => {
          if (Exit.isSuccess(exit)) return { open: false, failures: 0 }
          const failures = s.failures + 1
          return { open: failures >= THRESHOLD, failures }
        })
      )
      return yield* exit
    })
  return { guard, isOpen: () => Effect.runSync(Ref.get(state)).open }
})

// -- circuitry ----------------------------------------------------------------------------------

export type CircuitryPolicy = "consecutive" | "rate" | "time"

export const policyOf = (kind: CircuitryPolicy): Policy.Policy =>
  kind === "consecutive"
    ? Policy.consecutiveFailures(THRESHOLD)
    : kind === "rate"
      ? Policy.failureRate({ threshold: 0.5, window: Policy.countWindow(100) })
      : Policy.failureRate({ threshold: 0.5, window: Policy.timeWindow("10 seconds") })

/** A breaker that holds no resources (no shared store), so a scope that is never closed is fine. */
export const makeCircuitry = (kind: CircuitryPolicy, name = "bench") => {
  const breaker = Effect.runSync(
    Circuitry.make({ name, policy: policyOf(kind), openFor: OPEN_MILLIS }).pipe(
      Effect.provideServiceEffect(Scope.Scope, Scope.make())
    )
  )
  const guard: Guard = (self) => Circuitry.withBreaker(self, breaker)
  return { breaker, guard, isOpen: () => Effect.runSync(breaker.state)._tag === "Open" }
}

// -- cockatiel ----------------------------------------------------------------------------------

export type CockatielKind = "consecutive" | "sampling"

export const makeCockatiel = (kind: CockatielKind): CircuitBreakerPolicy =>
  circuitBreaker(handleAll, {
    halfOpenAfter: OPEN_MILLIS,
    breaker:
      kind === "consecutive"
        ? new ConsecutiveBreaker(THRESHOLD)
        : new SamplingBreaker({ threshold: 0.5, duration: 10_000 })
  })

/** What an Effect user writes to put a cockatiel policy around an effect. */
export const bridgeCockatiel =
  (policy: CircuitBreakerPolicy): Guard =>
  (self) =>
    Effect.tryPromise(() => policy.execute(() => Effect.runPromise(self)))

export const cockatielOpen = (policy: CircuitBreakerPolicy): boolean => policy.state === CircuitState.Open

// -- opossum ------------------------------------------------------------------------------------

/**
 * opossum's defaults (rolling stats in 10 buckets over 10 s, latency percentiles) except the
 * per-call timeout, which is off so that every row measures a breaker and not a timer.
 */
export const opossumOptions = (): Opossum.Options => ({
  timeout: false,
  resetTimeout: OPEN_MILLIS,
  errorThresholdPercentage: 50
})

/** An opossum breaker around a Promise-returning function, as opossum is used natively. */
export const makeOpossum = <A>(action: () => Promise<A>): Opossum<[], A> => new Opossum(action, opossumOptions())

/** An opossum breaker whose action runs an effect: the bridge an Effect user writes. */
export const makeOpossumBridge = (): { readonly breaker: Opossum<[Work], number>; readonly guard: Guard } => {
  const breaker = new Opossum((self: Work) => Effect.runPromise(self), opossumOptions())
  const guard: Guard = (self) => Effect.tryPromise(() => breaker.fire(self))
  return { breaker, guard }
}
