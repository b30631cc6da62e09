/** Checks used by the validation of every constructor's options. */
import { InvalidRetryOptions } from "./errors.js"

/** @internal */
export const invalid = (message: string): InvalidRetryOptions => new InvalidRetryOptions({ message })

/** Milliseconds of a duration input; undefined when it is not a finite duration >= 0 (core's rule). */
export { millis as toMillis } from "@circuitry/core/OptionRules"

/** A finite number >= `min`. */
export const isAtLeast = (n: unknown, min: number): n is number =>
  typeof n === "number" && Number.isFinite(n) && n >= min

/** An object or undefined (options must be one object). */
export const isOptionsObject = (o: unknown): o is object | undefined =>
  o === undefined || (typeof o === "object" && o !== null)

export const describe = (u: unknown): string => {
  if (typeof u === "string") return JSON.stringify(u)
  if (typeof u === "number" || typeof u === "bigint" || typeof u === "boolean") return String(u)
  return u === null ? "null" : typeof u
}
