/**
 * Parts for writing a `BreakerStore` backend, shared by the memory, Redis and SQL stores so that
 * each keeps one copy: the per-name registry of connected members and the reading of a stored
 * verdict (for the verdict channel), and the lease encoding (for probe leases). A new backend
 * (another database, another broker) offers the verdict channel and what it can of the other
 * capabilities (`BreakerStore.SharedCircuit`), starts here, and proves itself against the
 * conformance suite of each capability it offers (`editions/testkit/conformance/breakerStore`).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { Verdict } from "./BreakerStore.js"

/**
 * The breakers connected to one store, by circuit name: where a store hands the verdicts it
 * learns (by subscription or by polling).
 *
 * @since 0.1.0
 * @category models
 */
export interface Members<M> {
  /** Adds `member` under `name` for as long as the scope lasts. */
  readonly join: (name: string, member: M) => Effect.Effect<void, never, Scope.Scope>
  /** The members of `name` now (empty when there are none). */
  readonly of: (name: string) => ReadonlySet<M>
  /** Every name with at least one member. */
  readonly names: () => ReadonlyArray<string>
  /** Every member of every name. */
  readonly all: () => Iterable<M>
}

const none: ReadonlySet<never> = new Set()

/**
 * Makes an empty registry. `onEmpty` runs when the last member of a name leaves (for a store
 * that keeps more per name, to forget it too).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { BreakerStoreKit } from "@circuitry/breaker"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const members = BreakerStoreKit.makeMembers<{ readonly id: number }>()
 *   yield* members.join("payments", { id: 1 })
 *   return members.of("payments").size // 1, until the scope closes
 * }).pipe(Effect.scoped)
 * ```
 */
export const makeMembers = <M>(options?: { readonly onEmpty?: ((name: string) => void) | undefined }): Members<M> => {
  const byName = new Map<string, Set<M>>()
  return {
    join: (name, member) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          let group = byName.get(name)
          if (group === undefined) byName.set(name, (group = new Set()))
          group.add(member)
        }),
        () =>
          Effect.sync(() => {
            const group = byName.get(name)
            if (group === undefined) return
            group.delete(member)
            if (group.size > 0) return
            byName.delete(name)
            options?.onEmpty?.(name)
          })
      ),
    of: (name) => byName.get(name) ?? none,
    names: () => Array.from(byName.keys()),
    all: function* () {
      for (const group of byName.values()) yield* group
    }
  }
}

/**
 * A half-open probe lease as a store hands it out: the permit slot it holds and the holder's
 * token (unique across processes, so only the holder releases it).
 *
 * @since 0.1.0
 * @category models
 */
export interface Lease {
  readonly slot: number
  readonly token: string
}

/**
 * A new lease token, unique across processes.
 *
 * @since 0.1.0
 * @category leases
 */
export const makeToken = (): string => globalThis.crypto.randomUUID()

/**
 * The string `acquireProbe` returns for a lease: `"<slot>:<token>"`.
 *
 * @since 0.1.0
 * @category leases
 */
export const encodeLease = (lease: Lease): string => `${lease.slot}:${lease.token}`

/**
 * Reads a lease string back; `None` when it is not one `encodeLease` made (releasing it is then a
 * no-op).
 *
 * @since 0.1.0
 * @category leases
 * @example
 * ```ts
 * import { BreakerStoreKit } from "@circuitry/breaker"
 *
 * const lease = BreakerStoreKit.encodeLease({ slot: 0, token: BreakerStoreKit.makeToken() })
 * BreakerStoreKit.decodeLease(lease) // Option.some({ slot: 0, token: ... })
 * BreakerStoreKit.decodeLease("nonsense") // Option.none()
 * ```
 */
export const decodeLease = (lease: string): Option.Option<Lease> => {
  const colon = lease.indexOf(":")
  if (colon < 1 || colon === lease.length - 1) return Option.none()
  const digits = lease.slice(0, colon)
  if (!/^\d+$/.test(digits)) return Option.none()
  const slot = Number(digits)
  return Number.isSafeInteger(slot) ? Option.some({ slot, token: lease.slice(colon + 1) }) : Option.none()
}

/**
 * Epoch milliseconds as a store gives them back: a number, a bigint (a driver's BIGINT) or a
 * string of decimal digits (Redis replies, PostgreSQL BIGINT). `undefined` for anything else.
 *
 * @since 0.1.0
 * @category verdicts
 */
export const millisOf = (value: unknown): number | undefined => {
  const n =
    typeof value === "number"
      ? value
      : typeof value === "bigint"
        ? Number(value)
        : typeof value === "string" && /^-?\d+(\.\d+)?$/.test(value)
          ? Number(value)
          : Number.NaN
  return Number.isFinite(n) ? n : undefined
}

/**
 * Whether `state` is one a store keeps (`HalfOpen` never is: it is derived from `Open` and the
 * clock).
 *
 * @since 0.1.0
 * @category verdicts
 */
export const isStoredState = (state: unknown): state is Verdict["state"] =>
  state === "Closed" || state === "Open" || state === "Isolated"

/**
 * A verdict as a store keeps it: on the store's own clock (epoch milliseconds), never a member's.
 *
 * @since 0.1.0
 * @category verdicts
 */
export interface StoredVerdict {
  readonly state: Verdict["state"]
  /** Open: when the circuit turns half-open, on the store's clock; otherwise 0. */
  readonly until: number
  /** When the verdict was made, on the store's clock: the newest one wins. */
  readonly at: number
  readonly origin: string
  readonly by?: string
}

const nonNegative = (n: number): number => (Number.isFinite(n) && n > 0 ? n : 0)

/**
 * A verdict handed to `save`, dated on the store's clock as of `now` (the store's): made at
 * `now - ageMillis`, open until `now + remainingMillis`. A negative or non-finite duration counts as 0.
 *
 * @since 0.1.0
 * @category verdicts
 * @example
 * ```ts
 * import { BreakerStoreKit } from "@circuitry/breaker"
 *
 * BreakerStoreKit.toStored({ state: "Open", remainingMillis: 30_000, ageMillis: 5, origin: "a" }, 1_000_000)
 * // { state: "Open", until: 1_030_000, at: 999_995, origin: "a" }
 * ```
 */
export const toStored = (verdict: Verdict, now: number): StoredVerdict => {
  const stored = {
    state: verdict.state,
    until: verdict.state === "Open" ? now + nonNegative(verdict.remainingMillis) : 0,
    at: now - nonNegative(verdict.ageMillis),
    origin: verdict.origin
  }
  return verdict.by === undefined ? stored : { ...stored, by: verdict.by }
}

/**
 * A stored verdict as the store hands it out at `now` (the store's clock): durations counted from
 * `now` (an open time that is over is 0 left; a verdict is never younger than 0).
 *
 * @since 0.1.0
 * @category verdicts
 */
export const toVerdict = (stored: StoredVerdict, now: number): Verdict => {
  const verdict = {
    state: stored.state,
    remainingMillis: stored.state === "Open" ? Math.max(0, stored.until - now) : 0,
    ageMillis: Math.max(0, now - stored.at),
    origin: stored.origin
  }
  return stored.by === undefined ? verdict : { ...verdict, by: stored.by }
}

/**
 * A stored verdict out of its stored fields; `undefined` when they are not one (a state that is
 * not stored, a time that is not epoch milliseconds, an origin that is not a string). `until` of a
 * verdict that is not `Open` reads as 0, whatever was stored; a `by` that is not a non-empty string
 * reads as absent (rows written before it existed have none).
 *
 * @since 0.1.0
 * @category verdicts
 * @example
 * ```ts
 * import { BreakerStoreKit } from "@circuitry/breaker"
 *
 * BreakerStoreKit.storedOf({ state: "Open", until: "5000", at: "1000", origin: "a", by: null })
 * // { state: "Open", until: 5000, at: 1000, origin: "a" }
 * ```
 */
export const storedOf = (fields: {
  readonly state: unknown
  readonly until: unknown
  readonly at: unknown
  readonly origin: unknown
  readonly by?: unknown
}): StoredVerdict | undefined => {
  const until = millisOf(fields.until)
  const at = millisOf(fields.at)
  if (!isStoredState(fields.state) || until === undefined || at === undefined) return undefined
  if (typeof fields.origin !== "string") return undefined
  const stored = { state: fields.state, until: fields.state === "Open" ? until : 0, at, origin: fields.origin }
  return typeof fields.by === "string" && fields.by !== "" ? { ...stored, by: fields.by } : stored
}

/**
 * A verdict out of its stored fields, as handed out at `now` (the store's clock, read in the same
 * step as the fields): `storedOf`, then `toVerdict`. `undefined` when the fields are not a verdict
 * or `now` is not epoch milliseconds.
 *
 * @since 0.1.0
 * @category verdicts
 * @example
 * ```ts
 * import { BreakerStoreKit } from "@circuitry/breaker"
 *
 * BreakerStoreKit.verdictOf({ state: "Open", until: "5000", at: "1000", origin: "a" }, "2000")
 * // { state: "Open", remainingMillis: 3000, ageMillis: 1000, origin: "a" }
 * ```
 */
export const verdictOf = (
  fields: {
    readonly state: unknown
    readonly until: unknown
    readonly at: unknown
    readonly origin: unknown
    readonly by?: unknown
  },
  now: unknown
): Verdict | undefined => {
  const stored = storedOf(fields)
  const millis = millisOf(now)
  return stored === undefined || millis === undefined ? undefined : toVerdict(stored, millis)
}
