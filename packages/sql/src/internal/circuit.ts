/**
 * One circuit on SQL: the member joined to the store's announcements, and every capability of the
 * port over the store's tables, one file each (verdictChannel.ts, sharedCounts.ts, probeLeases.ts,
 * fleetMembership.ts). Each change is one atomic statement (an upsert or a conditional update), so
 * that concurrent writers in any number of processes never lose a failure, never create two rows
 * for one name and never both take the same probe lease. What the circuits of one store share (the
 * client, the tables, the members told of verdicts) is `Shared`, made by `store.ts`.
 */
import type { BreakerStore, BreakerStoreKit } from "@circuitry/breaker"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import type { SqlClient, SqlError, Statement } from "#sql"
import * as Fleet from "./fleetMembership.js"
import * as Probes from "./probeLeases.js"
import type { Decoded, Row } from "./rows.js"
import * as Counts from "./sharedCounts.js"
import * as Verdicts from "./verdictChannel.js"

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

/** @internal */
export const connect = (store: Shared, name: string): Effect.Effect<BreakerStore.SharedCircuit, never, Scope.Scope> =>
  Effect.gen(function* () {
    const pubsub = yield* Effect.acquireRelease(PubSub.unbounded<Verdict>(), PubSub.shutdown)
    const member: Member = { pubsub, last: undefined, lastAt: Number.NEGATIVE_INFINITY }
    yield* store.members.join(name, member)
    return {
      verdict: Verdicts.make(store, name, member),
      counts: Counts.make(store, name),
      probes: Probes.make(store, name),
      fleet: Fleet.make(store, name)
    }
  })
