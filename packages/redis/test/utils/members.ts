/**
 * Breakers and breaker stores on a redis-server, as several test files make them (one source for
 * the tests that run on both Effect majors and those kept on Effect 3).
 */
import { BreakerStore, CircuitBreaker, Policy } from "@circuitry/breaker"
import type * as Edition from "@circuitry/core/Edition"
import { RedisBreakerStore } from "@circuitry/redis"
import { withClock } from "@circuitry/testkit"
import { type Clock, Context, Deferred, Effect, Layer, type Scope } from "effect"

/** The `BreakerStore` of a RedisBreakerStore built with `options`, in the test's scope. */
export const storeOn = (options: RedisBreakerStore.Options) =>
  Effect.map(Layer.build(RedisBreakerStore.layer(options)), Context.get(BreakerStore.BreakerStore))

/**
 * Short: the store refuses a probe lease while the stored verdict is open by the server's clock
 * (real time), so the open time must pass in real time too before the members probe.
 */
export const OPEN_FOR = 300

/** What a test may give a member: its half-open options, its store's liveness, and events to wait on. */
export interface Extras {
  readonly halfOpen?: NonNullable<CircuitBreaker.Options["halfOpen"]>
  readonly liveness?: Edition.DurationInput
  /** Done as the member's first lease request is handed to the store (in the fiber that sends it). */
  readonly asked?: Deferred.Deferred<void>
  /** Done as the member's first lease release is handed to the store. */
  readonly released?: Deferred.Deferred<void>
  /** Handed the member's store itself (its calls go on the member's connection, in order). */
  readonly store?: (store: BreakerStore.BreakerStoreService) => void
  /** Handed a way to make another breaker on the member's store. */
  readonly another?: (make: Effect.Effect<CircuitBreaker.CircuitBreaker, unknown, Scope.Scope>) => void
  /** The Clock the member's breaker (its background writer included) runs on; its store runs on the test's. */
  readonly breakerClock?: Clock.Clock
}

const done = (event: Deferred.Deferred<void> | undefined) =>
  event === undefined ? Effect.void : Deferred.succeed(event, undefined)

/** A member with a store of its own. */
export const member = (url: string, prefix: string, name: string, extras: Extras = {}) =>
  Effect.gen(function* () {
    const layer = RedisBreakerStore.layer({ url, prefix, ...(extras.liveness ? { liveness: extras.liveness } : {}) })
    const store = Context.get(yield* Layer.build(layer), BreakerStore.BreakerStore)
    extras.store?.(store)
    const watched = BreakerStore.BreakerStore.of({
      connect: (n) =>
        Effect.map(store.connect(n), (circuit) => ({
          ...circuit,
          probes: {
            acquire: (lease: Parameters<BreakerStore.ProbeLeases["acquire"]>[0]) =>
              Effect.andThen(done(extras.asked), circuit.probes!.acquire(lease)),
            release: (lease: string) => Effect.andThen(done(extras.released), circuit.probes!.release(lease))
          }
        }))
    })
    const make = (n: string) =>
      CircuitBreaker.make({
        name: n,
        policy: Policy.consecutiveFailures(1),
        openFor: OPEN_FOR,
        halfOpen: extras.halfOpen
      }).pipe(Effect.provideService(BreakerStore.BreakerStore, watched), (make) =>
        extras.breakerClock === undefined ? make : withClock(make, extras.breakerClock)
      )
    // another breaker on the same store (and so the same connection), for a test that needs one
    extras.another?.(make("another"))
    return yield* make(name)
  })

export const tagOf = (breaker: CircuitBreaker.CircuitBreaker) => Effect.map(breaker.state, (s) => s._tag)
export const failing = Effect.fail("boom" as const)
