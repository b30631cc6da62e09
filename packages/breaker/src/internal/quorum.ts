/**
 * A fleet that opens on a quorum (`sharing.quorum`), not on one member's view.
 *
 * Two verdicts: the member's own (its machine: a member whose policy trips opens at once) and the
 * fleet's (the verdict stored in the shared store, which every member adopts). With a quorum, a
 * member's trip is not saved as the fleet's verdict: it is reported (`recordTrip`), and the member
 * whose report brings the count of distinct members that tripped within the window to the quorum
 * saves the fleet's Open verdict. Until then the member's episode is its own: it half-opens on its
 * own clock, probes without the fleet's lease and closes without telling the fleet. Once the fleet
 * is open, every verdict of the member is the fleet's again (one probe per fleet, a close for all).
 *
 * Members keep a heartbeat in the store, so that a fraction is of the live members. This module
 * decides, and talks to one capability of the store: its fleet membership (`FleetMembership`: heartbeats
 * and trips); the outbox (outbox.ts) carries the reports to the store, never losing one.
 */
import * as Edition from "@circuitry/core/Edition"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as BreakerStore from "../BreakerStore.js"
import * as LoopStall from "./loopStall.js"
import type * as Options from "./options.js"
import type { Health } from "./sharing.js"

/** How often a member tells the store it is alive. */
export const HEARTBEAT_MILLIS = 5_000

/** A member is live while its last heartbeat is at most this old: it may miss two beats. */
export const MEMBER_TTL_MILLIS = 15_000

/** What to do with one of the member's own verdicts. @internal */
export type Route = "save" | "trip" | "local"

/** @internal */
export class Quorum {
  /** The fleet's verdict as this member last knew it (saved or heard): not Closed. */
  fleetOpen = false
  /** When that verdict was made: an older one heard later (a re-emit) changes nothing. */
  private fleetAt = Number.NEGATIVE_INFINITY

  constructor(
    readonly settings: Options.Quorum,
    /** The store's fleet membership: a quorum needs it (sharing.ts refuses a quorum without it). */
    private readonly fleet: BreakerStore.FleetMembership,
    /** This member, as the store counts it: the breaker's origin. */
    readonly member: string
  ) {}

  /**
   * A verdict of the store (another member's, the stored one at join, or this member's echo), on
   * this member's clock.
   */
  heard(verdict: { readonly state: BreakerStore.Verdict["state"]; readonly at: number }): void {
    this.know(verdict.state, verdict.at)
  }

  private know(state: BreakerStore.Verdict["state"], at: number): void {
    if (at < this.fleetAt) return
    this.fleetAt = at
    this.fleetOpen = state !== "Closed"
  }

  /**
   * One of the member's own verdicts: saved as the fleet's ("save": an isolation, or any verdict
   * while the fleet is open), reported as a trip (an Open while the fleet is closed) or kept to
   * itself (a Closed while the fleet is closed: the member's own episode ends).
   */
  route(state: BreakerStore.Verdict["state"], at: number): Route {
    if (state === "Isolated" || this.fleetOpen) {
      this.know(state, at)
      return "save"
    }
    return state === "Open" ? "trip" : "local"
  }

  /** This member opens the fleet at `at` (its report reached the quorum). */
  opened(at: number): void {
    this.know("Open", at)
  }

  /**
   * Reports the member's trip at `at` and says when (by the Clock) the fleet reached its quorum,
   * or `undefined` while it has not: the caller then opens the fleet.
   */
  report(at: number): Effect.Effect<number | undefined, BreakerStore.BreakerStoreError> {
    return Effect.clockWith((clock) => {
      const now = Edition.nowUnsafe(clock)
      return Effect.flatMap(this.recordAt(at, now), (trips) =>
        Effect.map(this.required(now), (required) => (trips >= required ? now : undefined))
      )
    })
  }

  /** Records the member's trip at `at`; the count of members that tripped within the window. */
  record(at: number): Effect.Effect<number, BreakerStore.BreakerStoreError> {
    return Effect.clockWith((clock) => this.recordAt(at, Edition.nowUnsafe(clock)))
  }

  /** `now` goes with the trip: the store puts the stored verdict on this member's clock with it. */
  private recordAt(at: number, now: number): Effect.Effect<number, BreakerStore.BreakerStoreError> {
    return this.fleet.recordTrip({ member: this.member, at, since: now - this.settings.windowMillis, now })
  }

  /**
   * Members that must have tripped: a count as given; a fraction of the live members, rounded up,
   * at least 1. The live members are counted by a heartbeat of the reporter's own, so that it
   * counts itself even when its last beat was lost.
   */
  private required(now: number): Effect.Effect<number, BreakerStore.BreakerStoreError> {
    const size = this.settings.size
    if (size._tag === "Count") return Effect.succeed(size.count)
    return Effect.map(this.beat(now), (live) => Math.max(1, Math.ceil(size.fraction * live)))
  }

  private beat(now: number): Effect.Effect<number, BreakerStore.BreakerStoreError> {
    return this.fleet.heartbeat({ member: this.member, now, since: now - MEMBER_TTL_MILLIS })
  }

  /**
   * The heartbeat, for as long as the breaker lives: one now, then every HEARTBEAT_MILLIS of the
   * Clock. A beat the store does not answer within the interval is skipped; `health` hears how each went.
   */
  heartbeat(health: Health): Effect.Effect<void> {
    const beat = Effect.clockWith((clock) =>
      LoopStall.timeout(
        Edition.disconnect(this.beat(Edition.nowUnsafe(clock))),
        Duration.millis(HEARTBEAT_MILLIS),
        "store_wait"
      ).pipe(Effect.matchEffect({ onFailure: (error) => health.failed(error), onSuccess: () => health.answered }))
    )
    return Effect.asVoid(Effect.repeat(beat, Schedule.spaced(Duration.millis(HEARTBEAT_MILLIS))))
  }
}
