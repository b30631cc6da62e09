/**
 * Where a breaker's verdict lives when it is shared: by every breaker of the same name on the
 * same store, in this process or another. The in-memory state of each breaker is the default;
 * Redis (`@circuitry/redis`) and SQL (`@circuitry/sql`) provide this service for a fleet.
 *
 * A store offers capabilities (`SharedCircuit`): the verdict, always; shared counts, fleet-wide
 * probe leases and fleet membership when its backend can. The breaker never waits on the store on
 * its closed success path: it reports in the background and learns remote verdicts through
 * `watch`. A store that is down or slow never blocks or fails a call: the breaker carries on with
 * its local state and catches the store up later.
 *
 * @since 0.1.0
 */
import * as Edition from "@circuitry/core/Edition"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as Memory from "./internal/memoryStore.js"

/**
 * A verdict as it crosses between a member and its store. It holds no absolute time: members'
 * clocks may disagree (by seconds), so each time is a duration counted from the moment the verdict
 * is handed over: when a member calls `save`, or when the store reads (`load`) or publishes
 * (`watch`) it. The store keeps it on its own clock (the memory store's one Effect Clock, the
 * Redis server's `TIME`, the database's clock) and hands it back as durations from its own `now`;
 * a member turns them into times on its own clock when it adopts the verdict. Members thus agree
 * on when a circuit half-opens to within the transit time of the save and of the delivery,
 * whatever their clocks say. `HalfOpen` is never stored: it is derived (lazily) from `Open`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Verdict {
  readonly state: "Closed" | "Open" | "Isolated"
  /** Open: milliseconds left until the circuit turns half-open (>= 0); otherwise 0. */
  readonly remainingMillis: number
  /**
   * How long ago the verdict was made, in milliseconds (>= 0). Orders verdicts: the store keeps the
   * one made last (by its clock, `now - ageMillis`), so a late retry of an older verdict, whose age
   * has grown while it waited, does not replace a newer one.
   */
  readonly ageMillis: number
  /** Which breaker instance made it, so that an instance can ignore the echo of its own. */
  readonly origin: string
  /** Who asked for it (an operator's `isolateBy`, `resetBy`, `extendOpen(until, { by })`), if anyone. */
  readonly by?: string
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
 * The one capability every store offers: the circuit's verdict, read, followed and written.
 * Every backend passes its conformance suite (`editions/testkit/conformance/breakerStore`), which
 * pins the fine print below.
 *
 * @since 0.2.0
 * @category models
 */
export interface VerdictChannel {
  /** The verdict stored now (its durations counted from the store's `now`), if any. Reading creates nothing. */
  readonly load: Effect.Effect<Option.Option<Verdict>, BreakerStoreError>
  /**
   * Verdicts saved by any member, as they are saved. After a loss of connection the store
   * emits the stored verdict again, so members resynchronise.
   */
  readonly watch: Stream.Stream<Verdict>
  /**
   * Stores a verdict and tells every member (the saver included). The store dates it by its own
   * clock: made at `now - ageMillis`, open until `now + remainingMillis`. A verdict made before the
   * stored one (a late retry: its age grew while it waited) is not stored and does not start the
   * count again; the store tells its members the stored verdict again instead (at once, or at its
   * next poll), so the member that sent the stale one catches up. One made at the same instant is
   * stored. With `SharedCounts`, a verdict stored starts the fleet's failure count again.
   */
  readonly save: (verdict: Verdict) => Effect.Effect<void, BreakerStoreError>
}

/**
 * Fleet-wide failure counts beside the verdict, for dashboards and health routes (optional).
 * Without it a breaker keeps its counts to itself: its decisions never depend on them.
 *
 * @since 0.2.0
 * @category models
 */
export interface SharedCounts {
  /**
   * Adds failures (atomically, never losing one) and records the time of the last. `count` is a
   * whole number >= 0; it may be 0: then only the time is recorded (for the failure that opened the
   * circuit, whose verdict started the count again). The last failure time never moves back.
   */
  readonly recordFailures: (count: number, at: number) => Effect.Effect<void, BreakerStoreError>
  /** A success: the fleet's consecutive failure count starts again (the last failure time stays). */
  readonly recordSuccess: (at: number) => Effect.Effect<void, BreakerStoreError>
  /** The counts now: zero failures and no last failure for a circuit never counted. */
  readonly read: Effect.Effect<Counts, BreakerStoreError>
}

/**
 * Fleet-wide half-open probe leases (optional): one probe per permit for the whole fleet. Without
 * it each breaker instance limits its own probes (`halfOpen.permits` per instance, so a fleet of
 * `n` members may send up to `n` times as many probes).
 *
 * @since 0.2.0
 * @category models
 */
export interface ProbeLeases {
  /**
   * Takes one of `permits` fleet-wide half-open probe leases, for at most `leaseMillis`: exactly
   * one holder per permit slot. A lease taken at `now` is over from `now + leaseMillis` on, by the
   * times the callers pass in (their Effect Clock), whatever a server's clock says. Returns the
   * lease (`BreakerStoreKit.encodeLease`), or `None` when every lease is held.
   */
  readonly acquire: (options: {
    readonly permits: number
    readonly leaseMillis: number
    readonly now: number
  }) => Effect.Effect<Option.Option<string>, BreakerStoreError>
  /**
   * Gives a lease back. Only the holder's lease string releases it: a lease that was taken over
   * after it was over, released twice, or is not a lease at all releases nothing.
   */
  readonly release: (lease: string) => Effect.Effect<void, BreakerStoreError>
}

/**
 * Who is in the fleet and who tripped (optional): what `sharing.quorum` counts. Without it a
 * breaker with a quorum cannot be made (`InvalidBreakerOptions` names the missing capability).
 *
 * @since 0.2.0
 * @category models
 */
export interface FleetMembership {
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
   * many distinct members tripped at or after `since` and not before the stored verdict (a trip
   * older than the last verdict belongs to an episode that is over). `at`, `since` and `now` are
   * the caller's Effect Clock, as heartbeats and leases are; the stored verdict is dated on the
   * store's clock, so it is put on the caller's as every member reads a verdict: made its age (by
   * the store's clock) before the caller's `now`. Each member counts once, with its latest trip:
   * an earlier `at` never replaces a later one, so a report sent twice (a retry) counts once.
   * Trips before `since` may be forgotten by it (not by `trips`).
   */
  readonly recordTrip: (trip: {
    readonly member: string
    readonly at: number
    readonly since: number
    readonly now: number
  }) => Effect.Effect<number, BreakerStoreError>
  /** The count `recordTrip` returns, without reporting a trip. */
  readonly trips: (window: { readonly since: number; readonly now: number }) => Effect.Effect<number, BreakerStoreError>
}

/**
 * One breaker's view of its shared circuit: the verdict, which every store offers, and the
 * capabilities a store offers when its backend can (the memory, Redis and SQL stores offer all).
 * What a breaker does without each is in docs/breaker.md ("Shared state"): without `probes` its
 * probes are limited per instance, without `counts` its counts stay local, and without `fleet` a
 * `sharing.quorum` fails to make the breaker.
 *
 * @since 0.1.0
 * @category models
 * @example
 * ```ts
 * import { BreakerStore } from "@circuitry/breaker"
 * import { Effect } from "effect"
 *
 * // A store that shares verdicts only: its breakers probe per instance and keep their counts.
 * const verdictsOnly = Effect.map(BreakerStore.makeMemory, (memory) =>
 *   BreakerStore.BreakerStore.of({
 *     connect: (name) => Effect.map(memory.connect(name), (circuit) => ({ verdict: circuit.verdict }))
 *   })
 * )
 * ```
 */
export interface SharedCircuit {
  readonly verdict: VerdictChannel
  readonly counts?: SharedCounts | undefined
  readonly probes?: ProbeLeases | undefined
  readonly fleet?: FleetMembership | undefined
}

/**
 * The capabilities a `SharedCircuit` may offer beside its verdict, by the field that holds each.
 *
 * @since 0.2.0
 * @category models
 */
export type Capability = "counts" | "probes" | "fleet"

/**
 * @since 0.1.0
 * @category tags
 */
export class BreakerStore extends Edition.KeyClass<BreakerStore, BreakerStoreService>()(
  "@circuitry/breaker/BreakerStore"
) {}

/**
 * What a `BreakerStore` provides (`BreakerStore["Type"]` on Effect 3, `BreakerStore["Service"]` on 4).
 *
 * @since 0.2.0
 * @category models
 */
export interface BreakerStoreService {
  /** Joins the shared circuit `name` for as long as the scope lasts. */
  readonly connect: (name: string) => Effect.Effect<SharedCircuit, BreakerStoreError, Scope.Scope>
}

/**
 * A store in this process's memory: breakers of the same name in one process share one verdict.
 * Mostly for tests, and as the reference behaviour for other stores: it offers every capability,
 * and passes every conformance suite (`editions/testkit/conformance/breakerStore`).
 *
 * Its clock is the Effect Clock of the fiber that makes it (`TestClock` in tests): the one clock
 * that dates and ages every verdict, whatever the clocks of its members say.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory: Effect.Effect<BreakerStoreService> = Effect.clockWith((clock) =>
  Effect.sync(() => BreakerStore.of({ connect: Memory.make(clock) }))
)

/**
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<BreakerStore> = Layer.effect(BreakerStore, makeMemory)
