/**
 * The fleet membership capability on SQL (`BreakerStore.FleetMembership`, for `sharing.quorum`):
 * one row per (circuit, member) in the members table, with the member's last heartbeat and latest
 * trip. Each statement is atomic on its own: a count read after this member's write sees it, so of
 * members writing at once, the last to write counts every one.
 */
import { type BreakerStore, BreakerStoreKit } from "@circuitry/breaker"
import * as Effect from "effect/Effect"
import type { Shared } from "./circuit.js"

/** @internal */
export const make = (
  { circuits, fleet, now, run, sql, unreadable }: Shared,
  name: string
): BreakerStore.FleetMembership => {
  const latest = (column: "beat_at" | "trip_at") =>
    sql.literal(
      `${column} = CASE WHEN m.${column} IS NULL OR m.${column} < excluded.${column} THEN excluded.${column} ELSE m.${column} END`
    )
  const countBeats = (since: number) =>
    sql<{ n: unknown }>`SELECT COUNT(*) AS n FROM ${fleet} WHERE name = ${name} AND beat_at >= ${since}`
  /** A row is forgotten once neither its beat nor its trip is at or after `since`. */
  const forget = (since: number) =>
    sql`DELETE FROM ${fleet} WHERE name = ${name}
  AND (beat_at IS NULL OR beat_at < ${since}) AND (trip_at IS NULL OR trip_at < ${since})`
  // Trips count from `since`, and not from before the stored verdict (its episode is over).
  // The verdict is dated on the database's clock, the trips on the members': it is put on the
  // caller's clock as members read verdicts, made its age (by the database's clock) before
  // the caller's `callerNow`.
  const countTrips = (since: number, callerNow: number) =>
    sql<{ n: unknown }>`SELECT COUNT(*) AS n FROM ${fleet} WHERE name = ${name} AND trip_at >= ${since}
  AND trip_at >= COALESCE((SELECT CASE WHEN ${unreadable} THEN ${since} ELSE ${callerNow} - (${now} - c.verdict_at) END FROM ${circuits} AS c WHERE c.name = ${name}), ${since})`
  const count = (rows: ReadonlyArray<{ n: unknown }>) => BreakerStoreKit.millisOf(rows[0]?.n) ?? 0

  return {
    heartbeat: ({ member, now, since }) =>
      run(
        "heartbeat",
        sql`INSERT INTO ${fleet} AS m (name, member, beat_at) VALUES (${name}, ${member}, ${now})
ON CONFLICT (name, member) DO UPDATE SET ${latest("beat_at")}`.pipe(
          Effect.andThen(forget(since)),
          Effect.andThen(countBeats(since)),
          Effect.map(count)
        )
      ),
    members: (since) => run("members", Effect.map(countBeats(since), count)),
    recordTrip: ({ at, member, now: callerNow, since }) =>
      run(
        "recordTrip",
        sql`INSERT INTO ${fleet} AS m (name, member, trip_at) VALUES (${name}, ${member}, ${at})
ON CONFLICT (name, member) DO UPDATE SET ${latest("trip_at")}`.pipe(
          // Rows are forgotten by heartbeats only: a window shorter than the heartbeat's life
          // would otherwise forget live members.
          Effect.andThen(countTrips(since, callerNow)),
          Effect.map(count)
        )
      ),
    trips: ({ now: callerNow, since }) => run("trips", Effect.map(countTrips(since, callerNow), count))
  }
}
