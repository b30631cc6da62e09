/**
 * Follows the transitions of every breaker the route shows (its registries' and those handed to
 * it), for the health route's history and live streams. A registry announces no new breaker, so
 * `sync` (run on each tick) subscribes to the ones it has not seen and lets go of the ones dropped.
 */
import * as Edition from "@circuitry/core/Edition"
import type { CircuitBreaker } from "@circuitry/breaker"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type { List } from "./healthSources.js"

/** @internal */
export interface Follower {
  /** Follows the registry's breakers as they are now, and returns them. */
  readonly sync: Effect.Effect<ReadonlyArray<CircuitBreaker.CircuitBreaker<unknown>>>
}

/** @internal */
export const make = <R>(
  list: List<R>,
  onTransition: (
    breaker: CircuitBreaker.CircuitBreaker<unknown>,
    transition: CircuitBreaker.Transition
  ) => Effect.Effect<void>
): Effect.Effect<Follower, never, Scope.Scope | R> =>
  Effect.gen(function* () {
    const context = yield* Effect.context<R>()
    const current = Effect.provide(list, context)
    const parent = yield* Effect.scope
    const followed = new Map<CircuitBreaker.CircuitBreaker<unknown>, Edition.Closeable>()
    const lock = yield* Edition.makeSemaphore(1)
    const follow = (breaker: CircuitBreaker.CircuitBreaker<unknown>) =>
      Effect.gen(function* () {
        const scope = yield* Edition.forkScope(parent)
        // Subscribed before the fiber starts, so no transition after this point is missed.
        const queue = yield* Edition.inScope(breaker.subscribe, scope)
        yield* Effect.forkIn(
          Effect.forever(Effect.flatMap(Edition.take(queue), (t) => onTransition(breaker, t))),
          scope
        )
        followed.set(breaker, scope)
      })
    const sync = lock.withPermits(1)(
      Effect.gen(function* () {
        const breakers = yield* current
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
