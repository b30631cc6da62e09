/**
 * The rules every circuitry package checks its options with, written once as Effect Schemas: a
 * duration (any `Edition.DurationInput`, read as milliseconds), a whole number, and `decode`,
 * which turns the first broken rule into the package's own options error with a message that
 * names the option and the rule (`"deadline must be a finite duration > 0, got 0"`).
 *
 * @since 0.1.0
 */
import * as Edition from "@circuitry/core/Edition"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { show as showInput } from "./internal/show.js"

const isNegative = (input: unknown): boolean =>
  ((typeof input === "number" || typeof input === "bigint") && !(input >= 0)) ||
  (typeof input === "string" && input.trim().startsWith("-"))

/**
 * A `Edition.DurationInput` as milliseconds (`Infinity` for an infinite duration). A negative
 * input is refused rather than read as zero (as `Duration.decode` would).
 *
 * @since 0.1.0
 * @category durations
 */
export const Millis: Schema.Schema<number, Edition.DurationInput> = Schema.transformOrFail(
  Schema.declare((u): u is Edition.DurationInput => Option.isSome(Duration.decodeUnknown(u)) && !isNegative(u), {
    message: () => "a duration >= 0"
  }),
  Schema.Number,
  {
    strict: true,
    decode: (input) => ParseResult.succeed(Duration.toMillis(Duration.decode(input))),
    encode: (millis) => ParseResult.succeed(Duration.millis(millis))
  }
)

/**
 * A finite duration >= 0, as milliseconds.
 *
 * @since 0.1.0
 * @category durations
 */
export const FiniteMillis: Schema.Schema<number, Edition.DurationInput> = Millis.pipe(
  Schema.filter((ms) => Number.isFinite(ms), { message: () => ({ message: "a finite duration >= 0", override: true }) })
)

/**
 * A finite duration > 0, as milliseconds.
 *
 * @since 0.1.0
 * @category durations
 */
export const PositiveMillis: Schema.Schema<number, Edition.DurationInput> = Millis.pipe(
  Schema.filter((ms) => Number.isFinite(ms) && ms > 0, {
    message: () => ({ message: "a finite duration > 0", override: true })
  })
)

/**
 * A whole number of at least `min`.
 *
 * @since 0.1.0
 * @category numbers
 */
export const Whole = (min: number): Schema.Schema<number> =>
  Schema.Number.pipe(
    Schema.filter((n) => Number.isInteger(n) && n >= min, {
      message: () => ({ message: `a whole number >= ${min}`, override: true })
    })
  )

/**
 * One of the given strings (a strategy name, a mode).
 *
 * @since 0.1.0
 * @category strings
 */
export const OneOf = <const L extends ReadonlyArray<string>>(...values: L): Schema.Schema<L[number]> =>
  Schema.declare((u): u is L[number] => values.includes(u as string), {
    message: () => values.map((v) => JSON.stringify(v)).join(" or ")
  })

/**
 * A string.
 *
 * @since 0.1.0
 * @category strings
 */
export const Text: Schema.Schema<string> = Schema.String.annotations({ message: () => "a string" })

/**
 * A boolean.
 *
 * @since 0.1.0
 * @category strings
 */
export const Flag: Schema.Schema<boolean> = Schema.Boolean.annotations({ message: () => "a boolean" })

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
  schema: Schema.Schema<A, I>,
  input: unknown,
  error: (message: string) => E
): Edition.Result<A, E> => {
  if (input === undefined) input = {}
  if (typeof input !== "object" || input === null) {
    return Edition.Result.fail(error(`options must be an object, got ${showInput(input)}`))
  }
  return Edition.Result.mapError(
    Schema.decodeUnknownEither(schema, { onExcessProperty: "ignore" })(input),
    (parseError) => {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(parseError)[0]
      const path = issue?.path ?? []
      const option = path.length === 0 ? "options" : path.map(String).join(".")
      const rule = issue?.message ?? "valid"
      return error(`${option} must be ${rule}, got ${showInput(at(input, path))}`)
    }
  )
}
