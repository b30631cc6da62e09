import { BreakerStore, BreakerStoreKit } from "@circuitry/breaker"
import * as Edition from "@circuitry/core/Edition"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import {
  acquire,
  type Client as Connected,
  connect as connectClient,
  failFastOptions,
  subscriberOptions,
  within
} from "./client.js"
import * as Connection from "./connection.js"
import * as Keys from "./keys.js"
import { ACQUIRE, Leases, RELEASE } from "./leases.js"
import * as options from "./options.js"
import { NOW } from "./serverClock.js"

type Verdict = BreakerStore.Verdict

/** @internal */
export type Options = options.Options

const DEFAULT_PREFIX = "circuitry:breaker:"
const STORE = "redis"
/** How long startup waits for the server before going on without it (real time). */
const STARTUP_WAIT_MILLIS = 1_000
/** How long a resync waits for the subscription (real time) before it reads the store anyway. */
const RESUBSCRIBE_WAIT_MILLIS = 5_000

// -- Lua: each atomic step ---------------------------------------------------------------------

// save: a verdict made before the stored one (a late retry, its age grown while it waited) does
// not overwrite it; the stored one is published again instead, so that the member that sent the
// stale one catches up. Stored state this store cannot read (a foreign state, times that are not
// epoch milliseconds, missing fields, a key of another type) is no verdict to keep: the new one
// replaces it, so the circuit shares again. Publications carry the server's now, so a member
// reads them as durations. Returns { applied, at of the verdict stored }.
const SAVE = `${NOW}
local function millis(v)
  if v and (string.match(v, '^%-?%d+$') or string.match(v, '^%-?%d+%.%d+$')) then return tonumber(v) end
  return nil
end
local now = nowMillis()
local kind = redis.call('TYPE', KEYS[1]).ok
if kind ~= 'hash' and kind ~= 'none' then redis.call('DEL', KEYS[1]) end
local stored = kind == 'hash' and redis.call('HMGET', KEYS[1], 'state', 'until', 'at', 'origin', 'by') or {}
local state = stored[1]
local readable = (state == 'Closed' or state == 'Open' or state == 'Isolated')
  and millis(stored[2]) ~= nil and millis(stored[3]) ~= nil and stored[4]
local at = now - tonumber(ARGV[3])
if readable and millis(stored[3]) > at then
  redis.call('PUBLISH', ARGV[6], cjson.encode({ name = ARGV[7], state = state, ["until"] = stored[2],
    at = stored[3], origin = stored[4], by = stored[5], now = digits(now) }))
  return { 0, stored[3] }
end
local untilAt = 0
if ARGV[1] == 'Open' then untilAt = now + tonumber(ARGV[2]) end
redis.call('HSET', KEYS[1], 'state', ARGV[1], 'until', digits(untilAt), 'at', digits(at), 'origin', ARGV[4], 'failures', 0)
if ARGV[5] == '' then redis.call('HDEL', KEYS[1], 'by') else redis.call('HSET', KEYS[1], 'by', ARGV[5]) end
redis.call('PUBLISH', ARGV[6], cjson.encode({ name = ARGV[7], state = ARGV[1], ["until"] = digits(untilAt),
  at = digits(at), origin = ARGV[4], by = ARGV[5], now = digits(now) }))
return { 1, digits(at) }`

// load: the stored fields and the server's now, read in one step.
const LOAD = `${NOW}
local f = redis.call('HMGET', KEYS[1], 'state', 'until', 'at', 'origin', 'by')
return { f[1], f[2], f[3], f[4], f[5], digits(nowMillis()) }`

const RECORD_FAILURES = `
redis.call('HINCRBY', KEYS[1], 'failures', ARGV[1])
local last = tonumber(redis.call('HGET', KEYS[1], 'lastFailureAt'))
if not last or last < tonumber(ARGV[2]) then redis.call('HSET', KEYS[1], 'lastFailureAt', ARGV[2]) end
return 1`

// Fleet membership and trips: one sorted set each per circuit, scored by the members' Effect Clock
// times. A heartbeat keeps each member's latest beat (ZADD GT) and forgets beats before \`since\`.
const HEARTBEAT = `
redis.call('ZADD', KEYS[1], 'GT', ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[3])
return redis.call('ZCOUNT', KEYS[1], ARGV[3], '+inf')`

// Trips count from \`since\`, and not from before the stored verdict (its episode is over). The
// verdict is dated on the server's clock, the trips on the members': it is put on the caller's
// clock as members read verdicts, made its age (by the server's TIME) before the caller's now. With
// ARGV[1] a member, the trip is recorded first (its latest trip is kept) and older ones forgotten.
// KEYS: the trips set, the circuit hash (read only). ARGV: member, at, since, the caller's now.
const TRIPS = `${NOW}
local since = tonumber(ARGV[3])
if ARGV[1] ~= '' then
  redis.call('ZADD', KEYS[1], 'GT', ARGV[2], ARGV[1])
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[3])
end
if redis.call('TYPE', KEYS[2]).ok == 'hash' then
  local stored = redis.call('HMGET', KEYS[2], 'state', 'at')
  local at = stored[2] and (string.match(stored[2], '^%-?%d+$') or string.match(stored[2], '^%-?%d+%.%d+$'))
  if (stored[1] == 'Closed' or stored[1] == 'Open' or stored[1] == 'Isolated') and at then
    local made = tonumber(ARGV[4]) - (nowMillis() - tonumber(at))
    if made > since then since = made end
  end
end
return redis.call('ZCOUNT', KEYS[1], digits(since), '+inf')`

type Client = Connected & {
  circuitrySave(key: string, ...args: Array<string>): Promise<[applied: number, at: string]>
  circuitryLoad(key: string): Promise<Array<string | null>>
  circuitryRecordFailures(key: string, count: string, at: string): Promise<number>
  circuitryAcquire(...args: Array<string | number>): Promise<number>
  circuitryRelease(keyCount: number, ...args: Array<string | number>): Promise<number>
  circuitryHeartbeat(key: string, member: string, now: string, since: string): Promise<number>
  circuitryTrips(
    tripsKey: string,
    circuitKey: string,
    member: string,
    at: string,
    since: string,
    now: string
  ): Promise<number>
}

const defineCommands = (client: Connected): Client => {
  client.defineCommand("circuitrySave", { numberOfKeys: 1, lua: SAVE })
  client.defineCommand("circuitryLoad", { numberOfKeys: 1, lua: LOAD })
  client.defineCommand("circuitryRecordFailures", { numberOfKeys: 1, lua: RECORD_FAILURES })
  client.defineCommand("circuitryAcquire", { lua: ACQUIRE })
  client.defineCommand("circuitryRelease", { lua: RELEASE })
  client.defineCommand("circuitryHeartbeat", { numberOfKeys: 1, lua: HEARTBEAT })
  client.defineCommand("circuitryTrips", { numberOfKeys: 2, lua: TRIPS })
  return client as Client
}

/**
 * One connected breaker: where its verdicts are delivered, and when (on the server's clock) the
 * newest verdict it has saved or heard was made.
 */
interface Member {
  readonly queue: Queue.Queue<Verdict>
  newest: number
}

/** A verdict as read from the server, with when it was made on the server's clock. */
interface Read {
  readonly verdict: Verdict
  readonly at: number
}

const deliver = (member: Member, read: Read): void => {
  // A verdict older than one this member already saved or heard is stale: adopting it would undo
  // a newer transition (e.g. the stored verdict re-emitted after a reconnect, racing a newer one).
  if (read.at < member.newest) return
  member.newest = read.at
  Edition.offerUnsafe(member.queue, read.verdict)
}

/** Stored fields and the server's now (strings, as Redis gives them) as a verdict; undefined when not one. */
const readOf = (
  fields: { state: unknown; until: unknown; at: unknown; origin: unknown; by: unknown },
  now: unknown
): Read | undefined => {
  const stored = BreakerStoreKit.storedOf(fields)
  const millis = BreakerStoreKit.millisOf(now)
  if (stored === undefined || millis === undefined) return undefined
  return { verdict: BreakerStoreKit.toVerdict(stored, millis), at: stored.at }
}

/** A duration as the scripts take it: whole milliseconds, never negative. */
const wholeMillis = (millis: number): number => (Number.isFinite(millis) && millis > 0 ? Math.round(millis) : 0)

/** @internal */
export const make = (
  o?: Options
): Effect.Effect<BreakerStore.BreakerStoreService, options.InvalidRedisOptions, Scope.Scope> =>
  Effect.gen(function* () {
    const { deadlineMillis, livenessMillis, prefix, target } = yield* options.resolve(o, DEFAULT_PREFIX)
    const channel = `${prefix}verdicts`
    // A circuit's keys share the hash tag `{name}` (one Redis Cluster slot): see keys.ts.
    const hashKey = (name: string) => Keys.of(prefix, name)("circuit")
    const slotKey = (name: string, slot: number) => Keys.of(prefix, name)(`probe:${slot}`)
    const membersKey = (name: string) => Keys.of(prefix, name)("members")
    const tripsKey = (name: string) => Keys.of(prefix, name)("trips")

    // Two connections: commands (fail fast when down) and a subscriber for verdicts. Neither has
    // to be up for the layer to build: breakers keep their state locally until Redis is back.
    // On a cluster, verdicts go by classic pub/sub, which reaches subscribers on every node.
    const client = defineCommands(yield* acquire(target, failFastOptions, "commands"))
    const subscriber = yield* acquire(target, subscriberOptions, "subscriber")

    /** The unreadable stored fields last reported for each name, so that each is logged once. */
    const unreadable = new Map<string, string>()
    const members = BreakerStoreKit.makeMembers<Member>({ onEmpty: (name) => unreadable.delete(name) })
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
      const read = readOf({ state: p.state, until: p.until, at: p.at, origin: p.origin, by: p.by }, p.now)
      if (read === undefined || typeof p.name !== "string") return
      for (const member of members.of(p.name)) deliver(member, read)
    })

    // Leases a request or release left in doubt are released when the connection is ready again.
    const leases = new Leases((keyCount, ...args) => client.circuitryRelease(keyCount, ...args))
    yield* Connection.onReady([client], leases.retry)

    const { call } = yield* Connection.make(
      client,
      { name: "RedisBreakerStore", deadlineMillis, livenessMillis },
      (operation, message, cause) => new BreakerStore.BreakerStoreError({ store: STORE, operation, message, cause })
    )

    const read = (name: string): Effect.Effect<Option.Option<Read>, BreakerStore.BreakerStoreError> =>
      call("load", () => client.circuitryLoad(hashKey(name))).pipe(
        Effect.flatMap(([state, until, at, origin, by, now]) => {
          const found = state === null ? undefined : readOf({ state, until, at, origin, by }, now)
          if (state === null || found !== undefined) {
            unreadable.delete(name)
            return Effect.succeed(found === undefined ? Option.none() : Option.some(found))
          }
          const error = new BreakerStore.BreakerStoreError({
            store: STORE,
            operation: "load",
            message: `circuit "${name}": the stored verdict is not one this store wrote (treated as Closed until the next verdict replaces it)`
          })
          // Reported once while the stored fields stay the same, however often they are read.
          const seen = JSON.stringify([state, until, at, origin, by])
          if (unreadable.get(name) === seen) return Effect.fail(error)
          unreadable.set(name, seen)
          return Effect.andThen(Effect.logWarning(`RedisBreakerStore: ${error.message}`), Effect.fail(error))
        })
      )
    const load = (name: string): Effect.Effect<Option.Option<Verdict>, BreakerStore.BreakerStoreError> =>
      Effect.map(
        read(name),
        Option.map((r) => r.verdict)
      )

    // A connection that was not ready may have missed publications (a lost connection, or a
    // server that came up after this store): on every ready, hand every member the stored verdict.
    // The read waits for the subscription first: ioredis sends the SUBSCRIBE after "ready", and a
    // verdict published between a read that ran ahead of it and the server taking it was lost.
    // SUBSCRIBE again changes nothing on the server, and its answer says the subscription is in place.
    const subscribed = Effect.promise(() =>
      within(subscriber.subscribe(channel), RESUBSCRIBE_WAIT_MILLIS).then(
        () => {},
        () => {}
      )
    )
    // The names whose members were there when a connection became ready (the ones that may have
    // missed a publication; a member that joins later reads the store itself when it connects),
    // noted at the event: the resync runs later, after the subscription is in place.
    const due = new Set<string>()
    const noteDue = () => {
      for (const name of members.names()) due.add(name)
    }
    // On the same events as the resync itself (on a cluster, a node lost too).
    for (const c of [client, subscriber]) for (const event of Connection.readyEvents(c)) c.on(event, noteDue)
    yield* Connection.onReady(
      [client, subscriber],
      Effect.andThen(
        subscribed,
        Effect.suspend(() => {
          const names = Array.from(due)
          due.clear()
          return Effect.forEach(
            names,
            (name) =>
              read(name).pipe(
                Effect.tap((found) =>
                  Effect.sync(() => {
                    if (Option.isNone(found)) return
                    for (const member of members.of(name)) deliver(member, found.value)
                  })
                ),
                Effect.ignore
              ),
            { discard: true }
          )
        })
      )
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
        const member: Member = { queue, newest: Number.NEGATIVE_INFINITY }
        yield* members.join(name, member)
        const key = hashKey(name)
        return {
          load: load(name),
          verdicts: Stream.fromQueue(queue),
          save: (verdict) =>
            call("save", () =>
              client.circuitrySave(
                key,
                verdict.state,
                String(wholeMillis(verdict.remainingMillis)),
                String(wholeMillis(verdict.ageMillis)),
                verdict.origin,
                verdict.by ?? "",
                channel,
                name
              )
            ).pipe(
              Effect.map(([applied, at]) => {
                // Saved: an older verdict re-emitted later (a reconnect's resync) is not delivered.
                const made = BreakerStoreKit.millisOf(at)
                if (applied === 1 && made !== undefined) member.newest = Math.max(member.newest, made)
              })
            ),
          recordFailures: (count, at) =>
            call("recordFailures", () => client.circuitryRecordFailures(key, String(count), String(at))).pipe(
              Effect.asVoid
            ),
          recordSuccess: () => call("recordSuccess", () => client.hset(key, "failures", 0)).pipe(Effect.asVoid),
          counts: call("counts", () => client.hmget(key, "failures", "lastFailureAt")).pipe(
            Effect.map(([failures, last]) => ({
              consecutiveFailures: failures === null ? 0 : Number(failures),
              lastFailureAt: last === null ? undefined : Number(last)
            }))
          ),
          acquireProbe: ({ leaseMillis, now, permits }) =>
            Effect.suspend(() => {
              const token = BreakerStoreKit.makeToken()
              const slots = Array.from({ length: permits }, (_, i) => slotKey(name, i))
              const ttl = Math.max(1, Math.ceil(leaseMillis))
              return leases
                .guard(
                  (send) => call("acquireProbe", send),
                  () => client.circuitryAcquire(slots.length + 1, key, ...slots, token, String(now), String(ttl)),
                  token,
                  slots,
                  (slot) => (slot > 0 ? [slots[slot - 1]!] : [])
                )
                .pipe(
                  Effect.map((slot) =>
                    slot > 0 ? Option.some(BreakerStoreKit.encodeLease({ slot: slot - 1, token })) : Option.none()
                  )
                )
            }),
          releaseProbe: (lease) =>
            Option.match(BreakerStoreKit.decodeLease(lease), {
              onNone: () => Effect.void,
              onSome: ({ slot, token }) => {
                const slots = [slotKey(name, slot)]
                return leases
                  .guard(
                    (send) => call("releaseProbe", send),
                    () => client.circuitryRelease(1, slots[0]!, token),
                    token,
                    slots,
                    () => []
                  )
                  .pipe(Effect.asVoid)
              }
            }),
          heartbeat: ({ member, now, since }) =>
            call("heartbeat", () => client.circuitryHeartbeat(membersKey(name), member, String(now), String(since))),
          members: (since) => call("members", () => client.zcount(membersKey(name), since, "+inf")),
          recordTrip: ({ at, member, now, since }) =>
            call("recordTrip", () =>
              client.circuitryTrips(tripsKey(name), key, member, String(at), String(since), String(now))
            ),
          trips: ({ now, since }) =>
            call("trips", () => client.circuitryTrips(tripsKey(name), key, "", "0", String(since), String(now)))
        } satisfies BreakerStore.SharedCircuit
      })

    return BreakerStore.BreakerStore.of({ connect })
  })
