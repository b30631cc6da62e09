/**
 * The rules of the limits' options. A limit is a description that never throws: the first rule its
 * options break is its `problem` (`"limit: aimd backoff must be a number with 0 < backoff < 1, got
 * 1"`), which `Limiter.make` reports as `InvalidLimiterOptions`. Each option is decoded by a
 * Schema; the rules across options (`max` against `min`, `beta` against `alpha`) are checked after.
 */
import { OptionRules } from "@circuitry/core"
import * as Edition from "@circuitry/core/Edition"
import * as Schema from "effect/Schema"
import { Above, Fraction } from "./rules.js"

/** A limit's bounds, as the constructor resolved them (the options' or the defaults). */
export interface Bounds {
  readonly initial: number
  readonly min: number
  readonly max: number
}

/** `max` and `initial` are checked against `min` and `max` once decoded (see `across`). */
const WholeNumber = Edition.refine(Schema.Number, Number.isInteger, "a whole number")

const bounds = {
  initial: Schema.optional(WholeNumber),
  min: Schema.optional(OptionRules.Whole(1)),
  max: Schema.optional(WholeNumber)
}

const across = ({ initial, max, min }: Bounds): string | undefined =>
  max < min
    ? `max must be a whole number >= min (${min}), got ${OptionRules.show(max)}`
    : initial < min || initial > max
      ? `initial must be a whole number in [min, max] = [${min}, ${max}], got ${OptionRules.show(initial)}`
      : undefined

const OfLimit = OptionRules.Is(
  (u): u is number | ((limit: number) => number) =>
    typeof u === "function" || (typeof u === "number" && Number.isFinite(u) && u >= 0),
  "a number >= 0 or a function of the limit"
)

const Smoothing = Fraction("a number with 0 < smoothing <= 1", true)

/**
 * The first rule `options` break, decoded by `schema` and then checked by `check`, as the problem
 * of the `limit`: `"limit: <limit> <option> must be <rule>, got <value>"`.
 */
const problemOf = <A, I>(
  limit: string,
  schema: OptionRules.Codec<A, I>,
  options: unknown,
  check: (options: A) => string | undefined
): string | undefined => {
  const problem = Edition.Result.match(
    OptionRules.decode(schema, options, (message) => message),
    { onFailure: (message) => message, onSuccess: check }
  )
  return problem === undefined ? undefined : `limit: ${limit} ${problem}`
}

const FixedOptions = Schema.Struct({ limit: OptionRules.Whole(1) })

/** @internal */
export const fixed = (limit: number): string | undefined => problemOf("fixed", FixedOptions, { limit }, () => undefined)

const AimdOptions = Schema.Struct({
  ...bounds,
  backoff: Schema.optional(Fraction("a number with 0 < backoff < 1", false)),
  timeout: Schema.optional(OptionRules.PositiveMillis),
  rttTolerance: Schema.optional(Above(1, false))
})

/** @internal */
export const aimd = (options: unknown, resolved: Bounds): string | undefined =>
  problemOf("aimd", AimdOptions, options, () => across(resolved))

const Gradient2Options = Schema.Struct({
  ...bounds,
  smoothing: Schema.optional(Smoothing),
  longWindow: Schema.optional(OptionRules.Whole(1)),
  rttTolerance: Schema.optional(Above(1, true)),
  queueSize: Schema.optional(OfLimit)
})

/** @internal */
export const gradient2 = (options: unknown, resolved: Bounds): string | undefined =>
  problemOf("gradient2", Gradient2Options, options, () => across(resolved))

const VegasOptions = Schema.Struct({
  ...bounds,
  alpha: Schema.optional(OfLimit),
  beta: Schema.optional(OfLimit),
  smoothing: Schema.optional(Smoothing),
  probeMultiplier: Schema.optional(OptionRules.Whole(1))
})

/** @internal */
export const vegas = (options: unknown, resolved: Bounds): string | undefined =>
  problemOf(
    "vegas",
    VegasOptions,
    options,
    ({ alpha, beta }) =>
      across(resolved) ??
      (typeof alpha === "number" && typeof beta === "number" && beta < alpha
        ? `beta must be a number >= alpha or a function of the limit, got ${OptionRules.show(beta)}`
        : undefined)
  )

const WindowedOptions = Schema.Struct({
  minWindow: Schema.optional(
    Edition.refine(OptionRules.FiniteMillis, (ms) => ms >= 100, "a duration of at least 100 millis")
  ),
  maxWindow: Schema.optional(OptionRules.FiniteMillis),
  windowSize: Schema.optional(OptionRules.Whole(10))
})

/** @internal */
export const windowed = (options: unknown): string | undefined =>
  problemOf("windowed", WindowedOptions, options, ({ maxWindow = 1_000, minWindow = 1_000 }) =>
    maxWindow >= minWindow ? undefined : "maxWindow must be a duration of at least minWindow"
  )
