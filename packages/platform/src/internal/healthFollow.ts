/**
 * Follows the transitions of every breaker a registry holds, for the health route's history and
 * live streams. A registry announces no new breaker, so `sync` (run on each tick) subscribes to the
 * ones it has not seen and lets go of the ones the registry dropped.
 */
import { BreakerRegistry } from "@circuitry/breaker"
import type { CircuitBreaker } from "@circuitry/breaker"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"

/** @internal */
export interface Follower {
  /** Follows the registry's breakers as they are now, and returns them. */
  readonly sync: Effect.Effect<ReadonlyArray<CircuitBreaker.CircuitBreaker>>
}

/** @internal */
export const make = (
  onTransition: (breaker: CircuitBreaker.CircuitBreaker, transition: CircuitBreaker.Transition) => Effect.Effect<void>
): Effect.Effect<Follower, never, Scope.Scope | BreakerRegistry.BreakerRegistry> =>
  Effect.gen(function* () {
    const registry = yield* BreakerRegistry.BreakerRegistry
    const parent = yield* Effect.scope
    const followed = new Map<CircuitBreaker.CircuitBreaker, Scope.CloseableScope>()
    const lock = yield* Effect.makeSemaphore(1)
    const follow = (breaker: CircuitBreaker.CircuitBreaker) =>
      Effect.gen(function* () {
        const scope = yield* Scope.fork(parent, ExecutionStrategy.sequential)
        // Subscribed before the fiber starts, so no transition after this point is missed.
        const queue = yield* Scope.extend(breaker.subscribe, scope)
        yield* Effect.forkIn(Effect.forever(Effect.flatMap(Queue.take(queue), (t) => onTransition(breaker, t))), scope)
        followed.set(breaker, scope)
      })
    const sync = lock.withPermits(1)(
      Effect.gen(function* () {
        const breakers = yield* registry.breakers
        const present = new Set(breakers)
        for (const [breaker, scope] of followed) {
          if (present.has(breaker)) continue
          followed.delete(breaker)
          yield* Scope.close(scope, Exit.void)
        }
        for (const breaker of breakers) if (!followed.has(breaker)) yield* follow(breaker)
        return breakers
      })
    )
    yield* sync
    return { sync }
  })
