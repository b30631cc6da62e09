/**
 * Verdicts pushed with PostgreSQL's LISTEN/NOTIFY. A save announces itself in its own statement
 * (`pg_notify` in the upsert's `RETURNING`: only an applied save is announced, and only when it
 * commits), on a channel derived from the table; every store listens on it. The payload is the
 * circuit's name and the verdict just stored, as the row holds it (dated on the database's clock)
 * with the database's now of that statement, so that a member reads it as durations, exactly as
 * it reads a row: announcements arrive in commit order, so the last one heard for a circuit is its
 * stored verdict, and members adopt it without reading the row.
 *
 * A listen connection can die without a word: `@effect/sql-pg` 0.53's swallows its errors (a
 * killed backend or a cut network ends no stream), and no driver hears a blackholed network. So
 * the listener checks its own connection with a NOTIFY to itself every `checkInterval`; two pings
 * unanswered, or a ping that cannot be sent, and the connection is lost: the store polls at its
 * fast interval and the listener subscribes again on a fresh connection. The poll stays the
 * fallback, and the only path for SQLite.
 *
 * The pings, their deadlines and the pause before subscribing again are on the live clock, not
 * the application's: they time a real connection.
 *
 * A member listens on the verdict channel and on its session's ping channel over one connection
 * of its own (`#sql`'s `listen`, on both majors), outside the application's pool, so that an echo
 * proves the very connection verdicts come by. That connection is the listen stream's: it is
 * closed when the stream is interrupted, in the background, so that a database that does not
 * answer never holds the store's release.
 */
import { BreakerStoreKit } from "@circuitry/breaker"
import * as Edition from "@circuitry/core/Edition"
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { createHash } from "node:crypto"
import { listen as listenTo, type SqlClient, type SqlError, type Statement } from "#sql"
import type { Row } from "./rows.js"

/** PostgreSQL channel names are identifiers: at most 63 bytes, a member's ping channel included. */
const CHANNEL_BYTES = 40

/**
 * The channel of a table's verdicts: `circuitry:<table>`, or a digest of the table's name when
 * that would be too long. Every member of a table derives the same one.
 *
 * @internal
 */
export const channelOf = (table: string): string => {
  const plain = `circuitry:${table}`
  return Buffer.byteLength(plain) <= CHANNEL_BYTES
    ? plain
    : `circuitry:${createHash("sha256").update(table).digest("hex").slice(0, 24)}`
}

/** NOTIFY payloads are at most 8000 bytes: a longer one is announced as "read every circuit". */
const PAYLOAD_BYTES = 7_900
const EVERY = "*"
const SAVED = "v"
const PING = "p"
const SUBSCRIBE_PING = Duration.millis(100)

/**
 * What an announcement says: the row just stored, read as a row (`rows.ts`), with the database's
 * now of the save.
 *
 * @internal
 */
export interface Saved {
  readonly name: string
  readonly row: Row
}

/**
 * What an announcement says; `undefined` for "read every circuit" (or a payload that is not ours).
 * The payload is `v[<name>,<state>,<open_until>,<verdict_at>,<origin>,<verdict_by>,<now>]`.
 */
const savedOf = (payload: string): Saved | undefined => {
  try {
    const [name, state, until, at, origin, by, now] = JSON.parse(payload.slice(SAVED.length)) as ReadonlyArray<unknown>
    if (typeof name !== "string" || BreakerStoreKit.storedOf({ state, until, at, origin, by }) === undefined) {
      return undefined
    }
    return { name, row: { name, state, open_until: until, verdict_at: at, origin, verdict_by: by, now } }
  } catch {
    return undefined
  }
}

/**
 * The extra `RETURNING` column of the save that announces it: on PostgreSQL only (other dialects
 * have no NOTIFY), whether or not this store listens, since other members may. The payload is
 * built by the statement from the row it stored and its own now (`now`, the save's clock
 * expression), so it says what the database dated; one too long for NOTIFY is "read every circuit".
 *
 * @internal
 */
export const announce = (sql: SqlClient.SqlClient, channel: string, now: Statement.Fragment): Statement.Fragment =>
  sql.onDialectOrElse({
    pg: () => {
      const payload = sql`${SAVED} || json_build_array(name, state, open_until, verdict_at, origin, verdict_by, ${now})::text`
      return sql`, pg_notify(${channel}, CASE WHEN octet_length(${payload}) <= ${PAYLOAD_BYTES} THEN ${payload} ELSE ${EVERY} END)`
    },
    orElse: () => sql.literal("")
  })

/**
 * `@effect/sql-pg`'s tag, by its key, so that this module never loads that optional peer. Its layers
 * provide one client under both tags.
 */
class PgClientTag extends Edition.KeyClass<PgClientTag, PgClient.PgClient>()("@effect/sql-pg/PgClient") {}

/** The store's client as a `PgClient`, when it is one. */
const pgOf = (sql: SqlClient.SqlClient): Effect.Effect<Option.Option<PgClient.PgClient>> =>
  Effect.map(
    Effect.serviceOption(PgClientTag),
    Option.filter((pg) => pg === sql)
  )

/** @internal */
export interface Listener {
  /** True while the listen connection answers its pings: verdicts arrive as they are saved. */
  readonly listening: () => boolean
}

/** @internal */
export const disabled: Listener = { listening: () => false }

class Lost {
  constructor(readonly reason: string) {}
}

/**
 * Listens on `channel` for as long as the scope lasts, when `sql` is a `PgClient`; otherwise it
 * does nothing and is never `listening`.
 *
 * @internal
 */
export const listen = (options: {
  /** The application's client, as given (the `PgClient` in the context, when it is that one). */
  readonly sql: SqlClient.SqlClient
  readonly channel: string
  /** What the logs call the store. */
  readonly table: string
  /** The store's poll interval: pings while subscribing are no further apart (nor 100 ms). */
  readonly fastInterval: Duration.Duration
  /** Pings while listening. */
  readonly checkInterval: Duration.Duration
  /** A verdict was saved (`undefined`: any circuit's may have been). */
  readonly onSaved: (saved: Saved | undefined) => Effect.Effect<void>
  /** The connection answers; `again` after it was lost: the members must be told afresh. */
  readonly onListening: (again: boolean) => Effect.Effect<void>
  /** The connection was lost: verdicts may have been missed. */
  readonly onLost: Effect.Effect<void>
}): Effect.Effect<Listener, never, Scope.Scope> =>
  Effect.gen(function* () {
    const found = yield* pgOf(options.sql)
    if (Option.isNone(found)) return disabled
    const pg = found.value
    // Not `pg.notify`: in @effect/sql-pg 0.53 it sends `NOTIFY channel, $1`, which PostgreSQL
    // rejects (NOTIFY takes no parameters).
    const notify = (to: string, payload: string) => Effect.asVoid(options.sql`SELECT pg_notify(${to}, ${payload})`)
    const { channel, checkInterval, fastInterval, table } = options
    // Subscribing may take a few pings (one sent before LISTEN ran is not heard), every 100 ms at
    // most: allow two check intervals' worth before starting again on a fresh connection.
    const subscribeInterval = Duration.min(fastInterval, SUBSCRIBE_PING)
    const patience = Math.max(
      2,
      Math.ceil((2 * Duration.toMillis(checkInterval)) / Duration.toMillis(subscribeInterval))
    )
    let listening = false
    let everListened = false
    /** The previous session's stream, interrupted in the background (a lost connection may close slowly). */
    let previous: Edition.Fiber<unknown, unknown> | undefined

    const session = Effect.gen(function* () {
      if (previous !== undefined && Edition.pollUnsafe(previous) === undefined) {
        return yield* Effect.fail(new Lost("the previous listen connection is still closing"))
      }
      // A token per session: a late echo of an earlier session's ping proves nothing about this one.
      const token = BreakerStoreKit.makeToken().replaceAll("-", "").slice(0, 16)
      const pingChannel = `${channel}:${token}`
      const mine = `${PING}${token}:`
      let sent = 0
      let echoed = 0
      const heard = (n: number): Effect.Effect<void> => {
        echoed = Math.max(echoed, n)
        if (listening) return Effect.void
        listening = true
        const again = everListened
        everListened = true
        return Effect.andThen(
          again ? Effect.logInfo(`breaker store ${table}: listening for verdicts again`) : Effect.void,
          options.onListening(again)
        )
      }
      const received = (message: string): Effect.Effect<void> => {
        if (message.startsWith(mine)) return heard(Number(message.slice(mine.length)))
        // Another member's ping: not for us.
        if (message.startsWith(PING)) return Effect.void
        return options.onSaved(message.startsWith(SAVED) ? savedOf(message) : undefined)
      }
      // The echoes are read as they come; verdicts wait their turn in a queue of their own, so that
      // a verdict waiting for the poll's lock never delays the echo of a ping.
      const verdicts = yield* Queue.unbounded<string>()
      const consumers = Effect.raceFirst(
        Stream.runForEach(listenTo(pg, [channel, pingChannel]), ([from, message]) =>
          from === pingChannel ? received(mine + message) : Queue.offer(verdicts, message)
        ),
        Effect.forever(Effect.flatMap(Queue.take(verdicts), received))
      )
      // Detached, interrupted in the background: closing a lost connection must hold neither the
      // listener nor the store's scope when it closes.
      const stream = yield* Edition.forkDetach(consumers)
      previous = stream

      // Until one is heard, pings go to the verdict channel, so that an echo proves that very
      // subscription; then to this session's own channel, which no other member hears.
      const ping = Effect.gen(function* () {
        let misses = 0
        for (;;) {
          if (sent > 0) yield* Effect.sleep(listening ? checkInterval : subscribeInterval)
          misses = echoed < sent ? misses + 1 : 0
          if (misses >= (listening ? 2 : patience)) {
            return yield* Effect.fail(new Lost(listening ? "two pings unanswered" : "no ping answered"))
          }
          sent++
          const send = listening ? notify(pingChannel, String(sent)) : notify(channel, mine + sent)
          const answered = yield* Edition.disconnect(send).pipe(
            Effect.timeoutOption(checkInterval),
            Effect.mapError((error: SqlError.SqlError) => new Lost(error.message))
          )
          if (Option.isNone(answered))
            return yield* Effect.fail(new Lost("a ping could not be sent within the check interval"))
        }
      })
      const watched = Fiber.join(stream).pipe(
        (self) => Edition.catchFailure(self, (error) => Effect.fail(new Lost(error.message))),
        Effect.andThen(Effect.fail(new Lost("the listen stream ended")))
      )
      return yield* Effect.raceFirst(ping, watched).pipe(
        Effect.ensuring(Effect.asVoid(Edition.forkDetach(Fiber.interrupt(stream))))
      )
    })

    const lost = (error: Lost): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (!listening) return Effect.logDebug(`breaker store ${table}: not listening for verdicts (${error.reason})`)
        listening = false
        return Effect.andThen(
          Effect.logWarning(
            `breaker store ${table}: lost the LISTEN connection (${error.reason}); polling every ${Duration.format(fastInterval)} until it is back`
          ),
          options.onLost
        )
      })

    yield* session.pipe(
      // Whatever ends a session (a defect too: a failed UNLISTEN dies) is a lost connection, but
      // the store's scope closing.
      (self) =>
        Edition.catchCause(self, (cause) =>
          Edition.hasInterruptsOnly(cause)
            ? Effect.failCause(cause)
            : lost(Option.getOrElse(Edition.findError(cause), () => new Lost(Cause.pretty(cause))))
        ),
      Effect.andThen(Effect.sleep(checkInterval)),
      Effect.forever,
      // Real time: the pings time a real connection, whose echoes come in real time. On the
      // application's Clock (a TestClock, moved 10 s at once), a ping's deadline would pass before
      // its echo could arrive: a LISTEN lost for nothing, after which every member is told the
      // stored verdict afresh, re-dated to its Clock's new now (an Open circuit kept Open).
      Edition.withLiveClock,
      Effect.forkScoped
    )
    return { listening: () => listening }
  })
