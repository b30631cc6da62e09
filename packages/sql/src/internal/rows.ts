/**
 * A circuit's row as the store reads it back, with the database's now read in the same statement:
 * the verdict it holds, as durations from that now (through the breaker's `BreakerStoreKit`, the
 * one reading every backend shares), or the problem that makes it not one of ours.
 */
import { BreakerStore, BreakerStoreKit } from "@circuitry/breaker"

/** @internal */
export interface Row {
  readonly name: string
  readonly state: unknown
  readonly open_until: unknown
  readonly verdict_at: unknown
  readonly origin: unknown
  readonly verdict_by: unknown
  /** The database's clock when the row was read (epoch milliseconds). */
  readonly now: unknown
}

/** @internal */
export const NONE = "none"

/**
 * What a member was last told, compared as one string: a change of any field is a new verdict.
 *
 * @internal
 */
export const keyOf = (state: unknown, until: unknown, at: unknown, origin: unknown, by: unknown): string =>
  state === null || state === undefined ? NONE : JSON.stringify([state, String(until), String(at), origin, by ?? null])

/** @internal */
export interface Decoded {
  readonly key: string
  /** Undefined when the row holds counts but no verdict yet. */
  readonly verdict: BreakerStore.Verdict | undefined
  /** Set when the row is not one of ours: the verdict is then Closed. */
  readonly problem: string | undefined
  /** When the verdict was made, on the database's clock (the order of verdicts); undefined without one. */
  readonly madeAt: number | undefined
}

/** @internal */
export const nothing: Decoded = { key: NONE, verdict: undefined, problem: undefined, madeAt: undefined }

/** @internal */
export const decode = (row: Row): Decoded => {
  const key = keyOf(row.state, row.open_until, row.verdict_at, row.origin, row.verdict_by)
  if (key === NONE) return nothing
  const now = BreakerStoreKit.millisOf(row.now) ?? 0
  const stored = BreakerStoreKit.storedOf({
    state: row.state,
    until: row.open_until,
    at: row.verdict_at,
    origin: row.origin,
    by: row.verdict_by
  })
  if (stored !== undefined) {
    return { key, verdict: BreakerStoreKit.toVerdict(stored, now), problem: undefined, madeAt: stored.at }
  }
  const problem = !BreakerStoreKit.isStoredState(row.state)
    ? `state ${JSON.stringify(row.state)} is not one of "Closed", "Open", "Isolated"`
    : `open_until ${JSON.stringify(String(row.open_until))} or verdict_at ${JSON.stringify(String(row.verdict_at))} is not epoch milliseconds`
  // Read as a Closed verdict made now: a row spoilt under a breaker's feet is news as of this read,
  // not older than the verdict it spoilt (which its own maker would then ignore).
  return { key, verdict: { state: "Closed", remainingMillis: 0, ageMillis: 0, origin: "" }, problem, madeAt: undefined }
}

/** @internal */
export const storeError = (operation: string, message: string, cause?: unknown): BreakerStore.BreakerStoreError =>
  new BreakerStore.BreakerStoreError(
    cause === undefined ? { store: "sql", operation, message } : { store: "sql", operation, message, cause }
  )
