/**
 * One circuit's statements: each change one atomic statement (an upsert or a conditional update),
 * so that concurrent writers in any number of processes never lose a failure, never create two
 * rows for one name and never both take the same probe lease. What they share with the rest of the
 * store (the client, the tables, the members told of verdicts) is `Shared`, made by `store.ts`.
 */
import { BreakerStore, BreakerStoreKit } from "@circuitry/breaker"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { SqlClient, SqlError, Statement } from "#sql"
import * as Notify from "./notify.js"
import { type Decoded, decode, NONE, type Row } from "./rows.js"

type Verdict = BreakerStore.Verdict
type BreakerStoreError = BreakerStore.BreakerStoreError

/** @internal */
export interface Member {
  readonly pubsub: PubSub.PubSub<Verdict>
  /** The key of the verdict this member last loaded or was told; undefined when not known. */
  last: string | undefined
  /** When the verdict it was last told was made (the database's clock): an announced verdict older than that is not told. */
  lastAt: number
}

/**
 * What every circuit of one store shares.
 *
 * @internal
 */
export interface Shared {
  readonly sql: SqlClient.SqlClient
  readonly circuits: Statement.Identifier
  readonly probes: Statement.Identifier
  readonly fleet: Statement.Identifier
  /** The NOTIFY channel of the table. */
  readonly channel: string
  /** The database's now, in epoch milliseconds, read once per statement. */
  readonly now: Statement.Fragment
  /** True for a stored row that is no verdict of ours (aliased `c`). */
  readonly unreadable: Statement.Fragment
  readonly select: (names: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Row>, SqlError.SqlError>
  readonly run: <A>(
    operation: string,
    effect: Effect.Effect<A, SqlError.SqlError>
  ) => Effect.Effect<A, BreakerStoreError>
  readonly report: (name: string, decoded: Decoded) => Effect.Effect<void>
  readonly publish: (member: Member, decoded: Decoded) => Effect.Effect<void>
  readonly members: BreakerStoreKit.Members<Member>
  /** Bumped when a save is published locally, so that a poll begun earlier does not undo it. */
  readonly epochs: Map<string, number>
  /** The key of the malformed row last reported, per circuit. */
  readonly reported: Map<string, string>
}

/** A duration as a statement takes it: whole milliseconds, never negative. */
const wholeMillis = (millis: number): number => (Number.isFinite(millis) && millis > 0 ? Math.round(millis) : 0)

/** @internal */
export const connect = (
  store: Shared,
  name: string
): Effect.Effect<BreakerStore.SharedCircuit, BreakerStoreError, Scope.Scope> =>
  Effect.gen(function* () {
    const {
      channel,
      circuits,
      epochs,
      fleet,
      members,
      now,
      probes,
      publish,
      report,
      reported,
      run,
      select,
      sql,
      unreadable
    } = store
    const pubsub = yield* Effect.acquireRelease(PubSub.unbounded<Verdict>(), PubSub.shutdown)
    const member: Member = { pubsub, last: undefined, lastAt: Number.NEGATIVE_INFINITY }
    yield* members.join(name, member)

    const load: BreakerStore.SharedCircuit["load"] = run("load", select([name])).pipe(
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

    const save = (verdict: Verdict): Effect.Effect<void, BreakerStoreError> => {
      // Dated by the database: made `ageMillis` before its now, open `remainingMillis` after it.
      // The latest verdict wins: one made before the stored one (a late retry) is not applied.
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

    const recordFailures = (count: number, at: number): Effect.Effect<void, BreakerStoreError> =>
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
          )

    const recordSuccess = (at: number): Effect.Effect<void, BreakerStoreError> =>
      run(
        "recordSuccess",
        sql`UPDATE ${circuits} SET consecutive_failures = 0, updated_at = ${at}
WHERE name = ${name} AND consecutive_failures <> 0`
      )

    const counts: BreakerStore.SharedCircuit["counts"] = run(
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

    /** A slot is free when no lease was ever taken in it or its lease has expired. */
    const acquireSlot = (slot: number, token: string, leaseMillis: number, now: number) =>
      sql<{ token: string }>`INSERT INTO ${probes} AS p (name, slot, token, expires_at)
VALUES (${name}, ${slot}, ${token}, ${now + leaseMillis})
ON CONFLICT (name, slot) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at
WHERE p.expires_at <= ${now}
RETURNING token`

    const acquireProbe: BreakerStore.SharedCircuit["acquireProbe"] = ({ leaseMillis, now, permits }) =>
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
      })

    const releaseProbe = (lease: string): Effect.Effect<void, BreakerStoreError> =>
      Option.match(BreakerStoreKit.decodeLease(lease), {
        onNone: () => Effect.void,
        onSome: ({ slot, token }) =>
          run("releaseProbe", sql`DELETE FROM ${probes} WHERE name = ${name} AND slot = ${slot} AND token = ${token}`)
      })

    // Fleet membership: each statement is atomic on its own. A count read after this member's
    // write sees it, so of members writing at once, the last to write counts every one.
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

    const heartbeat: BreakerStore.SharedCircuit["heartbeat"] = ({ member, now, since }) =>
      run(
        "heartbeat",
        sql`INSERT INTO ${fleet} AS m (name, member, beat_at) VALUES (${name}, ${member}, ${now})
ON CONFLICT (name, member) DO UPDATE SET ${latest("beat_at")}`.pipe(
          Effect.andThen(forget(since)),
          Effect.andThen(countBeats(since)),
          Effect.map(count)
        )
      )

    const recordTrip: BreakerStore.SharedCircuit["recordTrip"] = ({ at, member, now: callerNow, since }) =>
      run(
        "recordTrip",
        sql`INSERT INTO ${fleet} AS m (name, member, trip_at) VALUES (${name}, ${member}, ${at})
ON CONFLICT (name, member) DO UPDATE SET ${latest("trip_at")}`.pipe(
          // Rows are forgotten by heartbeats only: a window shorter than the heartbeat's life
          // would otherwise forget live members.
          Effect.andThen(countTrips(since, callerNow)),
          Effect.map(count)
        )
      )

    return {
      load,
      verdicts: Stream.fromPubSub(pubsub),
      heartbeat,
      members: (since) => run("members", Effect.map(countBeats(since), count)),
      recordTrip,
      trips: ({ now: callerNow, since }) => run("trips", Effect.map(countTrips(since, callerNow), count)),
      save,
      recordFailures,
      recordSuccess,
      counts,
      acquireProbe,
      releaseProbe
    } satisfies BreakerStore.SharedCircuit
  })
