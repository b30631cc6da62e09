/**
 * The schema of the breaker tables and the migration that creates them. Written once for both
 * dialects: only types and statements that SQLite and PostgreSQL read the same way.
 */
import * as Effect from "effect/Effect"
import { Migrator, SqlClient, type SqlError } from "#sql"

/** @internal */
export interface Tables {
  /** One row per circuit name. */
  readonly circuits: string
  /** One row per (circuit, half-open probe slot): the fleet-wide probe leases. */
  readonly probes: string
  /** One row per (circuit, member): the member's last heartbeat and latest trip (`sharing.quorum`). */
  readonly members: string
  /** The migrations already run on these tables (kept apart from the application's own). */
  readonly migrations: string
}

/** @internal */
export const tables = (table: string): Tables => ({
  circuits: table,
  probes: `${table}_probes`,
  members: `${table}_members`,
  migrations: `${table}_migrations`
})

/**
 * `state` is the stored verdict ("Closed", "Open" or "Isolated"), NULL until one is saved: a row
 * can be created by failure counts alone. Every time is BIGINT epoch milliseconds. A verdict's
 * times (`open_until`, `verdict_at`) are on the database's clock: members send durations and the
 * database dates them, so members whose clocks disagree agree on them. Count times
 * (`last_failure_at`, `updated_at`) are the writer's Effect Clock.
 */
const createCircuits = (sql: SqlClient.SqlClient, t: Tables) =>
  sql`CREATE TABLE IF NOT EXISTS ${sql(t.circuits)} (
  name TEXT NOT NULL PRIMARY KEY,
  state TEXT,
  open_until BIGINT NOT NULL DEFAULT 0,
  verdict_at BIGINT NOT NULL DEFAULT 0,
  origin TEXT NOT NULL DEFAULT '',
  consecutive_failures BIGINT NOT NULL DEFAULT 0,
  last_failure_at BIGINT,
  updated_at BIGINT NOT NULL
)`

/** Schema 3: who asked for the verdict (an operator's isolate, reset or extension), NULL if no one. */
const addVerdictBy = (sql: SqlClient.SqlClient, t: Tables) =>
  sql`ALTER TABLE ${sql(t.circuits)} ADD COLUMN verdict_by TEXT`

const createProbes = (sql: SqlClient.SqlClient, t: Tables) =>
  sql`CREATE TABLE IF NOT EXISTS ${sql(t.probes)} (
  name TEXT NOT NULL,
  slot INTEGER NOT NULL,
  token TEXT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (name, slot)
)`

/**
 * Added in migration 2: a member's times are NULL until it beats (or trips), on the members'
 * Effect Clocks. A trip is compared with `verdict_at` (the database's clock) by putting the
 * verdict on the caller's clock: its age by the database's clock, before the caller's now.
 */
const createMembers = (sql: SqlClient.SqlClient, t: Tables) =>
  sql`CREATE TABLE IF NOT EXISTS ${sql(t.members)} (
  name TEXT NOT NULL,
  member TEXT NOT NULL,
  beat_at BIGINT,
  trip_at BIGINT,
  PRIMARY KEY (name, member)
)`

/**
 * Runs the migrations of the breaker tables named `table` (idempotent; safe to run from several
 * processes at once: a migrator that loses the race to another is retried).
 *
 * @internal
 */
export const migrate = (
  table: string
): Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError.SqlError,
  SqlClient.SqlClient
> => {
  const t = tables(table)
  const loader = Migrator.fromRecord({
    "1_create_circuits": Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.andThen(createCircuits(sql, t), createProbes(sql, t))
    ),
    "2_create_members": Effect.flatMap(SqlClient.SqlClient, (sql) => createMembers(sql, t)),
    "3_verdict_by": Effect.flatMap(SqlClient.SqlClient, (sql) => addVerdictBy(sql, t))
  })
  return Effect.flatMap(SqlClient.SqlClient, (client) =>
    Migrator.make({})({ loader, table: t.migrations }).pipe(
      Effect.provideService(SqlClient.SqlClient, client.withoutTransforms()),
      // Lost races (two processes creating the bookkeeping table at once) end as soon as the
      // winner commits, so an immediate retry is enough; no Clock is involved.
      Effect.retry({ times: 5 })
    )
  )
}
