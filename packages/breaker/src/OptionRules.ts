/**
 * The rules every circuitry package checks its options with, written once as Effect Schemas: a
 * duration (any `Edition.DurationInput`, read as milliseconds), a whole number, and `decode`,
 * which turns the first broken rule into the package's own options error with a message that
 * names the option and the rule (`"deadline must be a finite duration > 0, got 0"`).
 *
 * @since 0.1.0
 */
import * as Edition from "@circuitry/core/Edition"
import * as CoreRules from "@circuitry/core/OptionRules"
import * as Duration from "effect/Duration"
import * as Schema from "effect/Schema"
import * as S from "#schema"
import { show as showInput } from "./internal/show.js"

/**
 * A rule: a schema that reads an option's input `I` as `A` (`Schema.Schema<A, I>` on Effect 3,
 * `Schema.Codec<A, I>` on 4). Named here so that a package's own option schemas, built from these
 * rules, have types that name only public modules.
 *
 * @since 0.2.0
 * @category rules
 */
export type Codec<A, I = A> = S.Codec<A, I>

/**
 * A `Edition.DurationInput` as milliseconds (`Infinity` for an infinite duration). A negative
 * input is refused rather than read as zero (as `Duration.decode` would).
 *
 * @since 0.1.0
 * @category durations
 */
export const Millis: Codec<number, Edition.DurationInput> = S.transform(
  S.declare(
    (u): u is Edition.DurationInput => CoreRules.millis(u, { infinite: true }) !== undefined,
    "a duration >= 0"
  ),
  Schema.Number,
  (input) => CoreRules.millis(input, { infinite: true })!,
  (millis) => Duration.millis(millis)
)

/**
 * A finite duration >= 0, as milliseconds.
 *
 * @since 0.1.0
 * @category durations
 */
export const FiniteMillis: Codec<number, Edition.DurationInput> = S.refine(
  Millis,
  (ms) => Number.isFinite(ms),
  "a finite duration >= 0"
)

/**
 * A finite duration > 0, as milliseconds.
 *
 * @since 0.1.0
 * @category durations
 */
export const PositiveMillis: Codec<number, Edition.DurationInput> = S.refine(
  Millis,
  (ms) => Number.isFinite(ms) && ms > 0,
  "a finite duration > 0"
)

/**
 * A whole number of at least `min`.
 *
 * @since 0.1.0
 * @category numbers
 */
export const Whole = (min: number): Codec<number> =>
  S.refine(Schema.Number, (n) => Number.isInteger(n) && n >= min, `a whole number >= ${min}`)

/**
 * One of the given strings (a strategy name, a mode).
 *
 * @since 0.1.0
 * @category strings
 */
export const OneOf = <const L extends ReadonlyArray<string>>(...values: L): Codec<L[number]> =>
  S.declare((u): u is L[number] => values.includes(u as string), values.map((v) => JSON.stringify(v)).join(" or "))

/**
 * A string.
 *
 * @since 0.1.0
 * @category strings
 */
export const Text: Codec<string> = S.withMessage(Schema.String, "a string")

/**
 * A boolean.
 *
 * @since 0.1.0
 * @category strings
 */
export const Flag: Codec<boolean> = S.withMessage(Schema.Boolean, "a boolean")

/**
 * Shows an input in an option error as the user wrote it: a number as a number (`got -5`), a
 * string quoted (`got "-5"`), anything else as JSON (or "a function"), so that a message never
 * shows a number as a string. `decode` shows the value it refuses this way.
 *
 * @since 0.2.0
 * @category decoding
 * @example
 * ```ts
 * import { OptionRules } from "@circuitry/breaker"
 *
 * const message = `openFor must be a finite duration >= 0, got ${OptionRules.show(-5)}` // "... got -5"
 * ```
 */
export const show: (input: unknown) => string = showInput

const at = (input: unknown, path: ReadonlyArray<PropertyKey>): unknown =>
  path.reduce<unknown>(
    (value, key) =>
      typeof value === "object" && value !== null ? (value as Record<PropertyKey, unknown>)[key] : undefined,
    input
  )

/**
 * Decodes `input` with `schema`. The first broken rule becomes `error(message)`, where the
 * message reads `"<option> must be <rule>, got <value>"` (the rule is the schema's `message`
 * annotation, as on the schemas of this module; `<option>` is the path). `undefined` reads as no
 * options (`{}`); anything else that is not an object is refused as a whole.
 *
 * @since 0.1.0
 * @category decoding
 * @example
 * ```ts
 * import { OptionRules } from "@circuitry/breaker"
 * import { Schema } from "effect"
 *
 * class InvalidOptions extends Schema.TaggedError<InvalidOptions>()("InvalidOptions", { message: Schema.String }) {}
 * const Options = Schema.Struct({ deadline: Schema.optional(OptionRules.PositiveMillis) })
 *
 * const result = OptionRules.decode(Options, { deadline: 0 }, (message) => new InvalidOptions({ message }))
 * // Edition.Result.fail(InvalidOptions { message: "deadline must be a finite duration > 0, got 0" })
 * ```
 */
export const decode = <A, I, E>(
  schema: Codec<A, I>,
  input: unknown,
  error: (message: string) => E
): Edition.Result<A, E> => {
  if (input === undefined) input = {}
  if (typeof input !== "object" || input === null) {
    return Edition.Result.fail(error(`options must be an object, got ${showInput(input)}`))
  }
  return Edition.Result.mapError(S.decodeObject(schema)(input), ({ message, path }) => {
    const option = path.length === 0 ? "options" : path.map(String).join(".")
    return error(`${option} must be ${message}, got ${showInput(at(input, path))}`)
  })
}
