/**
 * A circuit's row as the store reads it back: the verdict it holds (through the breaker's
 * `BreakerStoreKit.verdictOf`, the one reading every backend shares), or the problem that makes it
 * not one of ours.
 */
import { BreakerStore, BreakerStoreKit } from "@circuitry/breaker"

/** @internal */
export interface Row {
  readonly name: string
  readonly state: unknown
  readonly open_until: unknown
  readonly verdict_at: unknown
  readonly origin: unknown
}

/** @internal */
export const NONE = "none"

/**
 * What a member was last told, compared as one string: a change of any field is a new verdict.
 *
 * @internal
 */
export const keyOf = (state: unknown, until: unknown, at: unknown, origin: unknown): string =>
  state === null || state === undefined ? NONE : JSON.stringify([state, String(until), String(at), origin])

/** @internal */
export interface Decoded {
  readonly key: string
  /** Undefined when the row holds counts but no verdict yet. */
  readonly verdict: BreakerStore.Verdict | undefined
  /** Set when the row is not one of ours: the verdict is then Closed. */
  readonly problem: string | undefined
}

/** @internal */
export const nothing: Decoded = { key: NONE, verdict: undefined, problem: undefined }

/** @internal */
export const decode = (row: Row): Decoded => {
  const key = keyOf(row.state, row.open_until, row.verdict_at, row.origin)
  if (key === NONE) return nothing
  const verdict = BreakerStoreKit.verdictOf({
    state: row.state,
    until: row.open_until,
    at: row.verdict_at,
    origin: row.origin
  })
  if (verdict !== undefined) return { key, verdict, problem: undefined }
  const problem = !BreakerStoreKit.isStoredState(row.state)
    ? `state ${JSON.stringify(row.state)} is not one of "Closed", "Open", "Isolated"`
    : `open_until ${JSON.stringify(String(row.open_until))} or verdict_at ${JSON.stringify(String(row.verdict_at))} is not epoch milliseconds`
  const at = BreakerStoreKit.millisOf(row.verdict_at) ?? 0
  return { key, verdict: { state: "Closed", until: 0, at, origin: "" }, problem }
}

/** @internal */
export const saved = (verdict: BreakerStore.Verdict): Decoded => ({
  key: keyOf(verdict.state, verdict.until, verdict.at, verdict.origin),
  verdict,
  problem: undefined
})

/** @internal */
export const storeError = (operation: string, message: string, cause?: unknown): BreakerStore.BreakerStoreError =>
  new BreakerStore.BreakerStoreError(
    cause === undefined ? { store: "sql", operation, message } : { store: "sql", operation, message, cause }
  )
