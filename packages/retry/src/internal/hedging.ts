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
  description: "Hedges of a call, by outcome: started, won (a hedge's success ended the call), denied (no budget)"
})

type HedgeOutcome = "started" | "won" | "denied"

// ---------------------------------------------------------------------------------------------
// one hedged call
// ---------------------------------------------------------------------------------------------

/**
 * The state of one call: its attempts, the timer of its next hedge, and the event the controller
 * (the caller's fiber) waits for. Attempts and the timer report synchronously (a fiber observer,
 * a timer callback); the controller acts on what they report.
 */
class Call<A, E> implements Owner {
  readonly attempts: Array<Fiber.RuntimeFiber<A, E>> = []
  timer: Timer | undefined = undefined
  /** Attempts started and not yet ended. */
  running = 0
  /** Set when an attempt succeeded. */
  success: Exit.Exit<A, E> | undefined = undefined
  /** The index of the attempt that succeeded. */
  winner = -1
  lastFailure: Cause.Cause<E> | undefined = undefined
  /** A rejection from a breaker or limiter was seen: no more hedges. */
  stopped = false
  timerDue = false
  primaryEnd = -1
  private wake: ((effect: Effect.Effect<void>) => void) | undefined = undefined

  constructor(private readonly now: () => number) {}

  get ended(): boolean {
    return this.success !== undefined || this.running === 0
  }

  private signal(): void {
    const wake = this.wake
    if (wake !== undefined) {
      this.wake = undefined
      wake(Effect.void)
    }
  }

  /** Waits until something happened (an attempt ended, or the timer fired). */
  readonly event: Effect.Effect<void> = Effect.async<void>((resume) => {
    if (this.ended || this.timerDue) resume(Effect.void)
    else this.wake = resume
  })

  /**
   * Starts an attempt in a fiber of its own, at once: it runs on the caller's stack until its
   * first asynchronous step (a fork would wait for the scheduler, and cost more than a fast call).
   */
  start<R>(runtime: Runtime.Runtime<R>, self: Effect.Effect<A, E, R>): void {
    const index = this.attempts.length
    this.running++
    const fiber = Runtime.runFork(runtime)(self)
    this.attempts.push(fiber)
    fiber.addObserver((exit) => {
      this.running--
      if (index === 0) this.primaryEnd = this.now()
      if (Exit.isSuccess(exit)) {
        if (this.success === undefined) {
          this.success = exit
          this.winner = index
        }
      } else if (!Cause.isInterruptedOnly(exit.cause)) {
        this.lastFailure = exit.cause
        if (Option.exists(Cause.failureOption(exit.cause), isRejection)) this.stopped = true
      } else {
        // Interrupted: by this call (a loser), or from inside the effect itself.
        this.lastFailure ??= exit.cause
      }
      this.signal()
    })
  }

  arm(timers: Timers, at: number): void {
    this.timer = timers.schedule(at, this)
  }

  onTimer(): void {
    this.timer = undefined
    this.timerDue = true
    this.signal()
  }

  /** Cancels the timer; returns the attempts still running. */
  settle(timers: Timers): Array<Fiber.RuntimeFiber<A, E>> {
    if (this.timer !== undefined) timers.cancel(this.timer)
    this.timer = undefined
    const out: Array<Fiber.RuntimeFiber<A, E>> = []
    for (let i = 0; i < this.attempts.length; i++) if (i !== this.winner) out.push(this.attempts[i]!)
    return out
  }
}

// ---------------------------------------------------------------------------------------------
// the hedging policy
// ---------------------------------------------------------------------------------------------

class HedgingImpl implements Hedging {
  readonly [TypeId]: typeof TypeId = TypeId
  readonly name: string
  private readonly latencies: Latencies | undefined
  private readonly labels: Record<HedgeOutcome, ReadonlyArray<MetricLabel.MetricLabel>>

  constructor(
    private readonly resolved: Resolved,
    private readonly timers: Timers
  ) {
    this.name = resolved.name
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

  private count(outcome: HedgeOutcome): void {
    hedgesTotal.unsafeUpdate(1, this.labels[outcome])
  }

  execute<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return Effect.withFiberRuntime<A, E, R>((fiber, status) => {
      const clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
      const now = () => clock.unsafeCurrentTimeMillis()
      // The copies run in the caller's runtime: its context (which holds what `self` requires,
      // since this fiber runs `self`'s caller), fiber refs and flags. Taken here, outside the
      // uninterruptible region below, so that the copies can be interrupted.
      const runtime = Runtime.make({
        context: fiber.currentContext as Context.Context<R>,
        fiberRefs: fiber.getFiberRefs(),
        runtimeFlags: status.runtimeFlags
      })
      const budget = this.resolved.budget
      if (budget instanceof LocalBudget) budget.unsafeDeposit(now())
      else if (budget !== undefined) return Effect.zipRight(budget.deposit, this.hedged(self, runtime, now))
      return this.hedged(self, runtime, now)
    })
  }

  private hedged<A, E, R>(
    self: Effect.Effect<A, E, R>,
    runtime: Runtime.Runtime<R>,
    now: () => number
  ): Effect.Effect<A, E, R> {
    const delay = this.delayMillis()
    const latencies = this.latencies
    const start = now()
    if (delay === undefined) {
      // Nothing to hedge on yet: the call runs alone, and its latency is a sample.
      return latencies === undefined
        ? self
        : Effect.onExit(self, (exit) =>
            Effect.sync(() => {
              if (!Exit.isInterrupted(exit)) latencies.record(now() - start)
            })
          )
    }
    const maxHedges = this.resolved.maxHedges
    const budget = this.resolved.budget
    return Effect.uninterruptibleMask((restore) => {
      const call = new Call<A, E>(now)
      call.start(runtime, self)
      if (!call.ended) call.arm(this.timers, start + delay)

      // On a due timer: start one more copy, if no rejection was seen and the budget allows it.
      const hedge = (): Effect.Effect<void> => {
        call.timerDue = false
        if (call.stopped || call.attempts.length > maxHedges) return Effect.void
        const go = () => {
          call.start(runtime, self)
          this.count("started")
          if (call.attempts.length <= maxHedges && !call.ended) call.arm(this.timers, now() + delay)
        }
        if (budget === undefined) return Effect.sync(go)
        return Effect.map(budget.tryWithdraw, (spent) => {
          if (spent) go()
          else this.count("denied")
        })
      }
      const loop: Effect.Effect<void> = Effect.suspend(() => {
        if (call.ended) return Effect.void
        if (call.timerDue) return Effect.zipRight(hedge(), loop)
        return Effect.zipRight(restore(call.event), loop)
      })
      const finish = Effect.suspend((): Effect.Effect<A, E> => {
        if (latencies !== undefined) latencies.record((call.primaryEnd >= 0 ? call.primaryEnd : now()) - start)
        if (call.winner > 0) this.count("won")
        const losers = call.settle(this.timers)
        const result: Effect.Effect<A, E> =
          call.success !== undefined ? call.success : Effect.failCause(call.lastFailure ?? Cause.empty)
        return losers.length === 0 ? result : Effect.zipRight(Fiber.interruptAll(losers), result)
      })
      return Effect.zipRight(
        Effect.onInterrupt(loop, () => Fiber.interruptAll(call.settle(this.timers))),
        finish
      )
    })
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
export const withHedging: {
  <I = never>(
    hedging: Hedging | Context.Tag<I, Hedging>
  ): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R | I>
  <A, E, R, I = never>(
    self: Effect.Effect<A, E, R>,
    hedging: Hedging | Context.Tag<I, Hedging>
  ): Effect.Effect<A, E, R | I>
} = dual(
  2,
  <A, E, R, I>(self: Effect.Effect<A, E, R>, hedging: Hedging | Context.Tag<I, Hedging>): Effect.Effect<A, E, R | I> =>
    isHedging(hedging) ? hedging.execute(self) : Effect.flatMap(hedging, (h) => h.execute(self))
)
