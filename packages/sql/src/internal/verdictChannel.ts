/**
 * The verdict channel on SQL (`BreakerStore.VerdictChannel`), the capability every store offers:
 * the verdict in the circuit's row, dated by the database's clock. A save is one upsert that keeps
 * the newest verdict, tells this process's members at once and announces it (NOTIFY on
 * PostgreSQL: notify.ts); members elsewhere learn it from the announcement or the poll (store.ts).
 */
import type { BreakerStore } from "@circuitry/breaker"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type { Member, Shared } from "./circuit.js"
import * as Notify from "./notify.js"
import { decode, NONE, type Row } from "./rows.js"

/** A duration as a statement takes it: whole milliseconds, never negative. */
const wholeMillis = (millis: number): number => (Number.isFinite(millis) && millis > 0 ? Math.round(millis) : 0)

/** @internal */
export const make = (store: Shared, name: string, member: Member): BreakerStore.VerdictChannel => {
  const { channel, circuits, epochs, members, now, publish, report, reported, run, select, sql, unreadable } = store

  const load: BreakerStore.VerdictChannel["load"] = run("load", select([name])).pipe(
    Effect.flatMap((rows) => {
      if (rows.length === 0) {
        member.last = NONE
        return Effect.succeed(Option.none())
      }
      const decoded = decode(rows[0]!)
      member.last = decoded.key
      return Effect.as(
        report(name, decoded),
        decoded.verdict === undefined ? Option.none() : Option.some(decoded.verdict)
      )
    })
  )

  const save: BreakerStore.VerdictChannel["save"] = (verdict) => {
    // Dated by the database: made `ageMillis` before its now, open `remainingMillis` after it.
    // The latest verdict wins: one made before the stored one (a late retry) is not applied.
    // A verdict stored starts the shared count again (sharedCounts.ts).
    const openUntil = verdict.state === "Open" ? sql`${now} + ${wholeMillis(verdict.remainingMillis)}` : sql`0`
    const madeAt = sql`${now} - ${wholeMillis(verdict.ageMillis)}`
    return run(
      "save",
      sql<Row>`INSERT INTO ${circuits} AS c
  (name, state, open_until, verdict_at, origin, verdict_by, consecutive_failures, updated_at)
VALUES (${name}, ${verdict.state}, ${openUntil}, ${madeAt}, ${verdict.origin}, ${verdict.by ?? null}, 0, ${now})
ON CONFLICT (name) DO UPDATE SET
  state = excluded.state,
  open_until = excluded.open_until,
  verdict_at = excluded.verdict_at,
  origin = excluded.origin,
  verdict_by = excluded.verdict_by,
  consecutive_failures = 0,
  updated_at = excluded.updated_at
WHERE ${unreadable} OR c.verdict_at <= excluded.verdict_at
RETURNING name, state, open_until, verdict_at, origin, verdict_by, ${now} AS now${Notify.announce(sql, channel, now)}`
    ).pipe(
      Effect.flatMap((applied) => {
        const group = members.of(name)
        if (applied.length === 0) {
          // A newer verdict is stored: the next poll tells every member here, the saver too.
          for (const m of group) m.last = undefined
          return Effect.void
        }
        epochs.set(name, (epochs.get(name) ?? 0) + 1)
        const decoded = decode(applied[0]!)
        reported.delete(name)
        return Effect.forEach(group, (m) => publish(m, decoded), { discard: true })
      })
    )
  }

  return { load, watch: Stream.fromPubSub(member.pubsub), save }
}
