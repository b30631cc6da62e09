/** Checks used by the validation of every constructor's options. */
import * as Edition from "@circuitry/core/Edition"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import { InvalidRetryOptions } from "./errors.js"

/** @internal */
export const invalid = (message: string): InvalidRetryOptions => new InvalidRetryOptions({ message })

/**
 * Milliseconds of a duration input; undefined when it is not a finite duration >= 0. Negatives are
 * caught before decoding, where Effect 3 clamps them to 0, and after it, since Effect 4 keeps them
 * (`{ seconds: -1 }` is -1000 ms there).
 */
export const toMillis = (input: unknown): number | undefined => {
  if ((typeof input === "number" || typeof input === "bigint") && !(input >= 0)) return undefined
  if (typeof input === "string" && input.trim().startsWith("-")) return undefined
  const decoded = Edition.durationFromUnknown(input)
  if (Option.isNone(decoded)) return undefined
  const ms = Duration.toMillis(decoded.value)
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined
}

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
