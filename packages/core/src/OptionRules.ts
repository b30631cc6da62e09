/**
 * What every circuitry package's option checks share, on both Effect majors: how a refused input is
 * shown in an options message, and a duration option read as milliseconds. Each package keeps its
 * own rules and errors; these are the parts that must read the same everywhere.
 *
 * @since 0.2.0
 */
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as Edition from "./Edition.js"

/**
 * Shows an input in an options message as the user wrote it: a number (or bigint) as a number, a
 * function as `a function`, anything else as JSON, or its type when it has no JSON form.
 *
 * @since 0.2.0
 * @category messages
 * @example
 * ```ts
 * import { OptionRules } from "@circuitry/core"
 *
 * const message = `size must be a whole number >= 0, got ${OptionRules.show("2")}` // ... got "2"
 * ```
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

/**
 * The milliseconds of a duration option (`Edition.DurationInput`), or undefined when it is not a
 * finite duration >= 0 (with `{ infinite: true }`, an infinite one is taken too: for an option
 * where "never" is a value, such as a deadline). A negative input is refused, not read as zero:
 * Effect 3 clamps it to 0 when decoding, so it is caught before; Effect 4 keeps it
 * (`{ seconds: -1 }` is -1000 ms), so it is caught after.
 *
 * @since 0.2.0
 * @category durations
 */
export const millis = (input: unknown, options?: { readonly infinite?: boolean }): number | undefined => {
  if ((typeof input === "number" || typeof input === "bigint") && !(input >= 0)) return undefined
  if (typeof input === "string" && input.trim().startsWith("-")) return undefined
  const decoded = Edition.durationFromUnknown(input)
  if (Option.isNone(decoded)) return undefined
  const ms = Duration.toMillis(decoded.value)
  return ms >= 0 && (Number.isFinite(ms) || options?.infinite === true) ? ms : undefined
}
