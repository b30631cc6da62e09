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
import * as Kit from "./BreakerStoreKit.js"

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
 * One breaker's view of its shared circuit. Every backend passes one conformance suite
 * (`packages/breaker/test/storeSuite.ts`), which pins the fine print below.
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
  /**
   * Stores a verdict and tells every member (the saver included). A verdict older than the stored
   * one (a smaller `at`: a late retry) is not stored and does not start the count again; the store
   * tells its members the stored verdict again instead (at once, or at its next poll), so the
   * member that sent the stale one catches up. A verdict of the same `at` is stored.
   */
  readonly save: (verdict: Verdict) => Effect.Effect<void, BreakerStoreError>
  /**
   * Adds failures (atomically, never losing one) and records the time of the last. `count` is a
   * whole number >= 0; it may be 0: then only the time is recorded (for the failure that opened the
   * circuit, whose verdict started the count again). The last failure time never moves back.
   */
  readonly recordFailures: (count: number, at: number) => Effect.Effect<void, BreakerStoreError>
  /** A success: the fleet's consecutive failure count starts again (the last failure time stays). */
  readonly recordSuccess: (at: number) => Effect.Effect<void, BreakerStoreError>
  readonly counts: Effect.Effect<Counts, BreakerStoreError>
  /**
   * Takes one of `permits` fleet-wide half-open probe leases, for at most `leaseMillis`: exactly
   * one holder per permit slot. A lease taken at `now` is over from `now + leaseMillis` on, by the
   * times the callers pass in (their Effect Clock), whatever a server's clock says. Returns the
   * lease (`BreakerStoreKit.encodeLease`), or `None` when every lease is held.
   */
  readonly acquireProbe: (options: {
    readonly permits: number
    readonly leaseMillis: number
    readonly now: number
  }) => Effect.Effect<Option.Option<string>, BreakerStoreError>
  /**
   * Gives a lease back. Only the holder's lease string releases it: a lease that was taken over
   * after it was over, released twice, or is not a lease at all releases nothing.
   */
  readonly releaseProbe: (lease: string) => Effect.Effect<void, BreakerStoreError>
  /**
   * Keeps `member` (a breaker instance: its `origin`) in the fleet, in one atomic step: its last
   * heartbeat becomes `now` (the caller's Effect Clock; an earlier one never moves it back),
   * heartbeats before `since` are forgotten, and the answer is the number of live members (last
   * heartbeat at or after `since`), this one included.
   */
  readonly heartbeat: (beat: {
    readonly member: string
    readonly now: number
    readonly since: number
  }) => Effect.Effect<number, BreakerStoreError>
  /** How many members' last heartbeat is at or after `since` (reading forgets nothing). */
  readonly members: (since: number) => Effect.Effect<number, BreakerStoreError>
  /**
   * Reports that `member`'s own policy tripped at `at`, and returns, in the same atomic step, how
   * many distinct members tripped at or after `since` and not before the stored verdict's `at` (a
   * trip older than the last verdict belongs to an episode that is over). Each member counts once,
   * with its latest trip: an earlier `at` never replaces a later one, so a report sent twice (a
   * retry) counts once. Trips before `since` may be forgotten by it (not by `trips`).
   */
  readonly recordTrip: (trip: {
    readonly member: string
    readonly at: number
    readonly since: number
  }) => Effect.Effect<number, BreakerStoreError>
  /** The count `recordTrip` returns, without reporting a trip. */
  readonly trips: (since: number) => Effect.Effect<number, BreakerStoreError>
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
  /** The lease held in each permit slot: its token and when it is over. */
  readonly leases: Map<number, { readonly token: string; readonly expires: number }>
  /** Each member's last heartbeat, and its latest trip. */
  readonly beats: Map<string, number>
  readonly trips: Map<string, number>
  readonly pubsub: PubSub.PubSub<Verdict>
}

/** How many members' times are at or after `since`; with `forget`, times before `horizon` are dropped. */
const countSince = (times: Map<string, number>, since: number, forget?: number): number => {
  let n = 0
  for (const [member, at] of times) {
    if (at >= since) n++
    else if (forget !== undefined && at < forget) times.delete(member)
  }
  return n
}

/**
 * A store in this process's memory: breakers of the same name in one process share one verdict.
 * Mostly for tests, and as the reference behaviour for other stores (every backend passes the
 * same conformance suite, `packages/breaker/test/storeSuite.ts`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory: Effect.Effect<BreakerStore["Type"]> = Effect.sync(() => {
  const entries = new Map<string, MemoryEntry>()
  const entry = (name: string): MemoryEntry => {
    let found = entries.get(name)
    if (found === undefined) {
      found = {
        verdict: undefined,
        consecutiveFailures: 0,
        lastFailureAt: undefined,
        leases: new Map(),
        beats: new Map(),
        trips: new Map(),
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
              // A verdict older than the stored one is stale: the stored one is told again instead,
              // so that the member that sent the stale one catches up.
              if (e.verdict !== undefined && e.verdict.at > verdict.at) return PubSub.publish(e.pubsub, e.verdict)
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
              for (let slot = 0; slot < permits; slot++) {
                const held = e.leases.get(slot)
                if (held !== undefined && held.expires > now) continue
                const token = Kit.makeToken()
                e.leases.set(slot, { token, expires: now + leaseMillis })
                return Option.some(Kit.encodeLease({ slot, token }))
              }
              return Option.none()
            }),
          releaseProbe: (lease) =>
            Effect.sync(() => {
              const decoded = Kit.decodeLease(lease)
              if (Option.isNone(decoded)) return
              const { slot, token } = decoded.value
              if (e.leases.get(slot)?.token === token) e.leases.delete(slot)
            }),
          heartbeat: ({ member, now, since }) =>
            Effect.sync(() => {
              e.beats.set(member, Math.max(e.beats.get(member) ?? now, now))
              return countSince(e.beats, since, since)
            }),
          members: (since) => Effect.sync(() => countSince(e.beats, since)),
          recordTrip: ({ at, member, since }) =>
            Effect.sync(() => {
              e.trips.set(member, Math.max(e.trips.get(member) ?? at, at))
              return countSince(e.trips, Math.max(since, e.verdict?.at ?? since), since)
            }),
          trips: (since) => Effect.sync(() => countSince(e.trips, Math.max(since, e.verdict?.at ?? since)))
        } satisfies SharedCircuit
      })
  })
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<BreakerStore> = Layer.effect(BreakerStore, makeMemory)
