import { type ServiceOf, unwrapScoped } from "@circuitry/testkit"
import { Effect, Layer } from "effect"
import { Corruptions, storeSuite } from "@circuitry/testkit/conformance/breakerStore"
import { backends, type Db } from "./backends.js"

/** Rows the store cannot read, written by hand under `name`, as each database can hold them. */
const corruptions = (db: Db): ServiceOf<typeof Corruptions> => {
  const t = db.sql(db.table)
  const write = (name: string, state: string | null, until: unknown, at: unknown) =>
    db.sql`INSERT INTO ${t} (name, state, open_until, verdict_at, origin, updated_at)
      VALUES (${name}, ${state}, ${db.sql.literal(String(until))}, ${db.sql.literal(String(at))}, 'x', 1)`.pipe(
      Effect.orDie,
      Effect.asVoid
    )
  const foreign: ServiceOf<typeof Corruptions>[number] = [
    "a foreign state with a far-future time",
    (name) => write(name, "half_open", 1, 9e15)
  ]
  if (db.backend === "sqlite") {
    return [["times as text", (name) => write(name, "Open", "'tomorrow'", "'later'")], foreign]
  }
  // An old schema that allowed NULL times.
  const nullable = db.sql`ALTER TABLE ${t} ALTER COLUMN verdict_at DROP NOT NULL, ALTER COLUMN open_until DROP NOT NULL`
  return [
    [
      "NULL verdict_at and open_until (an old schema)",
      (name) => Effect.andThen(Effect.orDie(nullable), write(name, "Open", "NULL", "NULL"))
    ],
    [
      "NULL verdict_at (an old schema)",
      (name) => Effect.andThen(Effect.orDie(nullable), write(name, "Closed", 0, "NULL"))
    ],
    foreign
  ]
}

// The breaker-store conformance suite, against SQLite (a temporary file) and PostgreSQL (a schema
// of its own), each removed afterwards.
storeSuite(
  backends.map(
    ([name, db]) =>
      [
        name,
        unwrapScoped(Effect.map(db, (db) => Layer.merge(db.store(), Layer.succeed(Corruptions, corruptions(db))))),
        { corruptible: true }
      ] as const
  )
)
