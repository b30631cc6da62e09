/**
 * The memory store (`BreakerStore.makeMemory`), one function per capability of the port: the
 * verdict channel, shared counts, probe leases and fleet membership. Every circuit of one store is
 * an `Entry` in its map, on the store's one clock.
 */
import * as Edition from "@circuitry/core/Edition"
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as BreakerStore from "../BreakerStore.js"
import * as Kit from "../BreakerStoreKit.js"

interface Entry {
  /** The stored verdict, on the store's clock. */
  verdict: Kit.StoredVerdict | undefined
  consecutiveFailures: number
  lastFailureAt: number | undefined
  /** The lease held in each permit slot: its token and when it is over. */
  readonly leases: Map<number, { readonly token: string; readonly expires: number }>
  /** Each member's last heartbeat, and its latest trip. */
  readonly beats: Map<string, number>
  readonly trips: Map<string, number>
  readonly pubsub: PubSub.PubSub<BreakerStore.Verdict>
}

/** The verdict channel: a verdict made before the stored one is stale, and the stored one is told again instead. */
const verdictChannel = (e: Entry, now: () => number): BreakerStore.VerdictChannel => ({
  load: Effect.sync(() => (e.verdict === undefined ? Option.none() : Option.some(Kit.toVerdict(e.verdict, now())))),
  watch: Stream.fromPubSub(e.pubsub),
  save: (verdict) =>
    Effect.suspend(() => {
      const at = now()
      const stored = Kit.toStored(verdict, at)
      // A verdict made before the stored one is stale: the stored one is told again instead, so
      // that the member that sent the stale one catches up.
      if (e.verdict !== undefined && e.verdict.at > stored.at) {
        return PubSub.publish(e.pubsub, Kit.toVerdict(e.verdict, at))
      }
      e.verdict = stored
      e.consecutiveFailures = 0 // every transition starts the count again
      return PubSub.publish(e.pubsub, Kit.toVerdict(stored, at))
    })
})

const sharedCounts = (e: Entry): BreakerStore.SharedCounts => ({
  recordFailures: (count, at) =>
    Effect.sync(() => {
      e.consecutiveFailures += count
      e.lastFailureAt = Math.max(e.lastFailureAt ?? at, at)
    }),
  recordSuccess: () =>
    Effect.sync(() => {
      e.consecutiveFailures = 0
    }),
  read: Effect.sync(() => ({ consecutiveFailures: e.consecutiveFailures, lastFailureAt: e.lastFailureAt }))
})

const probeLeases = (e: Entry): BreakerStore.ProbeLeases => ({
  acquire: ({ leaseMillis, now, permits }) =>
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
  release: (lease) =>
    Effect.sync(() => {
      const decoded = Kit.decodeLease(lease)
      if (Option.isNone(decoded)) return
      const { slot, token } = decoded.value
      if (e.leases.get(slot)?.token === token) e.leases.delete(slot)
    })
})

/** How many members' times are at or after `since`; with `forget`, times before it are dropped. */
const countSince = (times: Map<string, number>, since: number, forget?: number): number => {
  let n = 0
  for (const [member, at] of times) {
    if (at >= since) n++
    else if (forget !== undefined && at < forget) times.delete(member)
  }
  return n
}

const fleetMembership = (e: Entry, now: () => number): BreakerStore.FleetMembership => {
  /**
   * Where a window's count starts: at `since`, and not before the stored verdict, put on the
   * caller's clock (its age by the store's clock, before the caller's `now`).
   */
  const tripsFrom = (since: number, callerNow: number): number =>
    e.verdict === undefined ? since : Math.max(since, callerNow - (now() - e.verdict.at))
  return {
    heartbeat: ({ member, now, since }) =>
      Effect.sync(() => {
        e.beats.set(member, Math.max(e.beats.get(member) ?? now, now))
        return countSince(e.beats, since, since)
      }),
    members: (since) => Effect.sync(() => countSince(e.beats, since)),
    recordTrip: ({ at, member, now: callerNow, since }) =>
      Effect.sync(() => {
        e.trips.set(member, Math.max(e.trips.get(member) ?? at, at))
        return countSince(e.trips, tripsFrom(since, callerNow), since)
      }),
    trips: ({ now: callerNow, since }) => Effect.sync(() => countSince(e.trips, tripsFrom(since, callerNow)))
  }
}

/**
 * The store's `connect`, on `clock` (the one clock that dates and ages every verdict): every
 * capability, over one entry per name.
 *
 * @internal
 */
export const make = (
  clock: Clock.Clock
): ((name: string) => Effect.Effect<BreakerStore.SharedCircuit, never, Scope.Scope>) => {
  const entries = new Map<string, Entry>()
  const entry = (name: string): Entry => {
    let found = entries.get(name)
    if (found === undefined) {
      found = {
        verdict: undefined,
        consecutiveFailures: 0,
        lastFailureAt: undefined,
        leases: new Map(),
        beats: new Map(),
        trips: new Map(),
        pubsub: Effect.runSync(PubSub.unbounded<BreakerStore.Verdict>())
      }
      entries.set(name, found)
    }
    return found
  }
  const now = () => Edition.nowUnsafe(clock)
  return (name) =>
    Effect.sync(() => {
      const e = entry(name)
      return {
        verdict: verdictChannel(e, now),
        counts: sharedCounts(e),
        probes: probeLeases(e),
        fleet: fleetMembership(e, now)
      }
    })
}
