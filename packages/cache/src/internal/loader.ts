import { CircuitBreaker } from "@circuitry/breaker"
import * as Edition from "@circuitry/core/Edition"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type { CacheStore, WriteOptions } from "../CacheStore.js"
import { type Bounds, Limiter, LoadRejected } from "./limiter.js"
import * as Metrics from "./metrics.js"

/** @internal */
export interface LoadCallOptions<E> extends WriteOptions {
  readonly onRejected?: ((rejection: LoadRejected) => E) | undefined
}

/**
 * What a key's load ended with, handed to every fiber that asked: `None` when the fiber that ran
 * the load was interrupted before it had a value (the others then try again).
 */
type Flight = Deferred.Deferred<Option.Option<Exit.Exit<string, unknown>>>

interface Loader {
  readonly flights: Map<string, Flight>
  /** Caps how many different keys load at once; unbounded when absent. */
  readonly permits: Limiter | undefined
}

/**
 * The `getOrLoad` of one cache: its single flight and its load cap live here, in the cache value
 * itself, shared by every caller of that value however it is provided.
 *
 * @internal
 */
export const makeGetOrLoad = (
  cache: CacheStore<never>,
  maxConcurrentLoads: number | undefined,
  bounds?: Bounds
): (<E, R, Rejected = never>(
  key: string,
  load: Effect.Effect<string, E, R>,
  options?: LoadCallOptions<Rejected>
) => Effect.Effect<string, E | Rejected, R>) => {
  const loader: Loader = {
    flights: new Map(),
    permits: maxConcurrentLoads === undefined ? undefined : new Limiter(maxConcurrentLoads, bounds)
  }
  return <E, R, Rejected>(key: string, load: Effect.Effect<string, E, R>, options?: LoadCallOptions<Rejected>) =>
    lookup<E | Rejected, R>(cache, loader, key, load, options)
}

const lookup = <E, R>(
  cache: CacheStore<never>,
  loader: Loader,
  key: string,
  load: Effect.Effect<string, E, R>,
  options: LoadCallOptions<E> | undefined
): Effect.Effect<string, E, R> =>
  Effect.flatMap(cache.get(key), (hit) => {
    if (Option.isNone(hit)) return joinOrLead(cache, loader, key, load, options)
    Metrics.lookups.hit(1)
    return Effect.succeed(hit.value)
  })

/**
 * Joins the key's load in flight, or runs it on behalf of every fiber that asks meanwhile. The
 * check and the registration happen in one uninterruptible step, so there is one load per key.
 * The value goes to every fiber at once; the write-back follows, and only then is the flight
 * removed, so a fiber that misses the cache while the write is on its way joins this load
 * instead of starting another.
 */
const joinOrLead = <E, R>(
  cache: CacheStore<never>,
  loader: Loader,
  key: string,
  load: Effect.Effect<string, E, R>,
  options: LoadCallOptions<E> | undefined
): Effect.Effect<string, E, R> =>
  Effect.uninterruptibleMask((restore) =>
    // The flight is made first; the check and the registration below then happen in one
    // synchronous step (the callback yields nowhere), so there is one load per key.
    Effect.flatMap(Deferred.make<Option.Option<Exit.Exit<string, unknown>>>(), (flight: Flight) => {
      const current = loader.flights.get(key)
      if (current !== undefined) {
        Metrics.lookups.coalesced(1)
        return restore(
          Effect.flatMap(Deferred.await(current), (result) =>
            Option.isSome(result)
              ? (result.value as Exit.Exit<string, E>)
              : // The fiber that was loading was interrupted: start over (one of us will load).
                lookup(cache, loader, key, load, options)
          )
        )
      }
      loader.flights.set(key, flight)
      Metrics.lookups.load(1)
      /** Whether the load cap turned this load away (then it is counted as rejected, not as failed). */
      let rejected = false
      const land = Effect.sync(() => {
        if (loader.flights.get(key) === flight) loader.flights.delete(key)
      })
      // A load the cap turns away fails like the load itself: every fiber joined on the key gets it.
      const limited =
        loader.permits === undefined
          ? load
          : Effect.catchIf(
              loader.permits.withPermit(load, key),
              (e): e is LoadRejected => e instanceof LoadRejected,
              (rejection) => {
                rejected = true
                Metrics.loads.rejected[rejection.reason](1)
                return options?.onRejected === undefined
                  ? Effect.die(rejection)
                  : Effect.fail(options.onRejected(rejection))
              }
            )
      return Effect.flatMap(Effect.exit(restore(limited)), (exit) => {
        if (Exit.isFailure(exit) && Edition.hasInterruptsOnly(exit.cause)) {
          Metrics.loads.interrupted(1)
          return land.pipe(Effect.andThen(Deferred.succeed(flight, Option.none())), Effect.andThen(exit))
        }
        const told = Deferred.succeed(flight, Option.some(exit))
        if (Exit.isFailure(exit)) {
          if (!rejected) Metrics.loads.failure(1)
          return land.pipe(Effect.andThen(told), Effect.andThen(exit))
        }
        Metrics.loads.success(1)
        const writeBack = CircuitBreaker.repairing(cache.set(key, exit.value, options))
        return told.pipe(Effect.andThen(Effect.exit(restore(writeBack))), Effect.andThen(land), Effect.as(exit.value))
      })
    })
  )
