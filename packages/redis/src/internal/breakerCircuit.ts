/**
 * What the capabilities of one circuit on Redis share (breakerStore.ts makes it for each circuit a
 * breaker joins): the commands connection with every script defined, its calls under the store's
 * deadline, and the circuit's keys. Each capability is a file of its own: verdictChannel.ts,
 * sharedCounts.ts, probeLeases.ts, fleetMembership.ts.
 */
import type { BreakerStore } from "@circuitry/breaker"
import type * as Effect from "effect/Effect"
import type { Client } from "./client.js"

/** The store's name in its errors. @internal */
export const STORE = "redis"

/** @internal */
export interface Circuit<C extends Client> {
  /** The commands connection, with the capability's scripts defined on it. */
  readonly client: C
  /** One call under the store's deadline, failing with `BreakerStoreError`. */
  readonly call: <A>(operation: string, send: () => Promise<A>) => Effect.Effect<A, BreakerStore.BreakerStoreError>
  readonly name: string
  /** The circuit's hash: its verdict and counts. */
  readonly key: string
  /** Another key of the circuit (a probe slot, its members, its trips), in the circuit's hash slot (keys.ts). */
  readonly keyOf: (part: string) => string
}

/** A duration as the scripts take it: whole milliseconds, never negative. @internal */
export const wholeMillis = (millis: number): number => (Number.isFinite(millis) && millis > 0 ? Math.round(millis) : 0)
