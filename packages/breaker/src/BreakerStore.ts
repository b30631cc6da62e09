/**
 * Where a breaker's verdict lives when it is shared: by every breaker of the same name on the
 * same store, in this process or another. The in-memory state of each breaker is the default;
 * Redis (`@circuitry/redis`) and SQL (`@circuitry/sql`) provide this service for a fleet.
 *
 * The breaker never waits on the store on its closed success path: it reports in the background
 * and learns remote verdicts through `verdicts`. A store that is down or slow never blocks or
 * fails a call: the breaker carries on with its local state and catches the store up later.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/**
 * A verdict as stored: `HalfOpen` is never stored, since it is derived (lazily) from `Open` and
 * the clock.
 *
 * @since 0.1.0
 * @category models
 */
export interface Verdict {
  readonly state: "Closed" | "Open" | "Isolated"
  /** Open: epoch milliseconds (Effect Clock) at which the circuit turns half-open; otherwise 0. */
  readonly until: number
  /** When the verdict was made (epoch milliseconds, Effect Clock). */
  readonly at: number
  /** Which breaker instance made it, so that an instance can ignore the echo of its own. */
  readonly origin: string
}

/**
 * Fleet-wide counts kept beside a verdict, for dashboards and health routes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Counts {
  /** Failures reported since the last success or transition, summed over every member. */
  readonly consecutiveFailures: number
  /** The last reported failure (epoch milliseconds), if any. */
  readonly lastFailureAt: number | undefined
}

/**
 * A store that cannot be reached, or answered something it should not have.
 *
 * @since 0.1.0
 * @category errors
 */
export class BreakerStoreError extends Schema.TaggedError<BreakerStoreError>()("BreakerStoreError", {
  store: Schema.String,
  operation: Schema.String,
  message: Schema.String,
  cause: Schema.optional(Schema.Unknown)
}) {}

/**
 * One breaker's view of its shared circuit.
 *
 * @since 0.1.0
 * @category models
 */
export interface SharedCircuit {
  /** The verdict stored now, if there is one. Reading creates nothing. */
  readonly load: Effect.Effect<Option.Option<Verdict>, BreakerStoreError>
  /**
   * Verdicts saved by any member, as they are saved. After a loss of connection the store
   * emits the stored verdict again, so members resynchronise.
   */
  readonly verdicts: Stream.Stream<Verdict>
  /** Stores a verdict and tells every member. */
  readonly save: (verdict: Verdict) => Effect.Effect<void, BreakerStoreError>
  /**
   * Adds failures (atomically, never losing one) and records the time of the last. `count` may be
   * 0: then only the time is recorded (for the failure that opened the circuit, whose verdict
   * started the count again).
   */
  readonly recordFailures: (count: number, at: number) => Effect.Effect<void, BreakerStoreError>
  /** A success: the fleet's consecutive failure count starts again. */
  readonly recordSuccess: (at: number) => Effect.Effect<void, BreakerStoreError>
  readonly counts: Effect.Effect<Counts, BreakerStoreError>
  /**
   * Takes one of `permits` fleet-wide half-open probe leases, for at most `leaseMillis`.
   * Returns the lease's token, or `None` when every lease is held.
   */
  readonly acquireProbe: (options: {
    readonly permits: number
    readonly leaseMillis: number
    readonly now: number
  }) => Effect.Effect<Option.Option<string>, BreakerStoreError>
  readonly releaseProbe: (lease: string) => Effect.Effect<void, BreakerStoreError>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class BreakerStore extends Context.Tag("@circuitry/breaker/BreakerStore")<
  BreakerStore,
  {
    /** Joins the shared circuit `name` for as long as the scope lasts. */
    readonly connect: (name: string) => Effect.Effect<SharedCircuit, BreakerStoreError, Scope.Scope>
  }
>() {}

interface MemoryEntry {
  verdict: Verdict | undefined
  consecutiveFailures: number
  lastFailureAt: number | undefined
  readonly leases: Map<string, number>
  readonly pubsub: PubSub.PubSub<Verdict>
}

/**
 * A store in this process's memory: breakers of the same name in one process share one verdict.
 * Mostly for tests, and as the reference behaviour for other stores.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory: Effect.Effect<BreakerStore["Type"]> = Effect.sync(() => {
  const entries = new Map<string, MemoryEntry>()
  let nextLease = 0
  const entry = (name: string): MemoryEntry => {
    let found = entries.get(name)
    if (found === undefined) {
      found = {
        verdict: undefined,
        consecutiveFailures: 0,
        lastFailureAt: undefined,
        leases: new Map(),
        pubsub: Effect.runSync(PubSub.unbounded<Verdict>())
      }
      entries.set(name, found)
    }
    return found
  }
  return BreakerStore.of({
    connect: (name) =>
      Effect.sync(() => {
        const e = entry(name)
        return {
          load: Effect.sync(() => Option.fromNullable(e.verdict)),
          verdicts: Stream.fromPubSub(e.pubsub),
          save: (verdict) =>
            Effect.suspend(() => {
              e.verdict = verdict
              e.consecutiveFailures = 0 // every transition starts the count again
              return PubSub.publish(e.pubsub, verdict)
            }),
          recordFailures: (count, at) =>
            Effect.sync(() => {
              e.consecutiveFailures += count
              e.lastFailureAt = Math.max(e.lastFailureAt ?? at, at)
            }),
          recordSuccess: () =>
            Effect.sync(() => {
              e.consecutiveFailures = 0
            }),
          counts: Effect.sync(() => ({ consecutiveFailures: e.consecutiveFailures, lastFailureAt: e.lastFailureAt })),
          acquireProbe: ({ leaseMillis, now, permits }) =>
            Effect.sync(() => {
              for (const [lease, expires] of e.leases) if (expires <= now) e.leases.delete(lease)
              if (e.leases.size >= permits) return Option.none()
              const lease = String(nextLease++)
              e.leases.set(lease, now + leaseMillis)
              return Option.some(lease)
            }),
          releaseProbe: (lease) =>
            Effect.sync(() => {
              e.leases.delete(lease)
            })
        } satisfies SharedCircuit
      })
  })
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<BreakerStore> = Layer.effect(BreakerStore, makeMemory)
