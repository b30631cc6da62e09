/**
 * The `BreakerStore` on `@effect/sql`: the store's shared state, the poll and the announcements.
 * Each circuit is `circuit.ts`'s, with one file per capability of the port. Verdicts made
 * elsewhere are learned in the background, never on a call's path: pushed by LISTEN/NOTIFY on
 * PostgreSQL (`notify.ts`), and by the poll, the fallback and SQLite's only path.
 */
import { BreakerStore, BreakerStoreKit } from "@circuitry/breaker"
import * as Edition from "@circuitry/core/Edition"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Clock from "effect/Clock"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { SqlClient, type SqlError } from "#sql"
import * as Circuit from "./circuit.js"
import type { InvalidSqlOptions } from "./errors.js"
import * as Notify from "./notify.js"
import type { SqlBreakerStoreService } from "../SqlBreakerStore.js"
import { type Options, resolve } from "./options.js"
import { type Decoded, decode, nothing, type Row, storeError } from "./rows.js"
import * as Tables from "./schema.js"

type BreakerStoreError = BreakerStore.BreakerStoreError

/** @internal */
export type Service = SqlBreakerStoreService

type Member = Circuit.Member

/** @internal */
export const make = (
  options?: Options
): Effect.Effect<
  readonly [BreakerStore.BreakerStoreService, Service],
  InvalidSqlOptions | BreakerStoreError,
  SqlClient.SqlClient | Scope.Scope
> =>
  Effect.gen(function* () {
    const resolved = yield* Edition.fromResult(resolve(options))
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
    const pollLock = yield* Edition.makeSemaphore(1)
    let pollFailing = false

    /**
     * One statement, disconnected from its caller's interruption: a caller that gives up (the
     * breaker's 250 ms load and lease deadlines) is answered at once, while the driver's cleanup
     * (`@effect/sql-pg` cancels with `pg_cancel_backend`, up to 5 s against a database that does not
     * answer) finishes in the background.
     */
    const run = <A>(
      operation: string,
      effect: Effect.Effect<A, SqlError.SqlError>
    ): Effect.Effect<A, BreakerStoreError> =>
      Edition.disconnect(Effect.mapError(effect, (cause) => storeError(operation, cause.message, cause)))

    /** A malformed row is reported once (log and `problems`) for as long as it stays the same. */
    const report = (name: string, decoded: Decoded): Effect.Effect<void> => {
      if (decoded.problem === undefined) {
        reported.delete(name)
        return Effect.void
      }
      if (reported.get(name) === decoded.key) return Effect.void
      reported.set(name, decoded.key)
      const error = storeError("decode", `circuit "${name}" in ${t.circuits}: ${decoded.problem}; treated as Closed`)
      return Effect.andThen(Effect.logWarning(error.message), PubSub.publish(problems, error))
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
      // Disconnected, as every statement of the store (`run`): a poll interrupted (the store's scope
      // closing, a caller's deadline on `poll`) returns at once, while the driver's cancel (up to 5 s
      // against a database that does not answer) finishes in the background.
      return Edition.disconnect(Effect.forEach(chunks, select)).pipe(
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
              return Effect.andThen(
                report(name, decoded),
                Effect.forEach(group, (member) => publish(member, decoded), { discard: true })
              )
            },
            { discard: true }
          )
        }),
        Effect.andThen(
          Effect.suspend(() => {
            if (!pollFailing) return Effect.void
            pollFailing = false
            return Effect.logInfo(`breaker store ${t.circuits}: reachable again, verdicts resynchronised`)
          })
        ),
        (self) =>
          Edition.catchFailure(self, (cause) =>
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
              ).pipe(Effect.andThen(PubSub.publish(problems, error)), Effect.andThen(Effect.fail(error)))
            })
          )
      )
    })
    const poll = pollLock.withPermits(1)(pollOnce)

    /** Wakes the poll at once: however many wakes, one poll at a time and at most one waiting. */
    const wake = yield* Queue.sliding<void>(1)
    yield* Queue.take(wake).pipe(Effect.andThen(Effect.ignore(poll)), Effect.forever, Effect.forkScoped)

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

    const shared: Circuit.Shared = {
      sql,
      circuits,
      probes,
      fleet,
      channel,
      now,
      unreadable,
      select,
      run,
      report,
      publish,
      members,
      epochs,
      reported
    }
    return [
      BreakerStore.BreakerStore.of({ connect: (name) => Circuit.connect(shared, name) }),
      {
        table: t.circuits,
        poll,
        listening: Effect.sync(listener.listening),
        problems: Stream.fromPubSub(problems),
        subscribeProblems: PubSub.subscribe(problems)
      }
    ] as const
  })
