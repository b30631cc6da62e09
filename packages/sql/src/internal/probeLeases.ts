/**
 * The probe leases capability on SQL (`BreakerStore.ProbeLeases`): one row per (circuit, permit
 * slot) in the probes table, taken by one conditional upsert, so that two members never both hold
 * a slot.
 */
import { type BreakerStore, BreakerStoreKit } from "@circuitry/breaker"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { SqlError } from "#sql"
import type { Shared } from "./circuit.js"

/** @internal */
export const make = ({ probes, run, sql }: Shared, name: string): BreakerStore.ProbeLeases => {
  /** A slot is free when no lease was ever taken in it or its lease has expired. */
  const acquireSlot = (slot: number, token: string, leaseMillis: number, now: number) =>
    sql<{ token: string }>`INSERT INTO ${probes} AS p (name, slot, token, expires_at)
VALUES (${name}, ${slot}, ${token}, ${now + leaseMillis})
ON CONFLICT (name, slot) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at
WHERE p.expires_at <= ${now}
RETURNING token`

  return {
    acquire: ({ leaseMillis, now, permits }) =>
      Effect.suspend(() => {
        const token = BreakerStoreKit.makeToken()
        const attempt = (slot: number): Effect.Effect<Option.Option<string>, SqlError.SqlError> =>
          slot >= permits
            ? Effect.succeed(Option.none())
            : Effect.flatMap(acquireSlot(slot, token, Math.max(0, leaseMillis), now), (won) =>
                won.length > 0 && won[0]!.token === token
                  ? Effect.succeed(Option.some(BreakerStoreKit.encodeLease({ slot, token })))
                  : attempt(slot + 1)
              )
        return run("acquireProbe", attempt(0))
      }),
    release: (lease) =>
      Option.match(BreakerStoreKit.decodeLease(lease), {
        onNone: () => Effect.void,
        onSome: ({ slot, token }) =>
          run("releaseProbe", sql`DELETE FROM ${probes} WHERE name = ${name} AND slot = ${slot} AND token = ${token}`)
      })
  }
}
