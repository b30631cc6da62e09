/**
 * The algorithms that set a limiter's limit: fixed, or adaptive to the measured latency and drops
 * (AIMD, Gradient2, Vegas, after Netflix concurrency-limits). A `Limit` is a description;
 * `Limiter.make` validates it and runs it.
 *
 * @since 0.1.0
 */
import type * as Edition from "@circuitry/core/Edition"
import { millis } from "@circuitry/core/OptionRules"
import type { Algorithm } from "./internal/algorithm.js"
import * as Aimd from "./internal/aimd.js"
import * as Fixed from "./internal/fixed.js"
import * as Gradient2 from "./internal/gradient2.js"
import * as Rules from "./internal/limitRules.js"
import * as Paced from "./internal/paced.js"
import * as Vegas from "./internal/vegas.js"
import * as Windowed from "./internal/windowed.js"

/**
 * @since 0.1.0
 * @category symbols
 */
export const TypeId: unique symbol = Symbol.for("@circuitry/limiter/Limit")

/**
 * @since 0.1.0
 * @category symbols
 */
export type TypeId = typeof TypeId

/**
 * How a limiter's limit is set. Constructors never throw: a value out of range is reported by
 * `Limiter.make` as `InvalidLimiterOptions`.
 *
 * The adaptive limits (aimd, gradient2, vegas) take one update per round trip: a call that started
 * before the algorithm's last update was admitted under the old limit, and its sample is not given
 * to the algorithm. Drops within a round trip of a backoff are then one congestion event (one
 * backoff, as TCP counts them), and an increase waits for a call admitted under the new limit.
 *
 * @since 0.1.0
 * @category models
 */
export interface Limit {
  readonly [TypeId]: TypeId
  readonly _tag: "Fixed" | "AIMD" | "Gradient2" | "Vegas" | "Windowed"
  /** A short human description, e.g. `gradient2(initial 20, min 20, max 200)`. */
  readonly description: string
  /** The lowest and highest limit the algorithm may set. */
  readonly min: number
  readonly max: number
  /** @internal the first rule this limit breaks, if any */
  readonly problem: string | undefined
  /** @internal a fresh algorithm (valid only when `problem` is undefined) */
  readonly makeAlgorithm: () => Algorithm<unknown>
  /** @internal the algorithm fed every sample it is given, without the pacing by round trip */
  readonly makeStep: () => Algorithm<unknown>
}

/**
 * @since 0.1.0
 * @category guards
 */
export const isLimit = (u: unknown): u is Limit => typeof u === "object" && u !== null && TypeId in u

/**
 * AIMD's defaults when it reads latency: a call slower than 1.5x the base is a drop, and a backoff
 * that takes the queue this lets build (1.5x the capacity, and a call's worth over) back under the
 * capacity, where the base round trip is measured again (a backoff of 0.9 would never get there,
 * and the base would creep up with the queue at every cycle).
 */
const RTT_TOLERANCE = 1.5
const RELATIVE_BACKOFF = 0.5

/** A number or a function of the limit, as a function (checked when the limit is made). */
const ofLimit = (value: number | ((limit: number) => number)) => (typeof value === "function" ? value : () => value)

const make = (
  tag: Limit["_tag"],
  description: string,
  min: number,
  max: number,
  problem: string | undefined,
  makeStep: () => Algorithm<any>,
  paced = true
): Limit => ({
  [TypeId]: TypeId,
  _tag: tag,
  description,
  min,
  max,
  problem,
  makeStep,
  makeAlgorithm: paced ? (): Algorithm<any> => Paced.make(makeStep()) : makeStep
})

/**
 * A limit that never changes: at most `limit` calls at once. With `queue` options on the limiter,
 * a bulkhead.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Limit } from "@circuitry/limiter"
 *
 * const bulkhead = Limit.fixed(10)
 * ```
 */
export const fixed = (limit: number): Limit =>
  make("Fixed", `fixed(${limit})`, limit, limit, Rules.fixed(limit), () => Fixed.make(limit), false)

/**
 * Additive increase, multiplicative decrease (Netflix `AIMDLimit`): +1 after a call while at least
 * half the limit is in use, `limit * backoff` (rounded down) after a drop or a call slower than
 * `timeout`, at most once per round trip (see `Limit`). Without a `timeout`, a call slower than
 * `rttTolerance` times the base round trip (the lowest of the last two cycles between backoffs)
 * plus 1 ms is a drop, so the limit comes down before the queue it lets build reaches the callers'
 * deadlines. Defaults: initial 20, min 20, max 200; without `timeout`, rttTolerance 1.5 and
 * backoff 0.5 (so that a backoff takes the queue back under the capacity, where the base is
 * measured again); with a `timeout` (and no rttTolerance), backoff 0.9 (Netflix's).
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Limit } from "@circuitry/limiter"
 *
 * // Netflix's: a drop or a call slower than 2 seconds backs off
 * const limit = Limit.aimd({ initial: 10, min: 1, max: 100, backoff: 0.5, timeout: "2 seconds" })
 * // Latency-led: a call slower than 1.25x the base round trip (+ 1 ms) backs off, by 0.5
 * const relative = Limit.aimd({ min: 2, max: 100, rttTolerance: 1.25 })
 * ```
 */
export const aimd = (options?: {
  readonly initial?: number | undefined
  readonly min?: number | undefined
  readonly max?: number | undefined
  /** 0 < backoff < 1: the limit is multiplied by it on a drop. Default 0.5; 0.9 with a `timeout` alone. */
  readonly backoff?: number | undefined
  /** A call slower than this counts as a drop. Default: none (`rttTolerance` instead). */
  readonly timeout?: Edition.DurationInput | undefined
  /**
   * > 1: a call slower than this times the base round trip (plus 1 ms) counts as a drop. Default
   * 1.5 without a `timeout`; with a `timeout`, only when given. Keep `backoff` under
   * `1 / rttTolerance`: a backoff must take the queue back under the capacity, where the base is
   * measured again, or the base rises with the queue at every cycle.
   *
   * @since 0.2.0
   */
  readonly rttTolerance?: number | undefined
}): Limit => {
  const min = options?.min ?? 20
  const max = options?.max ?? 200
  const initial = options?.initial ?? Math.min(max, Math.max(min, 20))
  // An input millis refuses is a problem (see Rules), and a limit with a problem makes no algorithm.
  const timeoutMillis = options?.timeout === undefined ? Infinity : millis(options.timeout)!
  const rttTolerance = options?.rttTolerance ?? (options?.timeout === undefined ? RTT_TOLERANCE : undefined)
  const backoff = options?.backoff ?? (rttTolerance === undefined ? 0.9 : RELATIVE_BACKOFF)
  const problem = Rules.aimd(options, { initial, min, max })
  return make("AIMD", `aimd(initial ${initial}, min ${min}, max ${max}, backoff ${backoff})`, min, max, problem, () =>
    Aimd.make({ initial, min, max, backoff, timeoutMillis, rttTolerance })
  )
}

/**
 * Gradient2 (Netflix `Gradient2Limit`): follows the ratio of the long-term average round trip to
 * the current one, with room for `queueSize` extra calls, once per round trip (see `Limit`). The
 * long average does not rise with a call that started with half the limit or more in use (it would
 * follow the queue the limit lets build), except at `min`. Defaults as the original's: initial 20,
 * min 20, max 200, smoothing 0.2, longWindow 600 samples, rttTolerance 1.5, queueSize 4.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Limit } from "@circuitry/limiter"
 *
 * const limit = Limit.gradient2({ initial: 20, min: 5, max: 500, queueSize: (limit) => Math.sqrt(limit) })
 * ```
 */
export const gradient2 = (options?: {
  readonly initial?: number | undefined
  readonly min?: number | undefined
  readonly max?: number | undefined
  /** 0 < smoothing <= 1: how much of each new estimate is taken. Default 0.2. */
  readonly smoothing?: number | undefined
  /** Samples in the long-term average (whole, >= 1). Default 600. */
  readonly longWindow?: number | undefined
  /** >= 1: how much slower than the long average a call may be before the limit drops. Default 1.5. */
  readonly rttTolerance?: number | undefined
  /** Extra calls allowed over the estimate, a number >= 0 or a function of the limit. Default 4. */
  readonly queueSize?: number | ((limit: number) => number) | undefined
}): Limit => {
  const min = options?.min ?? 20
  const max = options?.max ?? 200
  const initial = options?.initial ?? Math.min(max, Math.max(min, 20))
  const smoothing = options?.smoothing ?? 0.2
  const longWindow = options?.longWindow ?? 600
  const rttTolerance = options?.rttTolerance ?? 1.5
  const queueSize = options?.queueSize ?? 4
  const problem = Rules.gradient2(options, { initial, min, max })
  const queueOf = ofLimit(queueSize)
  return make("Gradient2", `gradient2(initial ${initial}, min ${min}, max ${max})`, min, max, problem, () =>
    Gradient2.make({
      initial,
      min,
      max,
      smoothing,
      longWindow,
      rttTolerance,
      // A user function that answers nonsense allows no extra room rather than poisoning the limit.
      queueSize: (limit) => {
        const q = queueOf(limit)
        return Number.isFinite(q) && q > 0 ? q : 0
      }
    })
  )
}

/**
 * Vegas (Netflix `VegasLimit`, after TCP Vegas): estimates the queue the limit builds from the
 * lowest round trip seen and the current one; grows while the queue is under `alpha`, shrinks
 * when it is over `beta` or on a drop, once per round trip (see `Limit`). A probe for a new base
 * waits for a call that started with under half the limit in use (or at `min`), so that the base
 * does not take in the queue. Defaults as the original's: initial 20, min 1, max 1000,
 * alpha `3 * log10(limit)`, beta `6 * log10(limit)`, smoothing 1, probeMultiplier 30.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Limit } from "@circuitry/limiter"
 *
 * const limit = Limit.vegas({ initial: 20, max: 500, alpha: 3, beta: 6 })
 * ```
 */
export const vegas = (options?: {
  readonly initial?: number | undefined
  readonly min?: number | undefined
  readonly max?: number | undefined
  /** Grow while the estimated queue is under alpha: a number >= 0 or a function of the limit. */
  readonly alpha?: number | ((limit: number) => number) | undefined
  /** Shrink when the estimated queue is over beta: a number >= alpha or a function of the limit. */
  readonly beta?: number | ((limit: number) => number) | undefined
  /** 0 < smoothing <= 1: how much of each new limit is taken. Default 1. */
  readonly smoothing?: number | undefined
  /** Take a fresh base round trip about every `probeMultiplier * limit` samples. Default 30. */
  readonly probeMultiplier?: number | undefined
}): Limit => {
  const min = options?.min ?? 1
  const max = options?.max ?? 1000
  const initial = options?.initial ?? Math.min(max, Math.max(min, 20))
  const alpha = options?.alpha ?? ((limit: number) => 3 * Vegas.log10Root(limit))
  const beta = options?.beta ?? ((limit: number) => 6 * Vegas.log10Root(limit))
  const smoothing = options?.smoothing ?? 1
  const probeMultiplier = options?.probeMultiplier ?? 30
  const problem = Rules.vegas(options, { initial, min, max })
  return make("Vegas", `vegas(initial ${initial}, min ${min}, max ${max})`, min, max, problem, () =>
    Vegas.make({
      initial,
      min,
      max,
      alpha: ofLimit(alpha),
      beta: ofLimit(beta),
      threshold: Vegas.log10Root,
      increase: (limit) => limit + Vegas.log10Root(limit),
      decrease: (limit) => limit - Vegas.log10Root(limit),
      smoothing,
      probeMultiplier
    })
  )
}

/**
 * Feeds another limit one sample per sampling window instead of one per call (Netflix
 * `WindowedLimit`): the window's average round trip, its most calls in flight, and a drop if any
 * call in it dropped. A window lasts twice the lowest round trip seen, between `minWindow` and
 * `maxWindow`, and counts only with at least `windowSize` calls. This is how Netflix runs Gradient2
 * and AIMD in servers: one decrease per window rather than one per slow call, and Gradient2's
 * long-term average (`longWindow` samples) then spans `longWindow` windows, so it does not follow a
 * sustained overload within seconds. The inner limit takes every window (a window is already at
 * least two round trips). Defaults as the original's: 1 second, 1 second, 10.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { Limit } from "@circuitry/limiter"
 *
 * const limit = Limit.windowed(Limit.gradient2({ min: 2, max: 200 }), { minWindow: "200 millis", maxWindow: "1 second" })
 * ```
 */
export const windowed = (
  limit: Limit,
  options?: {
    /** >= 100 ms. Default 1 second. */
    readonly minWindow?: Edition.DurationInput | undefined
    /** >= minWindow. Default 1 second. */
    readonly maxWindow?: Edition.DurationInput | undefined
    /** Calls a window needs to count (whole, >= 10). Default 10. */
    readonly windowSize?: number | undefined
  }
): Limit => {
  // As in aimd: an input millis refuses is a problem, and then no algorithm is made.
  const minWindowMillis = millis(options?.minWindow ?? "1 second")!
  const maxWindowMillis = millis(options?.maxWindow ?? "1 second")!
  const windowSize = options?.windowSize ?? 10
  const inner = isLimit(limit) ? limit : undefined
  const problem =
    inner === undefined
      ? "limit: windowed needs a limit made by Limit.fixed, aimd, gradient2 or vegas"
      : (inner.problem ?? Rules.windowed(options))
  return make(
    "Windowed",
    `windowed(${inner?.description ?? "?"})`,
    inner?.min ?? 1,
    inner?.max ?? 1,
    problem,
    () => Windowed.make({ minWindowMillis, maxWindowMillis, windowSize }, inner!.makeStep()),
    false
  )
}
