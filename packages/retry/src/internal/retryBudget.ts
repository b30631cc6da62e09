import { OptionRules } from "@circuitry/core"
import * as Edition from "@circuitry/core/Edition"
import * as MetricSeries from "@circuitry/core/MetricSeries"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as RB from "../RetryBudget.js"
import type { InvalidRetryOptions } from "./errors.js"
import { DEFAULT_NAME, invalidOf, Name, NonNegative } from "./options.js"

type RetryBudget = RB.RetryBudget
type Options = RB.Options

/** @internal */
export const TypeId: unique symbol = Symbol.for("@circuitry/retry/RetryBudget")

/** @internal */
export const isRetryBudget = (u: unknown): u is RetryBudget => typeof u === "object" && u !== null && TypeId in u

// ---------------------------------------------------------------------------------------------
// metrics
// ---------------------------------------------------------------------------------------------

const DEPOSITS = {
  name: "circuitry_retry_budget_deposits_total",
  description: "First attempts recorded by a retry budget (each deposits `ratio` tokens)"
}
const RETRIES = {
  name: "circuitry_retry_budget_retries_total",
  description: "Retries (and hedges) asked of a retry budget, by outcome: allowed, denied"
}

/** @internal */
export const depositsTotal = MetricSeries.counter(DEPOSITS)
/** @internal */
export const retriesTotal = MetricSeries.counter(RETRIES)

/**
 * One series of an owner's, made on its first update (an idle budget or hedging holds none): after
 * the owner's release it records nowhere, and is never made.
 *
 * @internal
 */
export class LazySeries {
  private updater: MetricSeries.Updater | undefined = undefined
  constructor(
    private readonly owner: MetricSeries.Owner,
    private readonly metric: Edition.Counter,
    private readonly attributes: ReadonlyArray<readonly [string, string]>
  ) {}

  update(by: number): void {
    ;(this.updater ??= this.owner.series(this.metric, this.attributes)).update(by)
  }
}

/** The series of one budget, held by its owner (released when the budget's scope closes). */
class BudgetMetrics {
  readonly deposit: LazySeries
  readonly allowed: LazySeries
  readonly denied: LazySeries
  constructor(owner: MetricSeries.Owner, budget: string) {
    this.deposit = new LazySeries(owner, depositsTotal, [["budget", budget]])
    this.allowed = new LazySeries(owner, retriesTotal, [
      ["budget", budget],
      ["outcome", "allowed"]
    ])
    this.denied = new LazySeries(owner, retriesTotal, [
      ["budget", budget],
      ["outcome", "denied"]
    ])
  }
}

// ---------------------------------------------------------------------------------------------
// options
// ---------------------------------------------------------------------------------------------

/** @internal */
export interface Resolved {
  readonly name: string
  readonly ratio: number
  readonly minPerSecond: number
  readonly windowMillis: number
}

/** The window is kept as this many buckets: a deposit lasts between 9/10 of the window and all of it. */
const BUCKETS = 10

/** A window of at least one millisecond per bucket. */
const Window = Edition.refine(
  OptionRules.FiniteMillis,
  (ms) => ms >= BUCKETS,
  `a finite duration of at least ${BUCKETS} ms`
)

const OptionsSchema = Schema.Struct({
  name: Schema.optional(Name),
  ratio: Schema.optional(NonNegative),
  minPerSecond: Schema.optional(NonNegative),
  window: Schema.optional(Window)
})

/** @internal */
export const resolve = (options: Options | undefined): Edition.Result<Resolved, InvalidRetryOptions> =>
  Edition.Result.map(
    OptionRules.decode(OptionsSchema, options, invalidOf("RetryBudget", options, "budget")),
    (o): Resolved => ({
      name: o.name ?? DEFAULT_NAME,
      ratio: o.ratio ?? 0.1,
      minPerSecond: o.minPerSecond ?? 10,
      windowMillis: o.window ?? 10_000
    })
  )

// ---------------------------------------------------------------------------------------------
// the budget
// ---------------------------------------------------------------------------------------------

/** Sums of floating-point tokens: a balance this close to a whole token is that token. */
const EPSILON = 1e-9

/**
 * A Finagle-style budget. Deposits (first attempts) and withdrawals (retries) go into a ring of
 * buckets over the window, so both expire together: in any window, retries taken from deposits
 * are at most `ratio` times the first attempts in it. Beside it, a token bucket refilled at
 * `minPerSecond` (holding at most one second's worth) is the floor, spent when the deposits are.
 *
 * Every operation is one synchronous step on typed arrays (JavaScript runs it to completion, so
 * concurrent fibers cannot overspend), reads the time it is given, and allocates nothing.
 *
 * @internal
 */
export class LocalBudget implements RetryBudget {
  readonly [TypeId]: typeof TypeId = TypeId
  readonly name: string
  private readonly ratio: number
  private readonly minPerSecond: number
  private readonly bucketMillis: number
  /** The bucket index (time / bucketMillis) each slot holds; -Infinity when never used. */
  private readonly stamps = new Float64Array(BUCKETS).fill(Number.NEGATIVE_INFINITY)
  private readonly deposits = new Float64Array(BUCKETS)
  private readonly withdrawals = new Float64Array(BUCKETS)
  private readonly floorCapacity: number
  private floorTokens: number
  private floorAt: number
  private readonly metrics: BudgetMetrics

  constructor(resolved: Resolved, now: number, owner: MetricSeries.Owner) {
    this.name = resolved.name
    this.ratio = resolved.ratio
    this.minPerSecond = resolved.minPerSecond
    this.bucketMillis = resolved.windowMillis / BUCKETS
    // At least one token, so that a floor under one per second still allows a retry now and then.
    this.floorCapacity = resolved.minPerSecond === 0 ? 0 : Math.max(1, resolved.minPerSecond)
    this.floorTokens = this.floorCapacity
    this.floorAt = now
    this.metrics = new BudgetMetrics(owner, resolved.name)
  }

  /** The slot of the bucket that holds `now`, emptied first if it held an older bucket. */
  private slot(now: number): number {
    const index = Math.floor(now / this.bucketMillis)
    const slot = ((index % BUCKETS) + BUCKETS) % BUCKETS
    if (this.stamps[slot] !== index) {
      this.stamps[slot] = index
      this.deposits[slot] = 0
      this.withdrawals[slot] = 0
    }
    return slot
  }

  /** Tokens from deposits in the window, less what was withdrawn from them (may be negative). */
  private pool(now: number): number {
    const oldest = Math.floor(now / this.bucketMillis) - BUCKETS
    let deposits = 0
    let withdrawals = 0
    for (let i = 0; i < BUCKETS; i++) {
      if (this.stamps[i]! > oldest) {
        deposits += this.deposits[i]!
        withdrawals += this.withdrawals[i]!
      }
    }
    return deposits * this.ratio - withdrawals
  }

  private refill(now: number): void {
    const elapsed = now - this.floorAt
    if (elapsed > 0) {
      this.floorTokens = Math.min(this.floorCapacity, this.floorTokens + (elapsed * this.minPerSecond) / 1000)
      this.floorAt = now
    }
  }

  /** Records one first attempt. */
  unsafeDeposit(now: number): void {
    this.deposits[this.slot(now)]! += 1
    this.metrics.deposit.update(1)
  }

  /** Spends one token if there is one: from the deposits first, then from the floor. */
  unsafeTryWithdraw(now: number): boolean {
    if (this.pool(now) + EPSILON >= 1) {
      this.withdrawals[this.slot(now)]! += 1
    } else {
      this.refill(now)
      if (this.floorTokens + EPSILON < 1) {
        this.metrics.denied.update(1)
        return false
      }
      this.floorTokens -= 1
    }
    this.metrics.allowed.update(1)
    return true
  }

  /** Whole tokens that could be spent now. */
  unsafeAvailable(now: number): number {
    this.refill(now)
    return Math.floor(Math.max(0, this.pool(now)) + this.floorTokens + EPSILON)
  }

  get deposit(): Effect.Effect<void> {
    return Effect.clockWith((clock) => Effect.sync(() => this.unsafeDeposit(Edition.nowUnsafe(clock))))
  }

  get tryWithdraw(): Effect.Effect<boolean> {
    return Effect.clockWith((clock) => Effect.sync(() => this.unsafeTryWithdraw(Edition.nowUnsafe(clock))))
  }

  get available(): Effect.Effect<number> {
    return Effect.clockWith((clock) => Effect.sync(() => this.unsafeAvailable(Edition.nowUnsafe(clock))))
  }
}

/** @internal */
export const make = (options?: Options): Effect.Effect<RetryBudget, InvalidRetryOptions, Scope.Scope> =>
  Effect.flatMap(Edition.fromResult(resolve(options)), (resolved) =>
    // The budget's series leave the registry when its scope closes (budgets of one name share them).
    Effect.flatMap(MetricSeries.scoped, (owner) =>
      Effect.clockWith((clock) => Effect.sync(() => new LocalBudget(resolved, Edition.nowUnsafe(clock), owner)))
    )
  )

/** @internal */
export const layer = <I>(tag: Edition.Key<I, RetryBudget>, options?: Options): Layer.Layer<I, InvalidRetryOptions> =>
  Edition.layerScoped(tag, make(options))

/** A budget given as a value or as a tag, resolved. @internal */
export const budgetOf = <I>(budget: RetryBudget | Edition.Key<I, RetryBudget>): Effect.Effect<RetryBudget, never, I> =>
  isRetryBudget(budget) ? Effect.succeed(budget) : Edition.service(budget)

/** @internal */
export const isBudgetOrTag = (u: unknown): u is RetryBudget | Edition.Key<unknown, RetryBudget> =>
  isRetryBudget(u) || Edition.isKey(u)
