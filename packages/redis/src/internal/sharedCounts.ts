/**
 * The shared counts capability on Redis (`BreakerStore.SharedCounts`): the fleet's consecutive
 * failures and last failure time, fields of the circuit's hash beside its verdict (a verdict saved
 * sets `failures` to 0: verdictChannel.ts).
 */
import type { BreakerStore } from "@circuitry/breaker"
import * as Effect from "effect/Effect"
import type { Circuit } from "./breakerCircuit.js"
import type { Client } from "./client.js"

// Adds failures and keeps the latest failure time, in one step.
const RECORD_FAILURES = `
redis.call('HINCRBY', KEYS[1], 'failures', ARGV[1])
local last = tonumber(redis.call('HGET', KEYS[1], 'lastFailureAt'))
if not last or last < tonumber(ARGV[2]) then redis.call('HSET', KEYS[1], 'lastFailureAt', ARGV[2]) end
return 1`

/** @internal */
export interface Commands {
  circuitryRecordFailures(key: string, count: string, at: string): Promise<number>
}

/** @internal */
export const define = <C extends Client>(client: C): C & Commands => {
  client.defineCommand("circuitryRecordFailures", { numberOfKeys: 1, lua: RECORD_FAILURES })
  return client as C & Commands
}

/** @internal */
export const make = ({ call, client, key }: Circuit<Client & Commands>): BreakerStore.SharedCounts => ({
  recordFailures: (count, at) =>
    call("recordFailures", () => client.circuitryRecordFailures(key, String(count), String(at))).pipe(Effect.asVoid),
  recordSuccess: () => call("recordSuccess", () => client.hset(key, "failures", 0)).pipe(Effect.asVoid),
  read: call("counts", () => client.hmget(key, "failures", "lastFailureAt")).pipe(
    Effect.map(([failures, last]) => ({
      consecutiveFailures: failures === null ? 0 : Number(failures),
      lastFailureAt: last === null ? undefined : Number(last)
    }))
  )
})
