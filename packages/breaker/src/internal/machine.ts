/**
 * The circuit's state machine: every decision the breaker makes, as plain synchronous code.
 *
 * It holds no Effect services and reads no clock: each method is given `now`, so its decisions
 * are a function of (state, event, now) and a model test can drive it directly. JavaScript runs
 * one fiber at a time, and each method runs to completion, so a method is atomic with respect to
 * every other fiber: this is why the hot path needs no lock.
 *
 * Each event returns what it did (a call's outcome: stale, counted or tripping), and every
 * transition is announced once, as it happens, to the one listener (the breaker publishes it).
 * Half-open probe permits are not counted here: the breaker holds them in a `Semaphore`.
 */
import type { Tracker } from "./tracker.js"

/** @internal */
export type StateTag = "Closed" | "Open" | "HalfOpen" | "Isolated"

/** @internal */
export interface Transition {
  readonly from: StateTag
  readonly to: StateTag
  readonly at: number
}

/** What `admit` decided for one call. */
export const RUN = 0 // closed: run and record
export const PROBE = 1 // half-open: run as a probe, if a permit is free
export const REPAIR = 2 // open: repair traffic runs unrecorded
export const REJECT = 3
/** @internal */
export type Admission = typeof RUN | typeof PROBE | typeof REPAIR | typeof REJECT

/** How a probe or a repair ended. */
export const SUCCESS = 0
export const FAILURE = 1
export const INTERRUPTED = 2
/** @internal */
export type Outcome = typeof SUCCESS | typeof FAILURE | typeof INTERRUPTED

/** What recording a closed call's outcome did. */
export const STALE = 0 // admitted before the last transition (or the circuit is not Closed): ignored
export const COUNTED = 1 // in the window; the policy does not trip (or the gate keeps the circuit closed: capped)
export const TRIPS = 2 // in the window, and the policy trips: the caller opens the circuit with `trip`
/** @internal */
export type Recorded = typeof STALE | typeof COUNTED | typeof TRIPS

/** The waits of open episodes (from `openFor`). */
export interface OpenDelays {
  /** The wait of the next open episode, in milliseconds (steps the `openFor` schedule). */
  next(now: number): number
  /** The wait `next` gave last (before any episode: the schedule's first wait). */
  last(): number
  /** Restarts the `openFor` schedule (on close and on reset). */
  reset(): void
}

/** @internal */
export interface TransitionListener {
  /**
   * Called once per transition, in order, inside the method that caused it. `until`: when an Open
   * circuit turns half-open (0 otherwise); `remote`: the transition adopts another member's verdict.
   */
  onTransition(transition: Transition, until: number, remote: boolean): void
}

/**
 * A bound on how many circuits may be open at once (a registry's `maxOpen`), asked before a closed
 * circuit opens on its own policy's verdict, and told every transition so it can count them.
 *
 * @internal
 */
export interface OpenGate {
  /**
   * Whether the circuit may open now. `again`: its trip was refused already and its policy still
   * trips (a refusal is reported once per spell, not once per call).
   */
  mayOpen(now: number, again: boolean): boolean
  /** Told of every transition (local or adopted), after it happened. */
  moved(from: StateTag, to: StateTag): void
}

/**
 * The parts of a machine. Objects with methods rather than closures: a registry may hold 100,000
 * breakers, and a closure per breaker per callback adds up.
 *
 * @internal
 */
export interface MachineConfig {
  readonly tracker: Tracker
  readonly successesToClose: number
  readonly delays: OpenDelays
  readonly listener: TransitionListener
}

/** @internal */
export class Machine {
  tag: StateTag = "Closed"
  /** Open only: epoch millis at which the circuit turns half-open. */
  until = 0
  /** Bumped on every transition: outcomes of calls admitted in an older generation are ignored. */
  generation = 0
  /** Successful probes in this half-open episode. */
  probeSuccesses = 0
  /** Open only: a repair failed in this episode, so repair traffic is rejected until it ends. */
  repairFailed = false
  /** Open only: a repair succeeded in this episode, so repairs may run side by side. */
  repairProven = false
  /** Open only: repairs of this episode in flight. */
  repairs = 0
  /** When the last transition happened: older remote verdicts are out of date. */
  lastTransitionAt = 0
  /** The registry's bound on open circuits, if it has one (set by the registry). */
  gate: OpenGate | undefined = undefined
  /** Closed only: the policy trips but the gate keeps the circuit closed (cleared by a call that does not trip). */
  capped = false

  constructor(public config: MachineConfig) {}

  /**
   * Runs on new parts from now on (a registry's live config): the tracker given already holds
   * what the old window held; the current state and episode (its `until`, its probes) stay.
   */
  reconfigure(config: MachineConfig): void {
    this.config = config
  }

  /** Open past its `until` is HalfOpen: make it so (lazily, no timer). */
  sync(now: number): void {
    if (this.tag === "Open" && now >= this.until) {
      this.transition("HalfOpen", this.until, false)
    }
  }

  /** Decides whether one call may run, and takes its repair slot. A probe's permit is the caller's to take. */
  admit(now: number, repair: boolean): Admission {
    if (!this.wouldAdmit(now, repair)) return REJECT
    switch (this.tag) {
      case "HalfOpen":
        return PROBE
      case "Open":
        this.repairs++
        return REPAIR
      default: // Closed: Isolated admits nothing
        return RUN
    }
  }

  /**
   * Repairs run while Open until one fails. Until one has succeeded, they run one at a time, so
   * that a cache that hangs costs one repair per episode, not one per caller.
   */
  private repairAllowed(repair: boolean): boolean {
    return repair && !this.repairFailed && (this.repairProven || this.repairs === 0)
  }

  /** Whether a call (`repair`: repair traffic) may run now (HalfOpen: if a permit is free). Takes nothing. */
  wouldAdmit(now: number, repair: boolean): boolean {
    this.sync(now)
    switch (this.tag) {
      case "Closed":
      case "HalfOpen":
        return true
      case "Open":
        return this.repairAllowed(repair)
      case "Isolated":
        return false
    }
  }

  /** Milliseconds left in the open episode (0 when not open). */
  retryAfter(now: number): number {
    return this.tag === "Open" ? Math.max(0, this.until - now) : 0
  }

  /**
   * The outcome of a call admitted (as RUN) in `generation`: records it and says what that did. It
   * does not open the circuit itself: a caller whose policy needs no time reads the clock only on
   * TRIPS, and calls `trip` in the same synchronous step.
   */
  record(generation: number, failure: boolean, now: number, durationMillis: number): Recorded {
    if (generation !== this.generation || this.tag !== "Closed") return STALE
    if (!this.config.tracker.record(failure, now, durationMillis)) {
      this.capped = false
      return COUNTED
    }
    return this.gateAllowsOpen(now) ? TRIPS : COUNTED
  }

  /** The policy trips: whether the registry's gate lets it open (else the circuit stays closed, capped). */
  private gateAllowsOpen(now: number): boolean {
    const gate = this.gate
    if (gate === undefined || gate.mayOpen(now, this.capped)) return true
    this.capped = true
    return false
  }

  /** Opens the circuit for the next delay of `openFor`. */
  trip(now: number): void {
    this.until = now + Math.max(0, this.config.delays.next(now))
    this.transition("Open", now, false)
  }

  /** A probe (admitted in `generation`) ended: only its own half-open episode hears it. */
  endProbe(generation: number, outcome: Outcome, now: number): void {
    if (generation !== this.generation || this.tag !== "HalfOpen" || outcome === INTERRUPTED) return
    if (outcome === FAILURE) {
      this.trip(now)
    } else if (++this.probeSuccesses >= this.config.successesToClose) {
      this.close(now, false)
    }
  }

  /** A repair (admitted while Open in `generation`) ended. */
  endRepair(generation: number, outcome: Outcome): void {
    if (generation !== this.generation || this.tag !== "Open") return
    this.repairs--
    if (outcome === FAILURE) this.repairFailed = true
    else if (outcome === SUCCESS) this.repairProven = true
  }

  /** Keeps an open circuit open at least until `until` (an upstream's Retry-After). */
  extendOpen(until: number, now: number): boolean {
    this.sync(now)
    if (this.tag !== "Open" || until <= this.until) return false
    this.until = until
    return true
  }

  isolate(now: number): void {
    this.sync(now)
    if (this.tag !== "Isolated") this.transition("Isolated", now, false)
  }

  /** Back to Closed with counts and schedule cleared. */
  reset(now: number): void {
    this.sync(now)
    this.close(now, false)
  }

  /** Adopts a verdict made (at `at`) by another member of a shared store, unless it is older than ours. */
  adopt(state: "Closed" | "Open" | "Isolated", until: number, at: number, now: number): void {
    this.sync(now)
    if (at < this.lastTransitionAt) return
    switch (state) {
      case "Closed":
        if (this.tag !== "Closed") this.close(now, true)
        return
      case "Isolated":
        if (this.tag !== "Isolated") this.transition("Isolated", now, true)
        return
      case "Open":
        if (this.tag === "Open") {
          this.until = Math.max(this.until, until)
        } else if (this.tag === "Closed" || (this.tag === "HalfOpen" && until > now)) {
          // An episode that is already over still means the fleet is probing: join it as HalfOpen
          // (through Open, so that every transition is announced) rather than letting traffic through.
          this.until = Math.max(until, now)
          this.transition("Open", now, true)
          this.sync(now)
        }
        return
    }
  }

  private close(now: number, remote: boolean): void {
    this.config.delays.reset()
    if (this.tag === "Closed") {
      // Nothing to announce: a circuit that was never open does not "close".
      this.generation++
      this.capped = false
      this.config.tracker.reset()
      return
    }
    this.transition("Closed", now, remote)
  }

  private transition(to: StateTag, at: number, remote: boolean): void {
    const from = this.tag
    this.tag = to
    this.lastTransitionAt = at
    this.generation++
    this.probeSuccesses = 0
    this.repairFailed = false
    this.repairProven = false
    this.repairs = 0
    this.capped = false
    this.config.tracker.reset()
    this.gate?.moved(from, to)
    this.config.listener.onTransition({ from, to, at }, to === "Open" ? this.until : 0, remote)
  }
}
