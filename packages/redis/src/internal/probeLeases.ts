/**
 * The probe leases capability on Redis (`BreakerStore.ProbeLeases`): the acquire and release
 * scripts, one key per permit slot, and what the store still owes the fleet when a lease request
 * or release was not answered (`Leases`, one per store).
 *
 * A call whose caller stopped waiting (the store's deadline, an interrupted probe) has not
 * necessarily failed: its command stays in ioredis's queue, and a paused server runs it when it
 * wakes. An acquire that lands then takes a lease nobody knows the token of, and the whole fleet is
 * refused the lease until it runs out. So the store keeps the account itself: a lease that lands
 * for nobody is released as soon as its answer comes, and a request or release that is never
 * answered (the connection was lost with it in flight, or it could not be sent) is released by its
 * token on every slot once the connection is ready again.
 */
import { type BreakerStore, BreakerStoreKit } from "@circuitry/breaker"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type { Circuit } from "./breakerCircuit.js"
import type { Client } from "./client.js"
import { NOW } from "./serverClock.js"

// KEYS[1] is the circuit, then one key per permit slot, each taken with SET NX PX. A lease also
// carries its expiry on the Effect Clock, so a lease that is over by the breakers' clock is taken
// over even before Redis expires it (PX is the backstop for a holder that is gone). No lease while
// the stored verdict is still open by the server's clock (the clock that dated its `until`): the
// episode's probe failed and the fleet reopened, and a member that has not heard yet would probe
// that episode a second time.
const ACQUIRE = `${NOW}
local now = tonumber(ARGV[2])
if redis.call('TYPE', KEYS[1]).ok == 'hash' then
  local stored = redis.call('HMGET', KEYS[1], 'state', 'until')
  local untilMillis = tonumber(stored[2])
  if stored[1] == 'Open' and untilMillis and untilMillis > nowMillis() then return 0 end
end
local expires = now + tonumber(ARGV[3])
local value = ARGV[1] .. '|' .. expires
for i = 2, #KEYS do
  local key = KEYS[i]
  if redis.call('SET', key, value, 'NX', 'PX', ARGV[3]) then return i - 1 end
  local held = redis.call('GET', key)
  local heldUntil = held and tonumber(string.match(held, '|(-?%d+)$'))
  if not heldUntil or heldUntil <= now then
    redis.call('SET', key, value, 'PX', ARGV[3])
    return i - 1
  end
end
return 0`

// Releases whichever of KEYS (slot keys) the token ARGV[1] holds: only the holder's token releases
// a lease (one taken over after expiry is not released by its old holder).
const RELEASE = `
local released = 0
for i = 1, #KEYS do
  local held = redis.call('GET', KEYS[i])
  if held and string.sub(held, 1, string.len(ARGV[1]) + 1) == ARGV[1] .. '|' then
    released = released + redis.call('DEL', KEYS[i])
  end
end
return released`

/** How a store sends the release script: the number of keys, the slot keys, the token. @internal */
export type Release = (keyCount: number, ...args: Array<string | number>) => Promise<number>

/**
 * At most this many releases are owed at once (the oldest is dropped past it: its lease is the
 * likeliest to have run out). Each is one small script when the connection is ready again.
 */
const OWED_CAP = 1_024

/** @internal */
export class Leases {
  /** Tokens to release once the connection is ready again, with the slot keys they may hold (oldest first). */
  private readonly owed = new Map<string, ReadonlyArray<string>>()

  constructor(private readonly release: Release) {}

  /**
   * Runs `call` (which sends `send`'s command), a request that may leave `token` holding a lease:
   * if its caller does not take the answer (a failure, an interruption), `held` says which of
   * `slots` the late answer holds, and those are released as it lands; with no answer at all (the
   * call was lost with its connection, or never sent), every slot is, once the connection is ready.
   */
  guard<A, E>(
    call: (send: () => Promise<A>) => Effect.Effect<A, E>,
    send: () => Promise<A>,
    token: string,
    slots: ReadonlyArray<string>,
    held: (answer: A) => ReadonlyArray<string>
  ): Effect.Effect<A, E> {
    return Effect.suspend(() => {
      let sent: Promise<A> | undefined
      return Effect.onExit(
        call(() => (sent = send())),
        (exit) =>
          Effect.sync(() => {
            if (Exit.isSuccess(exit) || sent === undefined) return
            sent.then(
              (answer) => {
                const keys = held(answer)
                if (keys.length > 0) this.send(token, keys)
              },
              () => this.owe(token, slots)
            )
          })
      )
    })
  }

  /**
   * Sends every release owed: on every ready of the connection (a reconnect). A server that was
   * paused without the connection being lost answers the calls themselves, late: `guard` hears it.
   */
  get retry(): Effect.Effect<void> {
    return Effect.sync(() => {
      const owed = Array.from(this.owed)
      this.owed.clear()
      for (const [token, keys] of owed) this.send(token, keys)
    })
  }

  private send(token: string, keys: ReadonlyArray<string>): void {
    let sent: Promise<number>
    try {
      sent = this.release(keys.length, ...keys, token)
    } catch {
      return this.owe(token, keys)
    }
    sent.then(
      () => {},
      () => this.owe(token, keys)
    )
  }

  private owe(token: string, keys: ReadonlyArray<string>): void {
    this.owed.delete(token)
    this.owed.set(token, keys)
    if (this.owed.size > OWED_CAP) this.owed.delete(this.owed.keys().next().value!)
  }
}

/** @internal */
export interface Commands {
  circuitryAcquire(...args: Array<string | number>): Promise<number>
  circuitryRelease(keyCount: number, ...args: Array<string | number>): Promise<number>
}

/** @internal */
export const define = <C extends Client>(client: C): C & Commands => {
  client.defineCommand("circuitryAcquire", { lua: ACQUIRE })
  client.defineCommand("circuitryRelease", { lua: RELEASE })
  return client as C & Commands
}

/** @internal */
export const make = (
  { call, client, key, keyOf }: Circuit<Client & Commands>,
  leases: Leases
): BreakerStore.ProbeLeases => {
  const slotKey = (slot: number) => keyOf(`probe:${slot}`)
  return {
    acquire: ({ leaseMillis, now, permits }) =>
      Effect.suspend(() => {
        const token = BreakerStoreKit.makeToken()
        const slots = Array.from({ length: permits }, (_, i) => slotKey(i))
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
    release: (lease) =>
      Option.match(BreakerStoreKit.decodeLease(lease), {
        onNone: () => Effect.void,
        onSome: ({ slot, token }) => {
          const slots = [slotKey(slot)]
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
      })
  }
}
