/**
 * How the package checks its options: each constructor's options are a `Schema.Struct` of optional
 * fields made of `@circuitry/core`'s `OptionRules` and the few rules below, decoded once into the
 * package's one options error, `InvalidRetryOptions`. Its message reads
 * `"<owner> <option> must be <rule>, got <value>"` (`"RetryBudget ratio must be a finite number >= 0,
 * got -1"`), then, for a budget or a hedging whose name is valid, the instance it is about
 * (`(budget "payments")`). What a schema cannot say about one field (an option that is required, a
 * bound set by another option) is checked after decoding, in the same words.
 */
import { OptionRules } from "@circuitry/core"
import * as Edition from "@circuitry/core/Edition"
import * as Schema from "effect/Schema"
import { InvalidRetryOptions } from "./errors.js"

/** The name of a budget or a hedging not given one. */
export const DEFAULT_NAME = "default"

/** A non-empty string: a name that shows in metrics. */
export const Name = OptionRules.NonEmptyText

/** A finite number >= 0: a ratio, a rate. */
export const NonNegative = Edition.refine(Schema.Number, (n) => Number.isFinite(n) && n >= 0, "a finite number >= 0")

/** The name a budget's or a hedging's options give it, when it is a valid one. */
const validName = (input: unknown): string | undefined => {
  if (typeof input !== "object" || input === null) return undefined
  const given = (input as { readonly name?: unknown }).name
  const name = given === undefined ? DEFAULT_NAME : given
  return typeof name === "string" && name.length > 0 ? name : undefined
}

/**
 * The error a broken rule of `input` fails with: `"<owner> <message>"`, then `(<instance> "<name>")`
 * when an `instance` is given and `input` names one validly (a message about the name itself, or
 * about options that are not an object, has no such end).
 */
export const invalidOf =
  (owner: string, input: unknown, instance?: string) =>
  (message: string): InvalidRetryOptions => {
    const name = instance === undefined ? undefined : validName(input)
    const about = name === undefined ? "" : ` (${instance} "${name}")`
    return new InvalidRetryOptions({ message: `${owner} ${message}${about}` })
  }

/** The words of a broken rule, for a check made after decoding: `"<option> must be <rule>, got <value>"`. */
export const broken = (option: string, rule: string, value: unknown): string =>
  `${option} must be ${rule}, got ${OptionRules.show(value)}`
