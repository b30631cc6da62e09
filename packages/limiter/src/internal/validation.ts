/** Checks shared by the validation of limits and options. */
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"

/** Milliseconds of a DurationInput, or undefined when it is not a finite duration >= 0. */
export const millis = (input: Duration.DurationInput): number | undefined => {
  // Duration clamps negative inputs to zero: a negative wait is a mistake to report, not a zero.
  if ((typeof input === "number" || typeof input === "bigint") && !(input >= 0)) return undefined
  if (typeof input === "string" && input.trim().startsWith("-")) return undefined
  const decoded = Duration.decodeUnknown(input)
  if (Option.isNone(decoded)) return undefined
  const ms = Duration.toMillis(decoded.value)
  return Number.isFinite(ms) ? ms : undefined
}

/** A whole number of at least `min`. */
export const isWhole = (n: unknown, min: number): n is number =>
  typeof n === "number" && Number.isInteger(n) && n >= min

/** A finite number strictly between `low` and `high`, or up to `high` when `inclusive`. */
export const isBetween = (n: unknown, low: number, high: number, inclusive = false): n is number =>
  typeof n === "number" && Number.isFinite(n) && n > low && (inclusive ? n <= high : n < high)

/**
 * Shows an input in an options message as the user wrote it: a number as a number, anything else
 * as JSON. The rule of `OptionRules.show` in @circuitry/breaker, which the limiter does not depend on.
 */
export const show = (input: unknown): string => {
  if (typeof input === "number" || typeof input === "bigint") return String(input)
  if (typeof input === "function") return "a function"
  try {
    return JSON.stringify(input) ?? String(input)
  } catch {
    return typeof input
  }
}
