/**
 * The limiter package's own option rules, beside the shared ones of `OptionRules` from
 * `@circuitry/core`, and the one way its options are checked: decoded once by a Schema into
 * `InvalidLimiterOptions`, whose message names the option, the rule and the input
 * (`"queue.size must be a whole number between 0 and 1000000, got -1 (limiter "db")"`).
 */
import { OptionRules } from "@circuitry/core"
import * as Edition from "@circuitry/core/Edition"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidLimiterOptions } from "./errors.js"

/** An object, whose fields are decoded on their own (see `decode`'s `prefix`). */
export const AnObject = <A extends object>(rule: string): OptionRules.Codec<A> =>
  OptionRules.Is((u): u is A => typeof u === "object" && u !== null, rule)

/** A number with 0 < n < 1, or 0 < n <= 1 when `upToOne`; `rule` says so in the option's words. */
export const Fraction = (rule: string, upToOne: boolean): OptionRules.Codec<number> =>
  Edition.refine(Schema.Number, (n) => n > 0 && (upToOne ? n <= 1 : n < 1), rule)

/** A finite number > `low`, or >= `low` when `orEqual`. */
export const Above = (low: number, orEqual: boolean): OptionRules.Codec<number> =>
  Edition.refine(
    Schema.Number,
    (n) => Number.isFinite(n) && (orEqual ? n >= low : n > low),
    `a number ${orEqual ? ">=" : ">"} ${low}`
  )

/**
 * Decodes `input` by `schema`, once, into `InvalidLimiterOptions`: the message is the first broken
 * rule (`"<option> must be <rule>, got <value>"`), its option after `prefix` (the path of an object
 * decoded on its own, `"queue."`), followed by `suffix` (the owner, `' (limiter "db")'`).
 */
export const decode = <A, I>(
  schema: OptionRules.Codec<A, I>,
  input: unknown,
  context?: { readonly prefix?: string; readonly suffix?: string }
): Effect.Effect<A, InvalidLimiterOptions> =>
  Effect.suspend(() =>
    Edition.fromResult(
      OptionRules.decode(
        schema,
        input,
        (message) =>
          new InvalidLimiterOptions({ message: `${context?.prefix ?? ""}${message}${context?.suffix ?? ""}` })
      )
    )
  )

const NameOptions = Schema.Struct({
  name: Schema.optional(OptionRules.NonEmptyText)
})

/**
 * A limiter's or a shedder's name (default `"default"`), decoded first and on its own, and `at`,
 * which ends the message of every other rule its options break (`' (limiter "db")'`).
 */
export const named = (
  kind: "limiter" | "shedder",
  options: unknown
): Effect.Effect<{ readonly name: string; readonly at: string }, InvalidLimiterOptions> =>
  Effect.map(decode(NameOptions, options), ({ name = "default" }) => ({ name, at: ` (${kind} "${name}")` }))
