/**
 * The shared counts capability on SQL (`BreakerStore.SharedCounts`): columns of the circuit's row
 * beside its verdict, each change one atomic statement (a save sets the count to 0:
 * verdictChannel.ts).
 */
import { type BreakerStore, BreakerStoreKit } from "@circuitry/breaker"
import * as Effect from "effect/Effect"
import type { Shared } from "./circuit.js"

/** @internal */
export const make = ({ circuits, run, sql }: Shared, name: string): BreakerStore.SharedCounts => ({
  recordFailures: (count, at) =>
    // A count of 0 records the time of the last failure only (the contract's fine print).
    !Number.isSafeInteger(count) || count < 0
      ? Effect.void
      : run(
          "recordFailures",
          sql`INSERT INTO ${circuits} AS c (name, consecutive_failures, last_failure_at, updated_at)
VALUES (${name}, ${count}, ${at}, ${at})
ON CONFLICT (name) DO UPDATE SET
  consecutive_failures = c.consecutive_failures + excluded.consecutive_failures,
  last_failure_at = CASE
WHEN c.last_failure_at IS NULL OR c.last_failure_at < excluded.last_failure_at THEN excluded.last_failure_at
ELSE c.last_failure_at
  END,
  updated_at = excluded.updated_at`
        ),
  recordSuccess: (at) =>
    run(
      "recordSuccess",
      sql`UPDATE ${circuits} SET consecutive_failures = 0, updated_at = ${at}
WHERE name = ${name} AND consecutive_failures <> 0`
    ),
  read: run(
    "counts",
    sql<{
      consecutive_failures: unknown
      last_failure_at: unknown
    }>`SELECT consecutive_failures, last_failure_at FROM ${circuits} WHERE name = ${name}`
  ).pipe(
    Effect.map((rows) => {
      const row = rows[0]
      return {
        consecutiveFailures: row === undefined ? 0 : (BreakerStoreKit.millisOf(row.consecutive_failures) ?? 0),
        lastFailureAt: row === undefined ? undefined : BreakerStoreKit.millisOf(row.last_failure_at)
      }
    })
  )
})
