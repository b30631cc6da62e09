/** A limiter's options, validated once into `Resolved`, and the default `isDrop`. */
import { OptionRules } from "@circuitry/core"
import * as Edition from "@circuitry/core/Edition"
import { isRejection } from "@circuitry/core/Rejection"
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Limit from "../Limit.js"
import type * as L from "../Limiter.js"
import { InvalidLimiterOptions } from "./errors.js"
import { AnObject, decode, Fraction, named } from "./rules.js"

/** @internal */
export interface Resolved {
  readonly name: string
  readonly limit: Limit.Limit
  readonly queueSize: number
  readonly queueTimeoutMillis: number
  readonly partitions: ReadonlyArray<readonly [string, number]>
  readonly isDrop: (cause: Cause.Cause<unknown>) => boolean
}

/** A TimeoutException, or an error caused by one (an HTTP client's RequestError "Transport"). */
const isTimeout = (u: unknown): boolean =>
  Edition.isTimeoutError(u) ||
  (typeof u === "object" && u !== null && Edition.isTimeoutError((u as { readonly cause?: unknown }).cause))

/** @internal */
export const defaultIsDrop = (cause: Cause.Cause<unknown>): boolean => {
  for (const error of Edition.failures(cause)) if (isTimeout(error) || isRejection(error)) return true
  for (const defect of Edition.defects(cause)) if (isTimeout(defect)) return true
  return false
}

/** The most callers one queue may hold: a bigger queue is a memory leak waiting for an outage. */
const MAX_QUEUE = 1_000_000

const LimiterOptions = Schema.Struct({
  limit: Schema.optional(OptionRules.Is(Limit.isLimit, "made by Limit.fixed, aimd, gradient2 or vegas")),
  queue: Schema.optional(AnObject<NonNullable<L.Options["queue"]>>("an object")),
  partitions: Schema.optional(AnObject<Record<string, number>>("an object of shares by name")),
  isDrop: Schema.optional(
    OptionRules.Is((u): u is Resolved["isDrop"] => typeof u === "function", "a function of a Cause")
  )
})

const QueueOptions = Schema.Struct({
  size: Schema.optional(
    Edition.refine(
      Schema.Number,
      (n) => Number.isInteger(n) && n >= 0 && n <= MAX_QUEUE,
      `a whole number between 0 and ${MAX_QUEUE}`
    )
  ),
  timeout: Schema.optional(OptionRules.FiniteMillis)
})

const Share = Fraction("a share with 0 < share <= 1", true)

/** A share for each partition the options name. */
const Shares = (partitions: object) => Schema.Struct(Object.fromEntries(Object.keys(partitions).map((p) => [p, Share])))

/**
 * Validates options once, at construction, into a typed error that names the option and its rule.
 *
 * @internal
 */
export const resolve = (options: L.Options | undefined): Effect.Effect<Resolved, InvalidLimiterOptions> =>
  Effect.gen(function* () {
    const { at, name } = yield* named("limiter", options)
    const o = yield* decode(LimiterOptions, options, { suffix: at })
    const limit = o.limit ?? Limit.gradient2()
    if (limit.problem !== undefined) return yield* new InvalidLimiterOptions({ message: `${limit.problem}${at}` })
    const queue = yield* decode(QueueOptions, o.queue, { prefix: "queue.", suffix: at })
    const shares = yield* decode(Shares(o.partitions ?? {}), o.partitions, { prefix: "partitions.", suffix: at })
    const partitions = Object.entries(shares)
    const total = partitions.reduce((sum, [, share]) => sum + share, 0)
    if (total > 1 + 1e-9) {
      return yield* new InvalidLimiterOptions({
        message: `partitions' shares must add up to at most 1, got ${total}${at}`
      })
    }
    return {
      name,
      limit,
      queueSize: queue.size ?? 0,
      queueTimeoutMillis: queue.timeout ?? 1_000,
      partitions,
      isDrop: o.isDrop ?? defaultIsDrop
    }
  })
