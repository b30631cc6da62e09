/**
 * The breaker: one call goes admit -> run -> record -> publish.
 *
 * - admit: the state (a `Ref`, read with `Ref.getUnsafe` on Effect 4: `Runtime.readState`) says
 *   Closed, and the call runs; in any other state the machine (machine.ts) decides,
 *   synchronously, and a half-open probe also takes one of the breaker's probe permits (and,
 *   with a shared store, the fleet's lease: probes.ts, sharing.ts).
 * - run: the effect, with its outcome judged by `isFailure`.
 * - record: the outcome goes back into the machine, which says what it did (counted, tripped).
 * - publish: each transition the machine announces goes to metrics, subscribers and the store's outbox.
 *
 * Options are resolved in options.ts, metrics live in metrics.ts, repair traffic in repair.ts,
 * probes in probes.ts, deadlines in timeout.ts, the store link in sharing.ts; make, layer and
 * withBreaker in circuitBreaker.ts. Over 350 lines: the four steps are read together.
 */
import * as Edition from "@circuitry/core/Edition"
import * as Runtime from "#runtime"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as CB from "../CircuitBreaker.js"
import { type BreakerOpenError, rejection } from "./errors.js"
import * as Machine from "./machine.js"
import { BreakerMetrics } from "./metrics.js"
import type * as Options from "./options.js"
import type { Outbox } from "./outbox.js"
import { NO_PERMIT, Probes, READMIT } from "./probes.js"
import { isRepair, repairedEffect, repairing } from "./repair.js"
import * as Sharing from "./sharing.js"
import * as Timeout from "./timeout.js"

// The public types live in ../CircuitBreaker.ts, with their documentation; this module implements them.
type CircuitBreaker = CB.CircuitBreaker
type Snapshot = CB.Snapshot
type State = CB.State
type Transition = CB.Transition

/** @internal */
export const State = Data.taggedEnum<State>()

/** @internal */
export const TypeId: CB.TypeId = Symbol.for("@circuitry/breaker/CircuitBreaker") as CB.TypeId

/** @internal */
export const isCircuitBreaker = (u: unknown): u is CircuitBreaker => typeof u === "object" && u !== null && TypeId in u

const toState = (m: Machine.Machine): State => {
  switch (m.tag) {
    case "Closed":
      return State.Closed()
    case "Open":
      return State.Open({ until: m.until })
    case "HalfOpen":
      return State.HalfOpen()
    case "Isolated":
      return State.Isolated()
  }
}

/** @internal */
export class Breaker implements CircuitBreaker, Machine.TransitionListener, Machine.PhaseCell {
  declare readonly [TypeId]: CB.TypeId
  readonly name: string
  readonly machine: Machine.Machine
  /** The circuit's state: the machine reads and replaces it through this breaker (`PhaseCell`). */
  private readonly phaseRef: Runtime.StateRef<Machine.Phase> = Runtime.stateRef(Machine.INITIAL)
  private hub: PubSub.PubSub<Transition> | undefined
  /** Its series; the store link's health sets one of them (circuitBreaker.ts). */
  readonly metrics: BreakerMetrics
  // Not readonly: a registry's live config replaces them (`reconfigure`).
  private isFailure: (cause: Cause.Cause<unknown>) => boolean
  private permits: number
  private probeLeaseMillis: number
  private probeTimeoutMillis: number | undefined
  /** Slower probes fail (the policy's slow-call rule). */
  private slowMillis: number | undefined
  private delays: Machine.OpenDelays
  /** The `timeout` option, put around every call. */
  private limit: (<A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>) | undefined
  private readonly link: Sharing.Link | undefined
  private readonly outbox: Outbox | undefined
  /** Made on the first probe: a breaker that never opens never carries it. */
  private probes: Probes | undefined

  constructor(resolved: Options.Resolved, delays: Machine.OpenDelays, link: Sharing.Link | undefined) {
    this.name = resolved.name
    this.metrics = new BreakerMetrics(resolved.name)
    this.isFailure = resolved.isFailure
    this.permits = resolved.permits
    this.probeLeaseMillis = resolved.probeLeaseMillis
    this.probeTimeoutMillis = resolved.probeTimeoutMillis
    this.slowMillis = resolved.policy.slowMillis
    this.delays = delays
    const timeoutMillis = resolved.timeoutMillis
    this.limit = timeoutMillis === undefined ? undefined : Timeout.limit(this.name, timeoutMillis)
    this.link = link
    this.outbox = link?.outbox
    const config = { tracker: resolved.policy.makeTracker(), successesToClose: resolved.successesToClose }
    this.machine = new Machine.Machine({ ...config, delays, listener: this }, this)
  }

  // The machine's `PhaseCell`: the state, read and replaced synchronously (`Ref.getUnsafe` on Effect 4).
  readPhase(): Machine.Phase {
    return Runtime.readState(this.phaseRef)
  }
  writePhase(phase: Machine.Phase): void {
    Runtime.writeState(this.phaseRef, phase)
  }

  // -- admit -------------------------------------------------------------------------------------

  execute<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | BreakerOpenError, R> {
    const self = this.limit === undefined ? effect : this.limit(effect)
    return Runtime.withFiber((fiber) => {
      const m = this.machine
      const phase = Runtime.readState(this.phaseRef)
      const span = Runtime.spanOf(fiber)
      if (span !== undefined && span._tag === "Span") {
        // The caller's span says which breaker it went through, and in which state it found it.
        span.attribute("circuitry.breaker", this.name)
        span.attribute("circuitry.breaker.state", phase.tag)
      }
      if (phase.tag === "Closed") {
        // The closed path: no lock, no fiber, no Promise; the state is read and the outcome
        // recorded synchronously. The clock is read at the start and the end (the duration histogram).
        const clock = Runtime.cachedClockOf(fiber)
        return this.run(self, phase.generation, clock, Edition.nowUnsafe(clock))
      }
      // `withBreaker(repairing(x))` is `repairing(withBreaker(x))`: the per-fiber mark decides.
      const repaired = repairedEffect(self)
      if (repaired !== undefined) return repairing(this.execute(repaired))
      const clock = Runtime.clockOf(fiber)
      const now = Edition.nowUnsafe(clock)
      // A rejection takes nothing and changes nothing, so it needs no uninterruptible region.
      if (!m.wouldAdmit(now, isRepair(fiber))) return this.reject(now)
      return this.admit(self, clock)
    })
  }

  /** Every state but Closed: decided atomically, with the probe permit or repair slot taken uninterruptibly. */
  private admit<A, E, R>(self: Effect.Effect<A, E, R>, clock: Clock.Clock): Effect.Effect<A, E | BreakerOpenError, R> {
    return Effect.uninterruptibleMask((restore) =>
      Runtime.withFiber<A, E | BreakerOpenError, R>((fiber) => {
        const m = this.machine
        const now = Edition.nowUnsafe(clock)
        const decision = m.admit(now, isRepair(fiber))
        const generation = m.generation
        switch (decision) {
          case Machine.RUN:
            return this.run(restore(self), generation, clock, now)
          case Machine.PROBE:
            return this.probe(restore, self, generation, clock)
          case Machine.REPAIR:
            return this.repair(restore(self), generation)
          case Machine.REJECT:
            return this.reject(now)
        }
      })
    )
  }

  private reject(now: number): Effect.Effect<never, BreakerOpenError> {
    const m = this.machine
    this.metrics.call("rejected")
    return Effect.fail(rejection(this.name, m.tag as "Open" | "HalfOpen" | "Isolated", m.retryAfter(now)))
  }

  // -- run and record ----------------------------------------------------------------------------

  /** A call admitted while Closed, started at `start`: one frame that records how it ended. */
  private run<A, E, R>(
    self: Effect.Effect<A, E, R>,
    generation: number,
    clock: Clock.Clock,
    start: number
  ): Effect.Effect<A, E, R> {
    return Runtime.matchCauseSync(
      self,
      (a) => {
        this.record(generation, false, clock, start)
        return a
      },
      (cause) => {
        if (!Edition.hasInterruptsOnly(cause)) this.record(generation, this.counts(cause), clock, start)
        return Effect.failCause(cause)
      }
    )
  }

  private record(generation: number, failure: boolean, clock: Clock.Clock, start: number): void {
    const now = Edition.nowUnsafe(clock)
    const recorded = this.machine.record(generation, failure, now, now - start)
    if (recorded === Machine.TRIPS) this.machine.trip(now)
    this.metrics.ran(failure, now - start)
    const outbox = this.outbox
    if (outbox === undefined) return
    if (failure) outbox.failure(now, recorded === Machine.TRIPS)
    else outbox.success(now)
  }

  /** Whether a failed call counts against the circuit (a user `isFailure` that throws counts, a timeout counts). */
  private counts(cause: Cause.Cause<unknown>): boolean {
    if (this.limit !== undefined && Timeout.isTimeout(cause)) return true
    try {
      return this.isFailure(cause)
    } catch {
      return true
    }
  }

  private outcome(exit: Exit.Exit<unknown, unknown>): Machine.Outcome {
    if (Exit.isSuccess(exit)) return Machine.SUCCESS
    if (Edition.hasInterruptsOnly(exit.cause)) return Machine.INTERRUPTED
    return this.counts(exit.cause) ? Machine.FAILURE : Machine.SUCCESS
  }

  /** Repair traffic while Open: runs unrecorded; only its own open episode hears how it ended. */
  private repair<A, E, R>(effect: Effect.Effect<A, E, R>, generation: number): Effect.Effect<A, E, R> {
    return Effect.onExit(effect, (exit) =>
      Effect.sync(() => {
        const outcome = this.outcome(exit)
        if (outcome !== Machine.INTERRUPTED) this.metrics.call("repair")
        this.machine.endRepair(generation, outcome)
      })
    )
  }

  /** A half-open probe (probes.ts): only its own episode hears how it ended. */
  private probe<A, E, R>(
    restore: <AX, EX, RX>(effect: Effect.Effect<AX, EX, RX>) => Effect.Effect<AX, EX, RX>,
    self: Effect.Effect<A, E, R>,
    generation: number,
    clock: Clock.Clock
  ): Effect.Effect<A, E | BreakerOpenError, R> {
    const m = this.machine
    const start = Edition.nowUnsafe(clock)
    const slowMillis = this.slowMillis
    const end = (outcome: Machine.Outcome) => {
      const now = Edition.nowUnsafe(clock)
      // With a slow-call rule, a slow probe is a failed probe: a slow dependency stays open.
      if (outcome === Machine.SUCCESS && slowMillis !== undefined && now - start > slowMillis) outcome = Machine.FAILURE
      m.endProbe(generation, outcome, now)
      if (outcome !== Machine.INTERRUPTED) this.metrics.call(outcome === Machine.FAILURE ? "failure" : "success")
    }
    const probes = (this.probes ??= new Probes(this.permits, this.probeLeaseMillis, this.link))
    // A probe never holds the circuit past its timeout (default: the open time of the episode that ended).
    const probeTimeout = this.probeTimeoutMillis ?? Math.max(Timeout.MIN_PROBE_TIMEOUT, this.delays.last())
    const probe = probes.run(
      restore,
      self,
      (exit) => this.outcome(exit),
      () => m.generation === generation,
      end,
      generation,
      start,
      probeTimeout
    )
    return Effect.flatMap(probe, (result): Effect.Effect<A, E | BreakerOpenError, R> => {
      if (result === NO_PERMIT) {
        this.metrics.call("rejected")
        // 0 (not known) when a probe of this member's holds the permits; the back-off when the fleet refused the lease
        const retryAfter = probes.retryAfter(generation, Edition.nowUnsafe(clock))
        return Effect.fail(rejection(this.name, "HalfOpen", retryAfter))
      }
      if (result === READMIT) return restore(this.execute(self))
      return Effect.succeed(result)
    })
  }

  // -- publish -----------------------------------------------------------------------------------

  onTransition(t: Transition, until: number, remote: boolean): void {
    this.metrics.transition(t)
    if (this.hub !== undefined) Edition.publishUnsafe(this.hub, t)
    // Only this instance's own verdicts go to the store; HalfOpen is derived, never stored.
    if (!remote && t.to !== "HalfOpen") this.outbox?.verdict(t.to, until, t.at, t.by)
  }

  private pubsub(): PubSub.PubSub<Transition> {
    return (this.hub ??= Effect.runSync(PubSub.unbounded<Transition>()))
  }

  get changes(): Stream.Stream<Transition> {
    return Stream.suspend(() => Stream.fromPubSub(this.pubsub()))
  }

  get subscribe(): Effect.Effect<Edition.Subscription<Transition>, never, Scope.Scope> {
    return Effect.suspend(() => PubSub.subscribe(this.pubsub()))
  }

  // -- reads -------------------------------------------------------------------------------------

  get state(): Effect.Effect<State> {
    return Effect.clockWith((clock) =>
      Effect.sync(() => {
        this.machine.sync(Edition.nowUnsafe(clock))
        return toState(this.machine)
      })
    )
  }

  get isCallAllowed(): Effect.Effect<boolean> {
    return Effect.clockWith((clock) =>
      Runtime.withFiber<boolean, never, never>((fiber) => {
        const m = this.machine
        const allowed = m.wouldAdmit(Edition.nowUnsafe(clock), isRepair(fiber))
        return allowed && m.tag === "HalfOpen" && this.probes !== undefined
          ? this.probes.isPermitFree(m.generation, Edition.nowUnsafe(clock))
          : Effect.succeed(allowed)
      })
    )
  }

  get snapshot(): Effect.Effect<Snapshot> {
    return Effect.clockWith((clock) =>
      Effect.sync(() => {
        const now = Edition.nowUnsafe(clock)
        this.machine.sync(now)
        return {
          name: this.name,
          state: toState(this.machine),
          counts: this.machine.config.tracker.counts(now),
          probes: this.probes?.inFlight ?? 0,
          ...(this.machine.capped ? { capped: true } : undefined),
          ...(this.link === undefined ? undefined : { store: Sharing.storeView(this.link, this.machine.tag) })
        }
      })
    )
  }

  // -- manual control ----------------------------------------------------------------------------

  get isolate(): Effect.Effect<void> {
    return this.isolateBy(undefined)
  }
  isolateBy(by: string | undefined): Effect.Effect<void> {
    return Effect.clockWith((clock) => Effect.sync(() => this.machine.isolate(Edition.nowUnsafe(clock), by)))
  }

  extendOpen(untilMillis: number, options?: { readonly by?: string | undefined }): Effect.Effect<void> {
    return Effect.clockWith((clock) =>
      Effect.sync(() => {
        const now = Edition.nowUnsafe(clock)
        // Not a transition: the fleet hears of it as a verdict (Open, the longer time, who asked).
        if (this.machine.extendOpen(untilMillis, now)) this.outbox?.verdict("Open", untilMillis, now, options?.by)
      })
    )
  }

  get reset(): Effect.Effect<void> {
    return this.resetBy(undefined)
  }
  resetBy(by: string | undefined): Effect.Effect<void> {
    return Effect.clockWith((clock) => Effect.sync(() => this.machine.reset(Edition.nowUnsafe(clock), by)))
  }

  /**
   * Runs on new options from now on (a registry's live config), keeping its window (tracker.ts
   * `adopt`) and state. `delays` undefined: `openFor` did not change (a schedule keeps its place).
   * Probes in flight keep their permits; a call already running keeps the timeout it started with.
   */
  reconfigure(resolved: Options.Resolved, delays: Machine.OpenDelays | undefined, now: number): void {
    const m = this.machine
    const tracker = resolved.policy.makeTracker()
    tracker.adopt(m.config.tracker, now)
    delays ??= this.delays
    m.reconfigure({ tracker, successesToClose: resolved.successesToClose, delays, listener: this })
    this.isFailure = resolved.isFailure
    this.slowMillis = resolved.policy.slowMillis
    this.delays = delays
    this.probeTimeoutMillis = resolved.probeTimeoutMillis
    this.permits = resolved.permits
    this.probeLeaseMillis = resolved.probeLeaseMillis
    this.probes?.reconfigure(resolved.permits, resolved.probeLeaseMillis)
    const timeoutMillis = resolved.timeoutMillis
    this.limit = timeoutMillis === undefined ? undefined : Timeout.limit(this.name, timeoutMillis)
  }

  /** Takes this breaker's metric series out of Effect's registry (evicted, or its scope closed). */
  release(): void {
    this.metrics.release()
  }

  /** Adopts a verdict another member saved (from the store's subscription), on this breaker's clock. */
  adopt(verdict: Sharing.Adopted, now: number): void {
    this.machine.adopt(verdict.state, verdict.until, verdict.at, now, verdict)
  }
}

// Every breaker is recognisable by its TypeId, kept once on the prototype.
Object.defineProperty(Breaker.prototype, TypeId, { value: TypeId })
