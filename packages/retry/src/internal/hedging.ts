import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { dual } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as RuntimeFlags from "effect/RuntimeFlags"
import type * as Scope from "effect/Scope"
import type * as H from "../Hedging.js"
import type * as RB from "../RetryBudget.js"
import type { InvalidRetryOptions } from "./errors.js"
import { Latencies } from "./latencies.js"
import { describe, invalid, isOptionsObject, toMillis } from "./options.js"
import { isRejection } from "./rejection.js"
import { isRetryBudget, LocalBudget } from "./retryBudget.js"
import { type Owner, type Timer, Timers } from "./timers.js"

type Hedging = H.Hedging
type Options = H.Options

/** @internal */
export const TypeId: unique symbol = Symbol.for("@circuitry/retry/Hedging")

/** @internal */
export const isHedging = (u: unknown): u is Hedging => typeof u === "object" && u !== null && TypeId in u

// ---------------------------------------------------------------------------------------------
// options
// ---------------------------------------------------------------------------------------------

type Delay =
  | { readonly _tag: "Fixed"; readonly millis: number }
  | { readonly _tag: "Percentile"; readonly quantile: number; readonly min: number; readonly max: number | undefined }

/** @internal */
export interface Resolved {
  readonly name: string
  readonly delay: Delay
  readonly maxHedges: number
  readonly budget: RB.RetryBudget | undefined
}

const resolveDelay = (delay: unknown, name: string): Either.Either<Delay, InvalidRetryOptions> => {
  const fail = (message: string) => Either.left(invalid(`${message} (hedging "${name}")`))
  if (typeof delay === "object" && delay !== null && "percentile" in delay) {
    const d = delay as { readonly percentile: unknown; readonly min?: unknown; readonly max?: unknown }
    const p = d.percentile
    if (typeof p !== "number" || !(p >= 1 && p < 100)) {
      return fail(`Hedging delay.percentile must be a number in [1, 100) (95 for p95), got ${describe(p)}`)
    }
    const min = d.min === undefined ? 0 : toMillis(d.min)
    if (min === undefined) return fail(`Hedging delay.min must be a finite duration >= 0, got ${describe(d.min)}`)
    const max = d.max === undefined ? undefined : toMillis(d.max)
    if (d.max !== undefined && (max === undefined || max < min)) {
      return fail(`Hedging delay.max must be a finite duration >= delay.min, got ${describe(d.max)}`)
    }
    return Either.right({ _tag: "Percentile", quantile: p / 100, min, max })
  }
  const millis = toMillis(delay)
  if (millis === undefined) {
    return fail(`Hedging delay must be a finite duration >= 0 or { percentile }, got ${describe(delay)}`)
  }
  return Either.right({ _tag: "Fixed", millis })
}

/** @internal */
export const resolve = (options: Options): Either.Either<Resolved, InvalidRetryOptions> => {
  const fail = (message: string) => Either.left(invalid(message))
  if (!isOptionsObject(options) || options === undefined) {
    return fail(`Hedging options must be an object with a delay, got ${describe(options)}`)
  }
  const name = options.name ?? "default"
  if (typeof name !== "string" || name.length === 0) {
    return fail(`Hedging name must be a non-empty string, got ${describe(name)}`)
  }
  const delay = resolveDelay(options.delay, name)
  if (Either.isLeft(delay)) return Either.left(delay.left)
  const maxHedges = options.maxHedges ?? 1
  if (typeof maxHedges !== "number" || !Number.isInteger(maxHedges) || maxHedges < 1) {
    return fail(`Hedging maxHedges must be a whole number >= 1, got ${describe(maxHedges)} (hedging "${name}")`)
  }
  if (options.budget !== undefined && !isRetryBudget(options.budget)) {
    return fail(`Hedging budget must be a RetryBudget, got ${describe(options.budget)} (hedging "${name}")`)
  }
  return Either.right({ name, delay: delay.right, maxHedges, budget: options.budget })
}

// ---------------------------------------------------------------------------------------------
// metrics
// ---------------------------------------------------------------------------------------------

/** @internal */
export const hedgesTotal = Metric.counter("circuitry_hedging_hedges_total", {
  incremental: true,
  description: "Hedges of a call, by outcome: started, won (a hedge's success ended the call), denied (no budget)"
})

type HedgeOutcome = "started" | "won" | "denied"

// ---------------------------------------------------------------------------------------------
// one hedged call
// ---------------------------------------------------------------------------------------------

/**
 * One call, as a state machine driven by callbacks: each copy's fiber observer and the hedge
 * timer. The caller's fiber waits in one `Effect.async`; the callback that decides the call
 * resumes it with the result (after interrupting the losers, so their finalizers have run when
 * the call returns), and interrupting the caller interrupts every copy. One object per call and
 * no effect of its own on the way, so that a fast success costs little beyond its copy's fiber.
 */
class HedgedCall<A, E, R> implements Owner {
  private readonly attempts: Array<Fiber.RuntimeFiber<A, E>> = []
  private timer: Timer | undefined = undefined
  /** Copies started and not yet ended. */
  private running = 0
  private lastFailure: Cause.Cause<E> | undefined = undefined
  /** A rejection from a breaker or limiter was seen: no more hedges. */
  private stopped = false
  private done = false
  private primaryEnd = -1
  private resume: ((result: Effect.Effect<A, E>) => void) | undefined = undefined
  private readonly start: number

  constructor(
    private readonly policy: HedgingImpl,
    private readonly self: Effect.Effect<A, E, R>,
    private readonly runtime: Runtime.Runtime<R>,
    private readonly now: () => number,
    private readonly delay: number
  ) {
    this.start = now()
  }

  run(): Effect.Effect<A, E> {
    return Effect.async<A, E>((resume) => {
      this.resume = resume
      this.launch()
      // A copy that ended at once decided the call: nothing is left to interrupt.
      if (this.done) return
      return Effect.suspend(() => {
        this.done = true
        this.cancelTimer()
        return Fiber.interruptAll(this.attempts)
      })
    })
  }

  /**
   * Starts a copy in a fiber of its own, at once: it runs on the current stack until its first
   * asynchronous step (a fork would wait for the scheduler, and cost more than a fast call).
   */
  private launch(): void {
    const index = this.attempts.length
    this.running++
    const fiber = Runtime.runFork(this.runtime)(this.self)
    this.attempts.push(fiber)
    fiber.addObserver((exit) => this.ended(index, exit))
    if (!this.done && this.attempts.length <= this.policy.maxHedges) {
      this.timer = this.policy.timers.schedule(this.now() + this.delay, this)
    }
  }

  private ended(index: number, exit: Exit.Exit<A, E>): void {
    this.running--
    if (index === 0) this.primaryEnd = this.now()
    if (this.done) return
    if (Exit.isSuccess(exit)) return this.finish(exit, index)
    if (!Cause.isInterruptedOnly(exit.cause)) {
      this.lastFailure = exit.cause
      if (Option.exists(Cause.failureOption(exit.cause), isRejection)) this.stopped = true
    } else {
      // Interrupted from inside the effect itself (this call interrupts only once it is done).
      this.lastFailure ??= exit.cause
    }
    // Every copy failed: the call fails with the last failure, without waiting for a hedge.
    if (this.running === 0) this.finish(Effect.failCause(this.lastFailure ?? Cause.empty), -1)
  }

  onTimer(): void {
    this.timer = undefined
    if (this.done || this.stopped) return
    const budget = this.policy.budget
    if (budget === undefined) return this.hedge()
    if (budget instanceof LocalBudget) {
      return budget.unsafeTryWithdraw(this.now()) ? this.hedge() : this.policy.count("denied")
    }
    Runtime.runFork(this.runtime)(budget.tryWithdraw).addObserver((exit) => {
      if (Exit.isSuccess(exit) && exit.value) {
        if (!this.done && !this.stopped) this.hedge()
      } else {
        this.policy.count("denied")
      }
    })
  }

  private hedge(): void {
    this.policy.count("started")
    this.launch()
  }

  private cancelTimer(): void {
    if (this.timer !== undefined) this.policy.timers.cancel(this.timer)
    this.timer = undefined
  }

  private finish(result: Effect.Effect<A, E>, winner: number): void {
    this.done = true
    this.cancelTimer()
    this.policy.latencies?.record((this.primaryEnd >= 0 ? this.primaryEnd : this.now()) - this.start)
    if (winner > 0) this.policy.count("won")
    const losers: Array<Fiber.RuntimeFiber<A, E>> = []
    for (let i = 0; i < this.attempts.length; i++) if (i !== winner) losers.push(this.attempts[i]!)
    const resume = this.resume!
    // `this.running` counts the losers still running; the finished ones are interrupted at no cost.
    resume(this.running === 0 ? result : Effect.zipRight(Fiber.interruptAll(losers), result))
  }
}

// ---------------------------------------------------------------------------------------------
// the hedging policy
// ---------------------------------------------------------------------------------------------

class HedgingImpl implements Hedging {
  readonly [TypeId]: typeof TypeId = TypeId
  readonly name: string
  readonly latencies: Latencies | undefined
  readonly maxHedges: number
  readonly budget: RB.RetryBudget | undefined
  private readonly labels: Record<HedgeOutcome, ReadonlyArray<MetricLabel.MetricLabel>>

  constructor(
    private readonly resolved: Resolved,
    readonly timers: Timers
  ) {
    this.name = resolved.name
    this.maxHedges = resolved.maxHedges
    this.budget = resolved.budget
    this.latencies = resolved.delay._tag === "Percentile" ? new Latencies(resolved.delay.quantile) : undefined
    const label = MetricLabel.make("hedging", resolved.name)
    this.labels = {
      started: [label, MetricLabel.make("outcome", "started")],
      won: [label, MetricLabel.make("outcome", "won")],
      denied: [label, MetricLabel.make("outcome", "denied")]
    }
  }

  /** The delay before the first hedge, in ms; undefined: do not hedge (too few samples, no max). */
  private delayMillis(): number | undefined {
    const delay = this.resolved.delay
    if (delay._tag === "Fixed") return delay.millis
    const p = this.latencies!.percentile
    if (p === undefined) return delay.max
    return Math.min(delay.max ?? Number.POSITIVE_INFINITY, Math.max(delay.min, p))
  }

  get delay(): Effect.Effect<Option.Option<Duration.Duration>> {
    return Effect.sync(() => Option.map(Option.fromNullable(this.delayMillis()), Duration.millis))
  }

  get samples(): Effect.Effect<number> {
    return Effect.sync(() => this.latencies?.samples ?? 0)
  }

  count(outcome: HedgeOutcome): void {
    hedgesTotal.unsafeUpdate(1, this.labels[outcome])
  }

  execute<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return Effect.withFiberRuntime<A, E, R>((fiber, status) => {
      const clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
      const now = () => clock.unsafeCurrentTimeMillis()
      const budget = this.budget
      if (budget instanceof LocalBudget) budget.unsafeDeposit(now())
      const delay = this.delayMillis()
      let call: Effect.Effect<A, E, R>
      if (delay === undefined) {
        call = this.alone(self, now)
      } else {
        // The copies run in the caller's runtime: its context (which holds what `self` requires,
        // since this fiber is the one running `self`'s caller) and fiber refs; interruptible even
        // when the caller is not, so that a loser can always be stopped.
        const runtime = Runtime.make({
          context: fiber.currentContext as Context.Context<R>,
          fiberRefs: fiber.getFiberRefs(),
          runtimeFlags: RuntimeFlags.enable(status.runtimeFlags, RuntimeFlags.Interruption)
        })
        call = new HedgedCall(this, self, runtime, now, delay).run()
      }
      return budget === undefined || budget instanceof LocalBudget ? call : Effect.zipRight(budget.deposit, call)
    })
  }

  /** Nothing to hedge on yet: the call runs alone, and its latency is a sample. */
  private alone<A, E, R>(self: Effect.Effect<A, E, R>, now: () => number): Effect.Effect<A, E, R> {
    const latencies = this.latencies
    if (latencies === undefined) return self
    const start = now()
    return Effect.onExit(self, (exit) =>
      Effect.sync(() => {
        if (!Exit.isInterrupted(exit)) latencies.record(now() - start)
      })
    )
  }
}

// ---------------------------------------------------------------------------------------------
// constructors and the combinator
// ---------------------------------------------------------------------------------------------

/** @internal */
export const make = (options: Options): Effect.Effect<Hedging, InvalidRetryOptions, Scope.Scope> =>
  Effect.flatMap(resolve(options), (resolved) => Effect.map(Timers.make, (timers) => new HedgingImpl(resolved, timers)))

/** @internal */
export const layer = <I>(tag: Context.Tag<I, Hedging>, options: Options): Layer.Layer<I, InvalidRetryOptions> =>
  Layer.scoped(tag, make(options))

/** @internal */
export const withHedging: typeof H.withHedging = dual(
  2,
  <A, E, R, I>(self: Effect.Effect<A, E, R>, hedging: Hedging | Context.Tag<I, Hedging>): Effect.Effect<A, E, R | I> =>
    isHedging(hedging) ? hedging.execute(self) : Effect.flatMap(hedging, (h) => h.execute(self))
)
