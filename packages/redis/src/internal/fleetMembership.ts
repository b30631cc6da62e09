/**
 * The fleet membership capability on Redis (`BreakerStore.FleetMembership`, for `sharing.quorum`):
 * one sorted set each per circuit for heartbeats and trips, scored by the members' Effect Clock
 * times.
 */
import type { BreakerStore } from "@circuitry/breaker"
import type { Circuit } from "./breakerCircuit.js"
import type { Client } from "./client.js"
import { NOW } from "./serverClock.js"

// A heartbeat keeps each member's latest beat (ZADD GT) and forgets beats before `since`.
const HEARTBEAT = `
redis.call('ZADD', KEYS[1], 'GT', ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[3])
return redis.call('ZCOUNT', KEYS[1], ARGV[3], '+inf')`

// Trips count from `since`, and not from before the stored verdict (its episode is over). The
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

/** @internal */
export interface Commands {
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

/** @internal */
export const define = <C extends Client>(client: C): C & Commands => {
  client.defineCommand("circuitryHeartbeat", { numberOfKeys: 1, lua: HEARTBEAT })
  client.defineCommand("circuitryTrips", { numberOfKeys: 2, lua: TRIPS })
  return client as C & Commands
}

/** @internal */
export const make = ({ call, client, key, keyOf }: Circuit<Client & Commands>): BreakerStore.FleetMembership => {
  const members = keyOf("members")
  const trips = keyOf("trips")
  return {
    heartbeat: ({ member, now, since }) =>
      call("heartbeat", () => client.circuitryHeartbeat(members, member, String(now), String(since))),
    members: (since) => call("members", () => client.zcount(members, since, "+inf")),
    recordTrip: ({ at, member, now, since }) =>
      call("recordTrip", () => client.circuitryTrips(trips, key, member, String(at), String(since), String(now))),
    trips: ({ now, since }) =>
      call("trips", () => client.circuitryTrips(trips, key, "", "0", String(since), String(now)))
  }
}
