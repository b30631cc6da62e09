/**
 * A registry's ejection cap, `maxOpen`: at most so many (or such a share) of its breakers open at
 * once, as Envoy's `max_ejection_percent` for hosts, so that a bad deploy of the caller (every
 * call failing, whoever it goes to) cannot eject every upstream.
 *
 * - Open means Open or HalfOpen: a half-open breaker still refuses all but its probes. Isolated does
 *   not count: it is an operator's decision, and counting it would let a maintenance isolation
 *   silently switch off the automatic ejection of the failing rest.
 * - Only a closed breaker's own trip is capped. A verdict adopted from the fleet (a shared store)
 *   and a failed half-open probe are not: the first is the fleet's to decide (its quorum), the
 *   second opens a breaker that is counted already. Both count.
 * - A capped breaker stays Closed and keeps its window; it opens at its next call whose verdict
 *   still trips once there is room (no timer, as half-open is lazy).
 * - `{ fraction }` of the breakers held now, rounded down, but at least one (as Envoy: one host
 *   can always be ejected, or a registry of a few breakers could never open any).
 *
 * The count moves on transitions, synchronously (machine.ts `OpenGate`), so a trip is O(1) even
 * in a storm over 100,000 breakers.
 */
import * as Edition from "@circuitry/core/Edition"
import type { CappedTrip } from "../BreakerRegistry.js"
import type { Breaker } from "./breaker.js"
import type * as Machine from "./machine.js"
import * as Rules from "./rules.js"

/** The cap, resolved. @internal */
export type Limit =
  { readonly _tag: "Count"; readonly count: number } | { readonly _tag: "Fraction"; readonly fraction: number }

export type { CappedTrip }

const MAX_OPEN_RULE = "a whole number >= 1 or { fraction } with 0 < fraction <= 1"

/** Checks `maxOpen` (undefined: no cap). @internal */
export const resolveLimit = (input: unknown): Edition.Result<Limit | undefined, string> => {
  if (input === undefined) return Edition.Result.succeed(undefined)
  if (typeof input === "number") {
    return Edition.Result.mapError(
      Edition.Result.map(Rules.check("maxOpen", Rules.atLeastOne, input), (count): Limit => ({ _tag: "Count", count })),
      () => `maxOpen must be ${MAX_OPEN_RULE}, got ${Rules.show(input)}`
    )
  }
  if (Rules.isRecord(input) && Object.keys(input).length === 1 && "fraction" in input) {
    return Edition.Result.map(Rules.check("maxOpen.fraction", Rules.ratio, input["fraction"]), (fraction): Limit => ({
      _tag: "Fraction",
      fraction
    }))
  }
  return Edition.Result.fail(`maxOpen must be ${MAX_OPEN_RULE}, got ${Rules.show(input)}`)
}

/** The most breakers that may be open at once when the registry holds `held`. @internal */
export const allowed = (limit: Limit, held: number): number =>
  limit._tag === "Count"
    ? limit.count
    : // A share of what is held, rounded down (the epsilon: 0.29 * 100 is 28.999999999999996), at least one.
      Math.max(1, Math.floor(limit.fraction * held + 1e-9))

const isOpen = (tag: Machine.StateTag): number => (tag === "Open" || tag === "HalfOpen" ? 1 : 0)

/**
 * The cap of one registry: the count of its breakers open now, kept by the gates it hands them.
 *
 * @internal
 */
export class Ejection {
  /** Member breakers open (Open or HalfOpen) now. */
  open = 0

  constructor(
    /** undefined: no cap (the count is still kept, so a live config can set one). */
    public limit: Limit | undefined,
    /** How many breakers the registry holds now. */
    private readonly held: () => number,
    /** Told of each capped trip, synchronously (metrics, log, event). */
    private readonly report: (trip: CappedTrip) => void
  ) {}

  /** Makes a breaker a member: its trips are capped, its state counted. */
  join(breaker: Breaker): void {
    const m = breaker.machine
    if (m.gate !== undefined) return
    m.gate = new Gate(this, breaker.name)
    this.open += isOpen(m.tag)
  }

  /** A breaker the registry drops: no longer counted, no longer capped. */
  leave(breaker: Breaker): void {
    const m = breaker.machine
    if (!(m.gate instanceof Gate) || m.gate.ejection !== this) return
    m.gate = undefined
    m.capped = false
    this.open -= isOpen(m.tag)
  }

  mayOpen(name: string, now: number, again: boolean): boolean {
    const limit = this.limit
    if (limit === undefined) return true
    const held = this.held()
    const maxOpen = allowed(limit, held)
    if (this.open < maxOpen) return true
    if (!again) this.report({ breaker: name, at: now, open: this.open, maxOpen, breakers: held })
    return false
  }
}

/** One member's gate: an object per breaker, made only in a registry that has (or had) a cap. */
class Gate implements Machine.OpenGate {
  constructor(
    readonly ejection: Ejection,
    private readonly name: string
  ) {}
  mayOpen(now: number, again: boolean): boolean {
    return this.ejection.mayOpen(this.name, now, again)
  }
  moved(from: Machine.StateTag, to: Machine.StateTag): void {
    this.ejection.open += isOpen(to) - isOpen(from)
  }
}
