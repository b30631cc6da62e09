/**
 * The `BreakerStore` on `@effect/sql`. Every change is one atomic statement (an upsert or a
 * conditional update), so concurrent writers in any number of processes never lose a failure,
 * never create two rows for one name and never both take the same probe lease. Verdicts made
 * elsewhere are learned in the background, never on a call's path: pushed by LISTEN/NOTIFY on
 * PostgreSQL (`notify.ts`), and by the poll, the fallback and SQLite's only path.
 */
import { BreakerStore, BreakerStoreKit, OptionRules } from "@circuitry/breaker"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Clock from "effect/Clock"
import * as Schema from "effect/Schema"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { InvalidStoreOptions } from "./errors.js"
import * as Notify from "./notify.js"
import { type Decoded, decode, NONE, nothing, type Row, storeError } from "./rows.js"
import * as Tables from "./schema.js"

type Verdict = BreakerStore.Verdict
type BreakerStoreError = BreakerStore.BreakerStoreError

/** @internal */
export interface Options {
  readonly table?: string | undefined
  readonly pollInterval?: Duration.DurationInput | undefined
  readonly migrate?: boolean | undefined
  readonly listen?: boolean | undefined
  readonly listenInterval?: Duration.DurationInput | undefined
}

/** @internal */
export interface Resolved {
  readonly table: string
  readonly pollInterval: Duration.Duration
  readonly migrate: boolean
  readonly listen: boolean
  readonly listenInterval: Duration.Duration
}

const identifier = /^[A-Za-z_][A-Za-z0-9_]{0,47}$/

const Identifier = Schema.String.pipe(
  Schema.filter((table) => table.split(".").length <= 2 && table.split(".").every((part) => identifier.test(part)))
).annotations({
  message: () => 'a SQL identifier (letters, digits, "_", at most 48 characters, optionally "schema.table")'
})

const OptionsSchema = Schema.Struct({
  table: Schema.optional(Identifier),
  pollInterval: Schema.optional(OptionRules.PositiveMillis),
  migrate: Schema.optional(OptionRules.Flag),
  listen: Schema.optional(OptionRules.Flag),
  listenInterval: Schema.optional(OptionRules.PositiveMillis)
})

/** @internal */
export const resolve = (options: Options | undefined): Either.Either<Resolved, InvalidStoreOptions> =>
  Either.map(
    OptionRules.decode(OptionsSchema, options, (message) => new InvalidStoreOptions({ message })),
    (o) => ({
      table: o.table ?? "circuitry_breakers",
      pollInterval: Duration.millis(o.pollInterval ?? 250),
      migrate: o.migrate ?? true,
      listen: o.listen ?? true,
      listenInterval: Duration.millis(o.listenInterval ?? 1_000)
    })
  )

/** @internal */
export interface Service {
  readonly table: string
  readonly poll: Effect.Effect<void, BreakerStoreError>
  readonly listening: Effect.Effect<boolean>
  readonly problems: Stream.Stream<BreakerStoreError>
  readonly subscribeProblems: Effect.Effect<Queue.Dequeue<BreakerStoreError>, never, Scope.Scope>
}

interface Member {
  readonly pubsub: PubSub.PubSub<Verdict>
  /** The key of the verdict this member last loaded or was told; undefined when not known. */
  last: string | undefined
  /** When the verdict it was last told was made (the database's clock): an announced verdict older than that is not told. */
  lastAt: number
}

/** A duration as a statement takes it: whole milliseconds, never negative. */
const wholeMillis = (millis: number): number => (Number.isFinite(millis) && millis > 0 ? Math.round(millis) : 0)

/** @internal */
export const make = (
  options?: Options
): Effect.Effect<
  readonly [BreakerStore.BreakerStore["Type"], Service],
  InvalidStoreOptions | BreakerStoreError,
  SqlClient.SqlClient | Scope.Scope
> =>
  Effect.gen(function* () {
    const resolved = yield* resolve(options)
    const given = yield* SqlClient.SqlClient
    // Our statements name their columns exactly: the application's name transforms must not apply.
    const sql = given.withoutTransforms()
    if (resolved.migrate) {
      yield* Tables.migrate(resolved.table).pipe(
        Effect.provideService(SqlClient.SqlClient, sql),
        Effect.mapError((cause) =>
          storeError("migrate", `could not create the breaker tables: ${cause.message}`, cause)
        )
      )
    }
    const t = Tables.tables(resolved.table)
    const circuits = sql(t.circuits)
    const probes = sql(t.probes)
    const channel = Notify.channelOf(t.circuits)
    const fleet = sql(t.members)

    /** Bumped when a save is published locally, so that a poll begun earlier does not undo it. */
    const epochs = new Map<string, number>()
    const members = BreakerStoreKit.makeMembers<Member>({ onEmpty: (name) => epochs.delete(name) })
    const reported = new Map<string, string>()
    const problems = yield* PubSub.unbounded<BreakerStoreError>()
    const pollLock = yield* Effect.makeSemaphore(1)
    let pollFailing = false

    /**
     * One statement, disconnected from its caller's interruption: a caller that gives up (the
     * breaker's 250 ms load and lease deadlines) is answered at once, while the driver's cleanup
     * (`@effect/sql-pg` cancels with `pg_cancel_backend`, up to 5 s against a database that does not
     * answer) finishes in the background.
     */
    const run = <A>(operation: string, effect: Effect.Effect<A, SqlError>): Effect.Effect<A, BreakerStoreError> =>
      Effect.disconnect(Effect.mapError(effect, (cause) => storeError(operation, cause.message, cause)))

    /** A malformed row is reported once (log and `problems`) for as long as it stays the same. */
    const report = (name: string, decoded: Decoded): Effect.Effect<void> => {
      if (decoded.problem === undefined) {
        reported.delete(name)
        return Effect.void
      }
      if (reported.get(name) === decoded.key) return Effect.void
      reported.set(name, decoded.key)
      const error = storeError("decode", `circuit "${name}" in ${t.circuits}: ${decoded.problem}; treated as Closed`)
      return Effect.zipRight(Effect.logWarning(error.message), PubSub.publish(problems, error))
    }

    /**
     * A stored row that is no verdict of ours (a foreign state, NULL or non-numeric times from an old
     * schema or another writer): the next verdict replaces it, since comparing against it would
     * keep it for good. SQLite keeps text in a BIGINT column as text; PostgreSQL's types hold.
     */
    const unreadable = sql.literal(
      `(c.state IS NULL OR c.state NOT IN ('Closed', 'Open', 'Isolated') OR c.verdict_at IS NULL OR c.open_until IS NULL OR c.origin IS NULL${sql.onDialectOrElse(
        {
          sqlite: () =>
            " OR typeof(c.verdict_at) NOT IN ('integer', 'real') OR typeof(c.open_until) NOT IN ('integer', 'real')",
          orElse: () => ""
        }
      )})`
    )

    /**
     * The database's clock in epoch milliseconds, the one clock verdicts are dated and aged by. Read
     * once per statement (PostgreSQL's statement_timestamp(), SQLite's 'now'), so a verdict written
     * and the now returned with it agree.
     */
    const now = sql.literal(
      sql.onDialectOrElse({
        sqlite: () => "CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)",
        orElse: () => "CAST(FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000) AS BIGINT)"
      })
    )

    const select = (names: ReadonlyArray<string>) =>
      sql<Row>`SELECT name, state, open_until, verdict_at, origin, verdict_by, ${now} AS now
FROM ${circuits} WHERE ${sql.in("name", names)}`

    const publish = (member: Member, decoded: Decoded): Effect.Effect<void> => {
      if (member.last === decoded.key) return Effect.void
      member.last = decoded.key
      if (decoded.madeAt !== undefined) member.lastAt = decoded.madeAt
      return decoded.verdict === undefined ? Effect.void : Effect.asVoid(PubSub.publish(member.pubsub, decoded.verdict))
    }

    const pollOnce: Effect.Effect<void, BreakerStoreError> = Effect.suspend(() => {
      const names = members.names()
      if (names.length === 0) return Effect.void
      const before = new Map(names.map((name) => [name, epochs.get(name) ?? 0]))
      const chunks: Array<ReadonlyArray<string>> = []
      for (let i = 0; i < names.length; i += 500) chunks.push(names.slice(i, i + 500))
      return Effect.forEach(chunks, select).pipe(
        Effect.flatMap((results) => {
          const rows = new Map<string, Row>()
          for (const result of results) for (const row of result) rows.set(row.name, row)
          return Effect.forEach(
            names,
            (name) => {
              const group = members.of(name)
              if (group.size === 0 || (epochs.get(name) ?? 0) !== before.get(name)) return Effect.void
              const row = rows.get(name)
              const decoded = row === undefined ? nothing : decode(row)
              return Effect.zipRight(
                report(name, decoded),
                Effect.forEach(group, (member) => publish(member, decoded), { discard: true })
              )
            },
            { discard: true }
          )
        }),
        Effect.zipRight(
          Effect.suspend(() => {
            if (!pollFailing) return Effect.void
            pollFailing = false
            return Effect.logInfo(`breaker store ${t.circuits}: reachable again, verdicts resynchronised`)
          })
        ),
        Effect.catchAll((cause) =>
          Effect.suspend(() => {
            // Forget what every member was told: once the store answers again, each is told the
            // stored verdict afresh.
            for (const member of members.all()) member.last = undefined
            const error = storeError("poll", cause.message, cause)
            if (pollFailing) return Effect.fail(error)
            pollFailing = true
            return Effect.logWarning(
              `breaker store ${t.circuits}: cannot read verdicts, breakers keep their local state`,
              cause
            ).pipe(Effect.zipRight(PubSub.publish(problems, error)), Effect.zipRight(Effect.fail(error)))
          })
        )
      )
    })
    const poll = pollLock.withPermits(1)(pollOnce)

    /** Wakes the poll at once: however many wakes, one poll at a time and at most one waiting. */
    const wake = yield* Queue.sliding<void>(1)
    yield* Queue.take(wake).pipe(Effect.zipRight(Effect.ignore(poll)), Effect.forever, Effect.forkScoped)

    /**
     * A verdict announced by NOTIFY: told to the circuit's members here at once, under the poll's
     * lock (so that a poll's older read is never told after it). Announcements arrive in commit
     * order, so the last one is the stored verdict; one older than what a member was told (a poll
     * read it later) is not told. A payload that is not a verdict wakes the poll instead.
     */
    const announced = (announcement: Notify.Saved | undefined): Effect.Effect<void> => {
      if (announcement === undefined) return Effect.asVoid(Queue.offer(wake, undefined))
      const { name, row } = announcement
      if (members.of(name).size === 0) return Effect.void
      return pollLock.withPermits(1)(
        Effect.suspend(() => {
          const decoded = decode(row)
          const madeAt = decoded.madeAt ?? Number.NEGATIVE_INFINITY
          reported.delete(name)
          return Effect.forEach(members.of(name), (m) => (m.lastAt > madeAt ? Effect.void : publish(m, decoded)), {
            discard: true
          })
        })
      )
    }

    const listener = resolved.listen
      ? yield* Notify.listen({
          sql: given,
          channel,
          table: t.circuits,
          fastInterval: resolved.pollInterval,
          checkInterval: resolved.listenInterval,
          onSaved: announced,
          onListening: (again) =>
            Effect.suspend(() => {
              // Saves made while not listening were missed: read every circuit (and after a loss,
              // tell every member the stored verdict again, as the contract says).
              if (again) for (const member of members.all()) member.last = undefined
              return Queue.offer(wake, undefined)
            }),
          onLost: Queue.offer(wake, undefined)
        })
      : Notify.disabled

    // The poll: every `pollInterval`, or only every `listenInterval` while NOTIFY brings the verdicts.
    const listenMillis = Duration.toMillis(resolved.listenInterval)
    let lastPolled = Number.NEGATIVE_INFINITY
    const backgroundPoll = Effect.flatMap(Clock.currentTimeMillis, (now) => {
      if (listener.listening() && now - lastPolled < listenMillis) return Effect.void
      lastPolled = now
      return Effect.ignore(poll)
    })
    yield* backgroundPoll.pipe(Effect.repeat(Schedule.spaced(resolved.pollInterval)), Effect.forkScoped)

    const connect = (name: string): Effect.Effect<BreakerStore.SharedCircuit, BreakerStoreError, Scope.Scope> =>
      Effect.gen(function* () {
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
            return Effect.as(report(name, decoded), Option.fromNullable(decoded.verdict))
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
            const attempt = (slot: number): Effect.Effect<Option.Option<string>, SqlError> =>
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
              run(
                "releaseProbe",
                sql`DELETE FROM ${probes} WHERE name = ${name} AND slot = ${slot} AND token = ${token}`
              )
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
              Effect.zipRight(forget(since)),
              Effect.zipRight(countBeats(since)),
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
              Effect.zipRight(countTrips(since, callerNow)),
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

    return [
      BreakerStore.BreakerStore.of({ connect }),
      {
        table: t.circuits,
        poll,
        listening: Effect.sync(listener.listening),
        problems: Stream.fromPubSub(problems),
        subscribeProblems: PubSub.subscribe(problems)
      }
    ] as const
  })
