import * as Edition from "@circuitry/core/Edition"
import * as Duration from "effect/Duration"

/**
 * The milliseconds of a duration input; NaN when it is not one. Negative numbers and strings stay
 * negative (Effect's `Duration` would read them as zero, hiding the mistake from validation).
 *
 * @internal
 */
export const millisOf = (input: unknown): number => {
  if (typeof input === "number") return input
  if (typeof input === "string" && /^\s*-/.test(input)) return -1
  const decoded = Edition.durationFromUnknown(input)
  return decoded._tag === "Some" ? Duration.toMillis(decoded.value) : NaN
}

/** An option's value as the message shows it. @internal */
export const show = (input: unknown): string => {
  try {
    return typeof input === "string" ? JSON.stringify(input) : String(input)
  } catch {
    return typeof input
  }
}
