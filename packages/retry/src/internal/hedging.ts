import { OptionRules } from "@circuitry/core"
import * as Edition from "@circuitry/core/Edition"
import * as MetricSeries from "@circuitry/core/MetricSeries"
import { isRejection } from "@circuitry/core/Rejection"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { dual } from "effect/Function"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as H from "../Hedging.js"
import type * as RB from "../RetryBudget.js"
import type { InvalidRetryOptions } from "./errors.js"
import { Latencies } from "./latencies.js"
import { broken, DEFAULT_NAME, invalidOf, Name } from "./options.js"
import { isRetryBudget, LazySeries, LocalBudget } from "./retryBudget.js"
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

/** The delay's rules that a check after decoding states too. */
const FIXED_RULE = "a finite duration >= 0 or { percentile }"
const MAX_RULE = "a finite duration >= delay.min"

/** @internal */
export interface Resolved {
  readonly name: string
  readonly delay: Delay
  readonly maxHedges: number
  readonly budget: RB.RetryBudget | undefined
}

/** A fixed delay. Its rule names the other form, for a caller who meant a percentile. */
const FixedDelay = OptionRules.Worded(OptionRules.FiniteMillis, FIXED_RULE)

/** A percentile of the observed latencies, within `min` and `max` (`max >= min` is checked after decoding). */
const PercentileDelay = Schema.Struct({
  percentile: Edition.refine(Schema.Number, (p) => p >= 1 && p < 100, "a number in [1, 100) (95 for p95)"),
  min: Schema.optional(OptionRules.FiniteMillis),
  max: Schema.optional(OptionRules.Worded(OptionRules.FiniteMillis, MAX_RULE))
})

const Budget = OptionRules.Is(isRetryBudget, "a RetryBudget")

/**
 * The options, by the form of their delay: an object with a `percentile` is a percentile delay,
 * anything else a fixed one. One schema per form, rather than a union of the two, so that a broken
 * rule is reported in the form the caller meant (a union would report the first form's rule).
 */
const WithFixedDelay = Schema.Struct({
  name: Schema.optional(Name),
  delay: Schema.optional(FixedDelay),
  maxHedges: Schema.optional(OptionRules.Whole(1)),
  budget: Schema.optional(Budget)
})
const WithPercentileDelay = Schema.Struct({
  name: Schema.optional(Name),
  delay: PercentileDelay,
  maxHedges: Schema.optional(OptionRules.Whole(1)),
  budget: Schema.optional(Budget)
})

/** The delay of `options`, as given, when it is of the percentile form. */
const percentileDelay = (options: unknown): { readonly percentile: unknown; readonly max?: unknown } | undefined => {
  const delay = typeof options === "object" && options !== null ? (options as { delay?: unknown }).delay : undefined
  return typeof delay === "object" && delay !== null && "percentile" in delay ? delay : undefined
}

/** @internal */
export const resolve = (options: Options): Edition.Result<Resolved, InvalidRetryOptions> => {
  const invalid = invalidOf("Hedging", options, "hedging")
  const resolved = (o: { readonly name?: string | undefined; readonly maxHedges?: number | undefined }, delay: Delay) =>
    Edition.Result.succeed({ name: o.name ?? DEFAULT_NAME, delay, maxHedges: o.maxHedges ?? 1, budget: options.budget })
  const given = percentileDelay(options)
  if (given !== undefined) {
    return Edition.Result.flatMap(OptionRules.decode(WithPercentileDelay, options, invalid), (o) => {
      const { max, min = 0, percentile } = o.delay
      if (max !== undefined && max < min) {
        return Edition.Result.fail(invalid(broken("delay.max", MAX_RULE, given.max)))
      }
      return resolved(o, { _tag: "Percentile", quantile: percentile / 100, min, max })
    })
  }
  return Edition.Result.flatMap(OptionRules.decode(WithFixedDelay, options, invalid), (o) =>
    o.delay === undefined
      ? Edition.Result.fail(invalid(broken("delay", FIXED_RULE, undefined)))
      : resolved(o, { _tag: "Fixed", millis: o.delay })
  )
}

// ---------------------------------------------------------------------------------------------
// metrics
// ---------------------------------------------------------------------------------------------

const HEDGES = {
  name: "circuitry_hedging_hedges_total",
  description: "Hedges of a call, by outcome: started, won (a hedge's success ended the call), denied (no budget)"
}

/** @internal */
export const hedgesTotal = MetricSeries.counter(HEDGES)

type HedgeOutcome = "started" | "won" | "denied"

// ---------------------------------------------------------------------------------------------
// one hedged call
// ---------------------------------------------------------------------------------------------

/**
 * One call, as a state machine driven by callbacks: each copy's fiber observer and the hedge
 * timer. The caller's fiber waits in one `Edition.callback` (`Effect.async`, `Effect.callback`); the callback that decides the call
 * resumes it with the result (after interrupting the losers, so their finalizers have run when
 * the call returns), and interrupting the caller interrupts every copy. One object per call and
 * no effect of its own on the way, so that a fast success costs little beyond its copy's fiber.
 */
class HedgedCall<A, E, R> implements Owner {
  private readonly attempts: Array<Edition.Fiber<A, E>> = []
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
    private readonly caller: Edition.Caller<R>,
    private readonly now: () => number,
    private readonly delay: number
  ) {
    this.start = now()
  }

  run(): Effect.Effect<A, E> {
    return Edition.callback<A, E>((resume) => {
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
   * asynchronous step (a fork would wait for the scheduler, and cost more than a fast call). The
   * copies run in the caller's context (which holds what `self` requires, since the caller's fiber
   * is the one running `self`'s caller), interruptible even when the caller is not, so that a
   * loser can always be stopped.
   */
  private launch(): void {
    const index = this.attempts.length
    this.running++
    const fiber = this.caller.fork(this.self)
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
    if (!Edition.hasInterruptsOnly(exit.cause)) {
      this.lastFailure = exit.cause
      if (Option.exists(Edition.findError(exit.cause), isRejection)) this.stopped = true
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
    this.caller.fork(budget.tryWithdraw).addObserver((exit) => {
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
    const losers: Array<Edition.Fiber<A, E>> = []
    for (let i = 0; i < this.attempts.length; i++) if (i !== winner) losers.push(this.attempts[i]!)
    const resume = this.resume!
    // `this.running` counts the losers still running; the finished ones are interrupted at no cost.
    resume(this.running === 0 ? result : Effect.andThen(Fiber.interruptAll(losers), result))
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
  /** Its series, held by an owner released when its scope closes (hedgings of one name share them). */
  private readonly series: Record<HedgeOutcome, LazySeries>

  constructor(
    private readonly resolved: Resolved,
    readonly timers: Timers,
    owner: MetricSeries.Owner
  ) {
    this.name = resolved.name
    this.maxHedges = resolved.maxHedges
    this.budget = resolved.budget
    this.latencies = resolved.delay._tag === "Percentile" ? new Latencies(resolved.delay.quantile) : undefined
    const series = (outcome: HedgeOutcome) =>
      new LazySeries(owner, hedgesTotal, [
        ["hedging", resolved.name],
        ["outcome", outcome]
      ])
    this.series = { started: series("started"), won: series("won"), denied: series("denied") }
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
    return Effect.sync(() => {
      const millis = this.delayMillis()
      return millis === undefined ? Option.none() : Option.some(Duration.millis(millis))
    })
  }

  get samples(): Effect.Effect<number> {
    return Effect.sync(() => this.latencies?.samples ?? 0)
  }

  count(outcome: HedgeOutcome): void {
    this.series[outcome].update(1)
  }

  execute<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return Edition.withCaller<A, E, R>((caller) => {
      const clock = caller.clock
      const now = () => Edition.nowUnsafe(clock)
      const budget = this.budget
      if (budget instanceof LocalBudget) budget.unsafeDeposit(now())
      const delay = this.delayMillis()
      const call = delay === undefined ? this.alone(self, now) : new HedgedCall(this, self, caller, now, delay).run()
      return budget === undefined || budget instanceof LocalBudget ? call : Effect.andThen(budget.deposit, call)
    })
  }

  /** Nothing to hedge on yet: the call runs alone, and its latency is a sample. */
  private alone<A, E, R>(self: Effect.Effect<A, E, R>, now: () => number): Effect.Effect<A, E, R> {
    const latencies = this.latencies
    if (latencies === undefined) return self
    const start = now()
    return Effect.onExit(self, (exit) =>
      Effect.sync(() => {
        if (Exit.isSuccess(exit) || !Edition.hasInterrupts(exit.cause)) latencies.record(now() - start)
      })
    )
  }
}

// ---------------------------------------------------------------------------------------------
// constructors and the combinator
// ---------------------------------------------------------------------------------------------

/** @internal */
export const make = (options: Options): Effect.Effect<Hedging, InvalidRetryOptions, Scope.Scope> =>
  Effect.flatMap(Edition.fromResult(resolve(options)), (resolved) =>
    Effect.flatMap(MetricSeries.scoped, (owner) =>
      Effect.map(Timers.make, (timers) => new HedgingImpl(resolved, timers, owner))
    )
  )

/** @internal */
export const layer = <I>(tag: Edition.Key<I, Hedging>, options: Options): Layer.Layer<I, InvalidRetryOptions> =>
  Edition.layerScoped(tag, make(options))

/** @internal */
export const withHedging: typeof H.withHedging = dual(
  2,
  <A, E, R, I>(self: Effect.Effect<A, E, R>, hedging: Hedging | Edition.Key<I, Hedging>): Effect.Effect<A, E, R | I> =>
    isHedging(hedging) ? hedging.execute(self) : Effect.flatMap(Edition.service(hedging), (h) => h.execute(self))
)
