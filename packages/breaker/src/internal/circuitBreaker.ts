import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import { dual } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import * as ScheduleDecision from "effect/ScheduleDecision"
import * as Intervals from "effect/ScheduleIntervals"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as BreakerStore from "../BreakerStore.js"
import type * as CB from "../CircuitBreaker.js"
import * as Policy from "../Policy.js"
import { BreakerOpenError, InvalidBreakerOptions, rejection } from "./errors.js"
import * as Machine from "./machine.js"
import { type Outbox, writer } from "./sharing.js"
import { isWhole, millis as toMillis } from "./validation.js"

// ---------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------

// The public types live in ../CircuitBreaker.ts, with their documentation; this module implements them.
type CircuitBreaker = CB.CircuitBreaker
type Options = CB.Options
type Snapshot = CB.Snapshot
type State = CB.State
type StateTag = CB.StateTag
type Transition = CB.Transition

/** @internal */
export const State = Data.taggedEnum<State>()

// ---------------------------------------------------------------------------------------------
// repair traffic
// ---------------------------------------------------------------------------------------------

/** @internal */
export const repairTraffic: FiberRef.FiberRef<boolean> = FiberRef.unsafeMake(false)

/** Marks an effect made by `repairing`, so that a breaker given it directly sees it as repair. */
const RepairMark: unique symbol = Symbol.for("@circuitry/breaker/repairing")

/**
 * Marks the fiber as repair traffic while `self` runs (so everything inside it is repair traffic),
 * and marks the effect itself, so that `withBreaker(repairing(self), breaker)` sees it too.
 *
 * @internal
 */
export const repairing = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Object.assign(Effect.locally(self, repairTraffic, true), { [RepairMark]: true })

const isRepair = (self: Effect.Effect<unknown, unknown, unknown>, fiberSays: boolean): boolean =>
  fiberSays || (self as { readonly [RepairMark]?: boolean })[RepairMark] === true

// ---------------------------------------------------------------------------------------------
// options
// ---------------------------------------------------------------------------------------------

/** @internal */
export interface Resolved {
  readonly name: string
  readonly policy: Policy.Policy
  readonly openFor:
    | { readonly _tag: "Fixed"; readonly millis: number }
    | { readonly _tag: "Schedule"; readonly schedule: Schedule.Schedule<unknown, unknown> }
  readonly permits: number
  readonly successesToClose: number
  readonly probeLeaseMillis: number
  readonly isFailure: (cause: Cause.Cause<unknown>) => boolean
}

const defaultIsFailure = (cause: Cause.Cause<unknown>): boolean => !Cause.isInterruptedOnly(cause)

/**
 * Validates options once, at construction, into a typed error that names the option and its rule.
 *
 * @internal
 */
export const resolve = (options: Options | undefined): Either.Either<Resolved, InvalidBreakerOptions> => {
  const fail = (message: string) => Either.left(new InvalidBreakerOptions({ message }))
  if (options !== undefined && (typeof options !== "object" || options === null)) {
    return fail(`options must be an object, got ${typeof options}`)
  }
  const o = options ?? {}
  const name = o.name ?? "default"
  if (typeof name !== "string" || name.length === 0) {
    return fail(`name must be a non-empty string, got ${JSON.stringify(name)}`)
  }
  const policy = o.policy ?? Policy.consecutiveFailures(5)
  if (!Policy.isPolicy(policy)) {
    return fail(`policy must be made by Policy.consecutiveFailures or Policy.failureRate (breaker "${name}")`)
  }
  if (policy.problem !== undefined) return fail(`${policy.problem} (breaker "${name}")`)
  let openFor: Resolved["openFor"]
  const rawOpenFor = o.openFor ?? "30 seconds"
  if (Schedule.isSchedule(rawOpenFor)) {
    openFor = { _tag: "Schedule", schedule: rawOpenFor as Schedule.Schedule<unknown, unknown> }
  } else {
    const millis = toMillis(rawOpenFor as Duration.DurationInput)
    if (millis === undefined) {
      return fail(
        `openFor must be a finite duration >= 0 or a Schedule, got ${JSON.stringify(String(rawOpenFor))} (breaker "${name}")`
      )
    }
    openFor = { _tag: "Fixed", millis }
  }
  if (o.halfOpen !== undefined && (typeof o.halfOpen !== "object" || o.halfOpen === null)) {
    return fail(`halfOpen must be an object (breaker "${name}")`)
  }
  const permits = o.halfOpen?.permits ?? 1
  if (!isWhole(permits, 1)) {
    return fail(`halfOpen.permits must be a whole number >= 1, got ${permits} (breaker "${name}")`)
  }
  const successesToClose = o.halfOpen?.successesToClose ?? 1
  if (!isWhole(successesToClose, 1)) {
    return fail(`halfOpen.successesToClose must be a whole number >= 1, got ${successesToClose} (breaker "${name}")`)
  }
  const isFailure = o.isFailure ?? defaultIsFailure
  if (typeof isFailure !== "function") {
    return fail(`isFailure must be a function of a Cause, got ${typeof isFailure} (breaker "${name}")`)
  }
  const probeLeaseMillis = toMillis(o.halfOpen?.probeLease ?? "60 seconds")
  if (probeLeaseMillis === undefined || probeLeaseMillis <= 0) {
    return fail(`halfOpen.probeLease must be a finite duration > 0 (breaker "${name}")`)
  }
  return Either.right({ name, policy, openFor, permits, successesToClose, probeLeaseMillis, isFailure })
}

// ---------------------------------------------------------------------------------------------
// open durations
// ---------------------------------------------------------------------------------------------

/** A fixed wait: one object per breaker, no closures. */
class FixedDelays implements Machine.OpenDelays {
  constructor(private readonly millis: number) {}
  next(): number {
    return this.millis
  }
  reset(): void {}
}

/**
 * Steps the `openFor` schedule once per open episode. The step runs synchronously in the runtime
 * the breaker was made in (so `TestClock` and `TestRandom` apply); a schedule that is done keeps
 * its last delay.
 */
const openDelays = (
  openFor: Resolved["openFor"],
  runtime: Runtime.Runtime<never>,
  name: string
): Either.Either<Machine.OpenDelays, InvalidBreakerOptions> => {
  if (openFor._tag === "Fixed") return Either.right(new FixedDelays(openFor.millis))
  const schedule = openFor.schedule
  const runStep = Runtime.runSyncExit(runtime)
  const step = (now: number, state: unknown): [unknown, number] | undefined => {
    const exit = runStep(schedule.step(now, undefined, state))
    if (Exit.isFailure(exit)) return undefined
    const [next, , decision] = exit.value
    if (ScheduleDecision.isDone(decision)) return undefined
    return [next, Math.max(0, Intervals.start(decision.intervals) - now)]
  }
  const first = step(0, schedule.initial)
  if (first === undefined) {
    return Either.left(
      new InvalidBreakerOptions({
        message: `openFor schedule must give at least one delay, synchronously (breaker "${name}")`
      })
    )
  }
  let state: unknown = schedule.initial
  let last = first[1]
  return Either.right({
    next: (now) => {
      const result = step(now, state)
      if (result !== undefined) {
        state = result[0]
        last = result[1]
      }
      return last
    },
    reset: () => {
      state = schedule.initial
    }
  })
}

// ---------------------------------------------------------------------------------------------
// metrics
// ---------------------------------------------------------------------------------------------

/** @internal */
export const callsTotal = Metric.counter("circuitry_breaker_calls_total", {
  description: "Calls through a circuit breaker, by outcome: success, failure, rejected, repair"
})
/** @internal */
export const transitionsTotal = Metric.counter("circuitry_breaker_transitions_total", {
  description: "State transitions of a circuit breaker"
})
/** @internal */
export const stateGauge = Metric.gauge("circuitry_breaker_state", {
  description: "Current state of a circuit breaker: 0 closed, 1 open, 2 half-open, 3 isolated"
})

const stateNumber: Record<StateTag, number> = { Closed: 0, Open: 1, HalfOpen: 2, Isolated: 3 }
const outcomeLabels = {
  success: MetricLabel.make("outcome", "success"),
  failure: MetricLabel.make("outcome", "failure"),
  rejected: MetricLabel.make("outcome", "rejected"),
  repair: MetricLabel.make("outcome", "repair")
}
type CallOutcome = keyof typeof outcomeLabels

/** Metric tags are built on first use, so that an idle breaker costs no metric memory. */
class BreakerMetrics {
  private label: MetricLabel.MetricLabel | undefined
  private tags: Partial<Record<CallOutcome, ReadonlyArray<MetricLabel.MetricLabel>>> | undefined
  constructor(readonly name: string) {}
  private breakerLabel(): MetricLabel.MetricLabel {
    return (this.label ??= MetricLabel.make("breaker", this.name))
  }
  call(outcome: CallOutcome): void {
    const tags = ((this.tags ??= {})[outcome] ??= [this.breakerLabel(), outcomeLabels[outcome]])
    callsTotal.unsafeUpdate(1, tags)
  }
  transition(t: Transition): void {
    const label = this.breakerLabel()
    transitionsTotal.unsafeUpdate(1, [label, MetricLabel.make("from", t.from), MetricLabel.make("to", t.to)])
    stateGauge.unsafeUpdate(stateNumber[t.to], [label])
  }
}

// ---------------------------------------------------------------------------------------------
// the breaker
// ---------------------------------------------------------------------------------------------

/** How long a call may wait on the shared store before the breaker decides alone. */
const STORE_DEADLINE = Duration.millis(250)

const ClockTag = Clock.Clock

const clockOf = (fiber: Fiber.RuntimeFiber<unknown, unknown>): Clock.Clock =>
  Context.get(fiber.currentDefaultServices, ClockTag)

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

class Breaker implements CircuitBreaker, Machine.TransitionListener {
  readonly machine: Machine.Machine
  private hub: PubSub.PubSub<Transition> | undefined
  private readonly metrics: BreakerMetrics
  /** The policy needs each call's start time (time windows, slow calls). */
  private readonly timed: boolean
  private readonly isFailure: (cause: Cause.Cause<unknown>) => boolean
  private readonly probeLeaseMillis: number
  /** Set when a shared store is in the context. */
  shared: BreakerStore.SharedCircuit | undefined
  outbox: Outbox | undefined
  /** Who made a verdict, in a shared store (set when the breaker joins one). */
  origin = ""

  constructor(
    readonly name: string,
    resolved: Resolved,
    delays: Machine.OpenDelays
  ) {
    this.metrics = new BreakerMetrics(name)
    this.timed = resolved.policy.timed
    this.isFailure = resolved.isFailure
    this.probeLeaseMillis = resolved.probeLeaseMillis
    this.machine = new Machine.Machine({
      tracker: resolved.policy.makeTracker(),
      permits: resolved.permits,
      successesToClose: resolved.successesToClose,
      delays,
      listener: this
    })
  }

  onTransition(t: Transition, remote: boolean): void {
    this.metrics.transition(t)
    this.hub?.unsafeOffer(t)
    if (!remote && t.to !== "HalfOpen") this.share(t.to, t.at)
  }

  /** Queues this instance's verdict for the shared store (HalfOpen is derived, never stored). */
  private share(state: "Closed" | "Open" | "Isolated", at: number): void {
    const outbox = this.outbox
    if (outbox === undefined) return
    outbox.verdict = { state, until: state === "Open" ? this.machine.until : 0, at, origin: this.origin }
    // A transition starts the store's count again: pending counts are moot.
    outbox.failuresBefore = 0
    outbox.success = false
    outbox.failures = 0
    outbox.dirty = false
    outbox.signal.unsafeOffer(undefined)
  }

  private pubsub(): PubSub.PubSub<Transition> {
    return (this.hub ??= Effect.runSync(PubSub.unbounded<Transition>()))
  }

  // -- reads ----------------------------------------------------------------------------------

  get state(): Effect.Effect<State> {
    return Effect.clockWith((clock) =>
      Effect.sync(() => {
        this.machine.sync(clock.unsafeCurrentTimeMillis())
        return toState(this.machine)
      })
    )
  }

  get isCallAllowed(): Effect.Effect<boolean> {
    return Effect.clockWith((clock) =>
      Effect.withFiberRuntime<boolean>((fiber) =>
        Effect.succeed(this.machine.wouldAdmit(clock.unsafeCurrentTimeMillis(), fiber.getFiberRef(repairTraffic)))
      )
    )
  }

  get snapshot(): Effect.Effect<Snapshot> {
    return Effect.clockWith((clock) =>
      Effect.sync(() => {
        const now = clock.unsafeCurrentTimeMillis()
        this.machine.sync(now)
        return {
          name: this.name,
          state: toState(this.machine),
          counts: this.machine.config.tracker.counts(now),
          probes: this.machine.probes
        }
      })
    )
  }

  get changes(): Stream.Stream<Transition> {
    return Stream.suspend(() => Stream.fromPubSub(this.pubsub()))
  }

  get subscribe(): Effect.Effect<Queue.Dequeue<Transition>, never, Scope.Scope> {
    return Effect.suspend(() => PubSub.subscribe(this.pubsub()))
  }

  // -- manual control --------------------------------------------------------------------------

  get isolate(): Effect.Effect<void> {
    return Effect.clockWith((clock) => Effect.sync(() => this.machine.isolate(clock.unsafeCurrentTimeMillis())))
  }

  extendOpen(untilMillis: number): Effect.Effect<void> {
    return Effect.clockWith((clock) =>
      Effect.sync(() => {
        const now = clock.unsafeCurrentTimeMillis()
        if (this.machine.extendOpen(untilMillis, now)) this.share("Open", now)
      })
    )
  }

  get reset(): Effect.Effect<void> {
    return Effect.clockWith((clock) => Effect.sync(() => this.machine.reset(clock.unsafeCurrentTimeMillis())))
  }

  // -- calls -----------------------------------------------------------------------------------

  execute<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | BreakerOpenError, R> {
    return Effect.withFiberRuntime((fiber) => {
      const m = this.machine
      const span = fiber.currentSpan
      if (span !== undefined && span._tag === "Span") {
        // The caller's span says which breaker it went through, and in which state it found it.
        span.attribute("circuitry.breaker", this.name)
        span.attribute("circuitry.breaker.state", m.tag)
      }
      if (m.tag === "Closed") {
        // The closed path: no lock, no fiber, no Promise; the machine is read and written
        // synchronously, and the clock is read only when the policy needs call times.
        if (!this.timed) return this.runClosed(self, m.generation, fiber, undefined, 0)
        const clock = clockOf(fiber)
        return this.runClosed(self, m.generation, fiber, clock, clock.unsafeCurrentTimeMillis())
      }
      const clock = clockOf(fiber)
      const now = clock.unsafeCurrentTimeMillis()
      if (!m.wouldAdmit(now, isRepair(self, fiber.getFiberRef(repairTraffic)))) {
        // A rejection takes nothing and changes nothing, so it needs no uninterruptible region.
        this.metrics.call("rejected")
        return Effect.fail(rejection(this.name, m.tag as "Open" | "HalfOpen" | "Isolated", m.retryAfter(now)))
      }
      return this.admit(self, clock)
    })
  }

  /**
   * A call admitted while Closed: its outcome goes into the policy (if its window is still current).
   * `clock` is given when the policy needs call times (then `start` is the call's start); otherwise
   * the clock is read only when it is needed: to trip, or to tell a store when a failure happened.
   */
  private runClosed<A, E, R>(
    self: Effect.Effect<A, E, R>,
    generation: number,
    fiber: Fiber.RuntimeFiber<unknown, unknown>,
    clock: Clock.Clock | undefined,
    start: number
  ): Effect.Effect<A, E, R> {
    return Effect.catchAllCause(
      Effect.map(self, (a) => {
        this.recordClosed(generation, false, fiber, clock, start)
        return a
      }),
      (cause) => {
        if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
        this.recordClosed(generation, this.counts(cause), fiber, clock, start)
        return Effect.failCause(cause)
      }
    )
  }

  private recordClosed(
    generation: number,
    failure: boolean,
    fiber: Fiber.RuntimeFiber<unknown, unknown>,
    clock: Clock.Clock | undefined,
    start: number
  ): void {
    const m = this.machine
    const before = m.generation
    const outbox = this.outbox
    let now = clock !== undefined || outbox !== undefined ? (clock ?? clockOf(fiber)).unsafeCurrentTimeMillis() : -1
    if (m.record(generation, failure, now, clock !== undefined ? now - start : 0)) {
      if (now === -1) now = clockOf(fiber).unsafeCurrentTimeMillis()
      m.trip(now)
    }
    this.metrics.call(failure ? "failure" : "success")
    if (outbox === undefined) return
    if (failure) {
      if (m.generation === before) {
        outbox.failures++
      } else {
        // This failure opened the circuit: the verdict starts the store's count again, but the
        // time of the last failure is still worth keeping.
        outbox.timeOnly = true
      }
      outbox.lastFailureAt = now
      outbox.signal.unsafeOffer(undefined)
    } else if (outbox.failures > 0 || outbox.dirty) {
      // Only the first success after failures tells the store anything: the count starts again.
      if (outbox.failures > 0) {
        outbox.failuresBefore += outbox.failures
        outbox.lastFailureBeforeAt = outbox.lastFailureAt
        outbox.failures = 0
      }
      outbox.dirty = false
      outbox.success = true
      outbox.successAt = now
      outbox.signal.unsafeOffer(undefined)
    }
  }

  /** Whether a failed call counts against the circuit (a user `isFailure` that throws counts). */
  private counts(cause: Cause.Cause<unknown>): boolean {
    try {
      return this.isFailure(cause)
    } catch {
      return true
    }
  }

  private outcome(exit: Exit.Exit<unknown, unknown>): Machine.Outcome {
    if (Exit.isSuccess(exit)) return Machine.SUCCESS
    if (Cause.isInterruptedOnly(exit.cause)) return Machine.INTERRUPTED
    return this.counts(exit.cause) ? Machine.FAILURE : Machine.SUCCESS
  }

  /** Every state but Closed: decided atomically, with the permit (if any) taken uninterruptibly. */
  private admit<A, E, R>(self: Effect.Effect<A, E, R>, clock: Clock.Clock): Effect.Effect<A, E | BreakerOpenError, R> {
    return Effect.uninterruptibleMask((restore) =>
      Effect.withFiberRuntime<A, E | BreakerOpenError, R>((fiber) => {
        const m = this.machine
        const now = clock.unsafeCurrentTimeMillis()
        const decision = m.admit(now, isRepair(self, fiber.getFiberRef(repairTraffic)))
        const generation = m.generation
        switch (decision) {
          case Machine.RUN:
            return this.runClosed(restore(self), generation, fiber, clock, now)
          case Machine.PROBE:
            return this.probe(restore, self, generation, clock)
          case Machine.REPAIR:
            return Effect.onExit(restore(self), (exit) =>
              Effect.sync(() => {
                const outcome = this.outcome(exit)
                if (outcome !== Machine.INTERRUPTED) this.metrics.call("repair")
                m.endRepair(generation, outcome)
              })
            )
          case Machine.REJECT:
            this.metrics.call("rejected")
            return Effect.fail(rejection(this.name, m.tag as "Open" | "HalfOpen" | "Isolated", m.retryAfter(now)))
        }
      })
    )
  }

  /** A half-open probe: its permit is returned however it ends, and only its own episode hears it. */
  private probe<A, E, R>(
    restore: <AX, EX, RX>(effect: Effect.Effect<AX, EX, RX>) => Effect.Effect<AX, EX, RX>,
    self: Effect.Effect<A, E, R>,
    generation: number,
    clock: Clock.Clock
  ): Effect.Effect<A, E | BreakerOpenError, R> {
    const m = this.machine
    const shared = this.shared
    const end = (outcome: Machine.Outcome) => {
      m.endProbe(generation, outcome, clock.unsafeCurrentTimeMillis())
      if (outcome !== Machine.INTERRUPTED) this.metrics.call(outcome === Machine.FAILURE ? "failure" : "success")
    }
    const run: Effect.Effect<A, E, R> = Effect.onExit(restore(self), (exit) =>
      Effect.sync(() => end(this.outcome(exit)))
    )
    if (shared === undefined) return run
    // One probe for the whole fleet: take a lease in the shared store first. A store that does not
    // answer in time leaves the decision to this instance alone.
    return restore(
      shared
        .acquireProbe({
          permits: m.config.permits,
          leaseMillis: this.probeLeaseMillis,
          now: clock.unsafeCurrentTimeMillis()
        })
        .pipe(Effect.timeout(STORE_DEADLINE))
    ).pipe(
      Effect.either,
      Effect.onInterrupt(() => Effect.sync(() => end(Machine.INTERRUPTED))),
      Effect.flatMap((lease): Effect.Effect<A, E | BreakerOpenError, R> => {
        if (Either.isRight(lease) && Option.isNone(lease.right)) {
          end(Machine.INTERRUPTED) // another member probes: give the permit back, record nothing
          this.metrics.call("rejected")
          return Effect.fail(rejection(this.name, "HalfOpen", 0))
        }
        const token = Either.isRight(lease) ? lease.right : Option.none<string>()
        return Option.isNone(token)
          ? run
          : Effect.ensuring(run, Effect.forkDaemon(Effect.ignore(shared.releaseProbe(token.value))))
      })
    )
  }

  // -- shared store ----------------------------------------------------------------------------

  /** Joins the shared circuit: adopts its verdict, follows it, and keeps it informed. */
  connect(store: BreakerStore.BreakerStore["Type"]): Effect.Effect<void, never, Scope.Scope> {
    return Effect.gen(this, function* () {
      const connected = yield* Effect.either(store.connect(this.name))
      if (Either.isLeft(connected)) {
        yield* Effect.logWarning(
          `circuit "${this.name}": shared store unavailable, keeping state locally`,
          connected.left
        )
        return
      }
      const shared = connected.right
      this.origin = `${this.name}#${Math.random().toString(36).slice(2, 10)}`
      const adopt = (verdict: BreakerStore.Verdict) =>
        Effect.clockWith((clock) =>
          Effect.sync(() => {
            if (verdict.origin !== this.origin)
              this.machine.adopt(verdict.state, verdict.until, verdict.at, clock.unsafeCurrentTimeMillis())
          })
        )
      const initial = yield* shared.load.pipe(Effect.timeout(STORE_DEADLINE), Effect.option)
      if (Option.isSome(initial) && Option.isSome(initial.value)) yield* adopt(initial.value.value)
      yield* Stream.runForEach(shared.verdicts, adopt).pipe(Effect.forkScoped)
      const outbox: Outbox = {
        verdict: undefined,
        failures: 0,
        lastFailureAt: 0,
        failuresBefore: 0,
        lastFailureBeforeAt: 0,
        success: false,
        successAt: 0,
        timeOnly: false,
        dirty: false,
        signal: yield* Queue.sliding<void>(1)
      }
      yield* writer(shared, outbox).pipe(Effect.forkScoped)
      this.shared = shared
      this.outbox = outbox
    })
  }
}

/**
 * Checks options as `make` would, without making a breaker (nor joining a shared store).
 *
 * @internal
 */
export const validate = (options?: Options): Effect.Effect<void, InvalidBreakerOptions> =>
  Effect.gen(function* () {
    const resolved = yield* resolve(options)
    yield* openDelays(resolved.openFor, yield* Effect.runtime<never>(), resolved.name)
  })

/** The state a breaker is in now, read synchronously (for the registry's eviction). @internal */
export const stateTagOf = (breaker: CircuitBreaker): StateTag => (breaker as Breaker).machine.tag

/** @internal */
export const make = (options?: Options): Effect.Effect<CircuitBreaker, InvalidBreakerOptions, Scope.Scope> =>
  Effect.gen(function* () {
    const resolved = yield* resolve(options)
    const runtime = yield* Effect.runtime<never>()
    const delays = yield* openDelays(resolved.openFor, runtime, resolved.name)
    const breaker = new Breaker(resolved.name, resolved, delays)
    const store = yield* Effect.serviceOption(BreakerStore.BreakerStore)
    if (Option.isSome(store)) yield* breaker.connect(store.value)
    return breaker
  })

/** @internal */
export const layer = <I>(
  tag: Context.Tag<I, CircuitBreaker>,
  options?: Options
): Layer.Layer<I, InvalidBreakerOptions> => Layer.scoped(tag, make(options))

/** @internal */
export const withBreaker: {
  <I = never>(
    breaker: CircuitBreaker | Context.Tag<I, CircuitBreaker>
  ): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | BreakerOpenError, R | I>
  <A, E, R, I = never>(
    self: Effect.Effect<A, E, R>,
    breaker: CircuitBreaker | Context.Tag<I, CircuitBreaker>
  ): Effect.Effect<A, E | BreakerOpenError, R | I>
} = dual(
  2,
  <A, E, R, I>(
    self: Effect.Effect<A, E, R>,
    breaker: CircuitBreaker | Context.Tag<I, CircuitBreaker>
  ): Effect.Effect<A, E | BreakerOpenError, R | I> =>
    breaker instanceof Breaker || !Context.isTag(breaker)
      ? (breaker as CircuitBreaker).execute(self)
      : Effect.flatMap(breaker as Context.Tag<I, CircuitBreaker>, (b) => b.execute(self))
)

export { BreakerOpenError, InvalidBreakerOptions }
