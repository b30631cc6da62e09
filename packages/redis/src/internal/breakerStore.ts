/**
 * The `BreakerStore` on Redis: the two connections (commands, and a subscriber for verdicts), the
 * resync after a reconnect, and each circuit a breaker joins, with every capability of the port,
 * one file each: verdictChannel.ts, sharedCounts.ts, probeLeases.ts, fleetMembership.ts (what they
 * share: breakerCircuit.ts).
 */
import { BreakerStore, BreakerStoreKit } from "@circuitry/breaker"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import { STORE } from "./breakerCircuit.js"
import { acquire, connect as connectClient, failFastOptions, subscriberOptions, within } from "./client.js"
import * as Connection from "./connection.js"
import * as Fleet from "./fleetMembership.js"
import * as Keys from "./keys.js"
import * as options from "./options.js"
import * as Probes from "./probeLeases.js"
import * as Counts from "./sharedCounts.js"
import * as Verdicts from "./verdictChannel.js"

type Verdict = BreakerStore.Verdict

/** @internal */
export type Options = options.Options

const DEFAULT_PREFIX = "circuitry:breaker:"
/** How long startup waits for the server before going on without it (real time). */
const STARTUP_WAIT_MILLIS = 1_000
/** How long a resync waits for the subscription (real time) before it reads the store anyway. */
const RESUBSCRIBE_WAIT_MILLIS = 5_000

/** @internal */
export const make = (
  o?: Options
): Effect.Effect<BreakerStore.BreakerStoreService, options.InvalidRedisOptions, Scope.Scope> =>
  Effect.gen(function* () {
    const { deadlineMillis, livenessMillis, prefix, target } = yield* options.resolve(o, DEFAULT_PREFIX)
    const channel = `${prefix}verdicts`
    // A circuit's keys share the hash tag `{name}` (one Redis Cluster slot): see keys.ts.
    const hashKey = (name: string) => Keys.of(prefix, name)("circuit")

    // Two connections: commands (fail fast when down) and a subscriber for verdicts. Neither has
    // to be up for the layer to build: breakers keep their state locally until Redis is back.
    // On a cluster, verdicts go by classic pub/sub, which reaches subscribers on every node.
    const client = Fleet.define(
      Probes.define(Counts.define(Verdicts.define(yield* acquire(target, failFastOptions, "commands"))))
    )
    const subscriber = yield* acquire(target, subscriberOptions, "subscriber")

    /** The unreadable stored fields last reported for each name, so that each is logged once. */
    const unreadable = new Map<string, string>()
    const members = BreakerStoreKit.makeMembers<Verdicts.Member>({ onEmpty: (name) => unreadable.delete(name) })
    subscriber.on("message", (from: string, message: string) => {
      if (from !== channel) return
      let parsed: unknown
      try {
        parsed = JSON.parse(message)
      } catch {
        return
      }
      if (typeof parsed !== "object" || parsed === null) return
      const p = parsed as Record<string, unknown>
      const read = Verdicts.readOf({ state: p.state, until: p.until, at: p.at, origin: p.origin, by: p.by }, p.now)
      if (read === undefined || typeof p.name !== "string") return
      for (const member of members.of(p.name)) Verdicts.deliver(member, read)
    })

    // Leases a request or release left in doubt are released when the connection is ready again.
    const leases = new Probes.Leases((keyCount, ...args) => client.circuitryRelease(keyCount, ...args))
    yield* Connection.onReady([client], leases.retry)

    const { call } = yield* Connection.make(
      client,
      { name: "RedisBreakerStore", deadlineMillis, livenessMillis },
      (operation, message, cause) => new BreakerStore.BreakerStoreError({ store: STORE, operation, message, cause })
    )

    const read = Verdicts.reader({ call, client }, hashKey, unreadable)

    // A connection that was not ready may have missed publications (a lost connection, or a
    // server that came up after this store): on every ready, hand every member the stored verdict.
    // The read waits for the subscription first: ioredis sends the SUBSCRIBE after "ready", and a
    // verdict published between a read that ran ahead of it and the server taking it was lost.
    // SUBSCRIBE again changes nothing on the server, and its answer says the subscription is in place.
    // The names whose members were there when a connection became ready (the ones that may have
    // missed a publication; a member that joins later reads the store itself when it connects),
    // noted at the event: the resync runs later, after the subscription is in place.
    const due = new Set<string>()
    const noteDue = () => {
      for (const name of members.names()) due.add(name)
    }
    // On the same events as the resync itself (on a cluster, a node lost too).
    for (const c of [client, subscriber]) for (const event of Connection.readyEvents(c)) c.on(event, noteDue)
    const resync = (names: ReadonlyArray<string>) =>
      Effect.forEach(
        names,
        (name) =>
          read(name).pipe(
            Effect.tap((found) =>
              Effect.sync(() => {
                if (Option.isNone(found)) return
                for (const member of members.of(name)) Verdicts.deliver(member, found.value)
              })
            ),
            Effect.ignore
          ),
        { discard: true }
      )
    const scope = yield* Effect.scope
    yield* Connection.onReady(
      [client, subscriber],
      Effect.suspend(() => {
        const inPlace = subscriber.subscribe(channel).then(
          () => true,
          () => false
        )
        return Effect.flatMap(
          Effect.promise(() =>
            within(inPlace, RESUBSCRIBE_WAIT_MILLIS).then(
              () => true,
              () => false
            )
          ),
          (waited) => {
            const names = Array.from(due)
            due.clear()
            if (waited) return resync(names)
            // The subscription is late (a slow or loaded server): read now, as the store may have
            // moved on since the connection was lost, and again once the subscription is in place,
            // for a verdict published in between reached no subscription of this store. Forked, so
            // that a later ready is not held up behind a SUBSCRIBE that may never be answered.
            return resync(names).pipe(
              Effect.andThen(
                Effect.forkIn(
                  Effect.flatMap(
                    Effect.promise(() => inPlace),
                    (subscribed) => (subscribed ? resync(names) : Effect.void)
                  ),
                  scope
                )
              ),
              Effect.asVoid
            )
          }
        )
      })
    )

    // Startup: wait a little (real time) for the server, then go on with or without it.
    yield* Effect.promise(() =>
      Promise.allSettled([
        within(connectClient(client), STARTUP_WAIT_MILLIS),
        within(
          connectClient(subscriber).catch(() => {}),
          STARTUP_WAIT_MILLIS
        ),
        within(subscriber.subscribe(channel), STARTUP_WAIT_MILLIS)
      ])
    )

    const connect = (name: string): Effect.Effect<BreakerStore.SharedCircuit, never, Scope.Scope> =>
      Effect.gen(function* () {
        const queue = yield* Effect.acquireRelease(Queue.unbounded<Verdict>(), Queue.shutdown)
        const member: Verdicts.Member = { queue, newest: Number.NEGATIVE_INFINITY }
        yield* members.join(name, member)
        const keyOf = Keys.of(prefix, name)
        const circuit = { client, call, name, key: keyOf("circuit"), keyOf }
        return {
          verdict: Verdicts.make(circuit, member, channel, read),
          counts: Counts.make(circuit),
          probes: Probes.make(circuit, leases),
          fleet: Fleet.make(circuit)
        }
      })

    return BreakerStore.BreakerStore.of({ connect })
  })
