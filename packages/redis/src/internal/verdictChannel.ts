/**
 * The verdict channel on Redis (`BreakerStore.VerdictChannel`), the capability every store offers:
 * the verdict in the circuit's hash, saved and loaded by one script each on the server's clock, and
 * published on the store's channel to every member (breakerStore.ts subscribes and resyncs).
 */
import { BreakerStore, BreakerStoreKit } from "@circuitry/breaker"
import * as Edition from "@circuitry/core/Edition"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { type Circuit, STORE, wholeMillis } from "./breakerCircuit.js"
import type { Client } from "./client.js"
import { NOW } from "./serverClock.js"

type Verdict = BreakerStore.Verdict

// save: a verdict made before the stored one (a late retry, its age grown while it waited) does
// not overwrite it; the stored one is published again instead, so that the member that sent the
// stale one catches up. Stored state this store cannot read (a foreign state, times that are not
// epoch milliseconds, missing fields, a key of another type) is no verdict to keep: the new one
// replaces it, so the circuit shares again. Publications carry the server's now, so a member
// reads them as durations. A verdict stored starts the shared count again (`failures`, of
// sharedCounts.ts). Returns { applied, at of the verdict stored }.
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

/** @internal */
export interface Commands {
  circuitrySave(key: string, ...args: Array<string>): Promise<[applied: number, at: string]>
  circuitryLoad(key: string): Promise<Array<string | null>>
}

/** @internal */
export const define = <C extends Client>(client: C): C & Commands => {
  client.defineCommand("circuitrySave", { numberOfKeys: 1, lua: SAVE })
  client.defineCommand("circuitryLoad", { numberOfKeys: 1, lua: LOAD })
  return client as C & Commands
}

/**
 * One connected breaker: where its verdicts are delivered, and when (on the server's clock) the
 * newest verdict it has saved or heard was made.
 *
 * @internal
 */
export interface Member {
  readonly queue: Queue.Queue<Verdict>
  newest: number
}

/** A verdict as read from the server, with when it was made on the server's clock. @internal */
export interface Read {
  readonly verdict: Verdict
  readonly at: number
}

/** @internal */
export const deliver = (member: Member, read: Read): void => {
  // A verdict older than one this member already saved or heard is stale: adopting it would undo
  // a newer transition (e.g. the stored verdict re-emitted after a reconnect, racing a newer one).
  if (read.at < member.newest) return
  member.newest = read.at
  Edition.offerUnsafe(member.queue, read.verdict)
}

/** Stored fields and the server's now (strings, as Redis gives them) as a verdict; undefined when not one. @internal */
export const readOf = (
  fields: { state: unknown; until: unknown; at: unknown; origin: unknown; by: unknown },
  now: unknown
): Read | undefined => {
  const stored = BreakerStoreKit.storedOf(fields)
  const millis = BreakerStoreKit.millisOf(now)
  if (stored === undefined || millis === undefined) return undefined
  return { verdict: BreakerStoreKit.toVerdict(stored, millis), at: stored.at }
}

/**
 * Reads a circuit's stored verdict (a member's load, and the resync after a reconnect). Stored
 * fields this store did not write fail the read, logged once while they stay the same
 * (`unreadable`: the fields last reported, by name).
 *
 * @internal
 */
export const reader =
  (
    { call, client }: Pick<Circuit<Client & Commands>, "call" | "client">,
    hashKey: (name: string) => string,
    unreadable: Map<string, string>
  ) =>
  (name: string): Effect.Effect<Option.Option<Read>, BreakerStore.BreakerStoreError> =>
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

/**
 * The verdict channel of one member: `read` is the store's reader, `channel` the store's pub/sub
 * channel (whose messages breakerStore.ts delivers to `member`).
 *
 * @internal
 */
export const make = (
  { call, client, key, name }: Circuit<Client & Commands>,
  member: Member,
  channel: string,
  read: (name: string) => Effect.Effect<Option.Option<Read>, BreakerStore.BreakerStoreError>
): BreakerStore.VerdictChannel => ({
  load: Effect.map(
    read(name),
    Option.map((r) => r.verdict)
  ),
  watch: Stream.fromQueue(member.queue),
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
    )
})
