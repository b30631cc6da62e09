/**
 * The rules every circuitry package checks its options with, on both Effect majors, and the one way
 * it checks them: each option is an Effect Schema made of these rules (a duration read as
 * milliseconds, a whole number, one of some strings), and `decode` turns the first broken rule into
 * the package's own options error with a message that names the option, the rule and the input
 * (`"deadline must be a finite duration > 0, got 0"`).
 *
 * @since 0.2.0
 */
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as S from "#schema"
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
 * @since 0.2.0
 * @category durations
 */
export const Millis: Codec<number, Edition.DurationInput> = S.transform(
  S.declare((u): u is Edition.DurationInput => millis(u, { infinite: true }) !== undefined, "a duration >= 0"),
  Schema.Number,
  (input) => millis(input, { infinite: true })!,
  (millis) => Duration.millis(millis)
)

/**
 * A finite duration >= 0, as milliseconds.
 *
 * @since 0.2.0
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
 * @since 0.2.0
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
 * @since 0.2.0
 * @category numbers
 */
export const Whole = (min: number): Codec<number> =>
  S.refine(Schema.Number, (n) => Number.isInteger(n) && n >= min, `a whole number >= ${min}`)

/**
 * One of the given strings (a strategy name, a mode).
 *
 * @since 0.2.0
 * @category strings
 */
export const OneOf = <const L extends ReadonlyArray<string>>(...values: L): Codec<L[number]> =>
  S.declare((u): u is L[number] => values.includes(u as string), values.map((v) => JSON.stringify(v)).join(" or "))

/**
 * `schema`, whatever it refuses read as not `rule`: a rule of this module in the words of a
 * package's message (`Worded(FiniteMillis, "a duration such as \"50 millis\"")`).
 *
 * @since 0.2.0
 * @category rules
 * @example
 * ```ts
 * import { OptionRules } from "@circuitry/core"
 *
 * const Delay = OptionRules.Worded(OptionRules.FiniteMillis, "a fixed delay (a finite duration)")
 * ```
 */
export const Worded = <A, I>(schema: Codec<A, I>, rule: string): Codec<A, I> => S.refine(schema, () => true, rule)

/**
 * A value that `is` accepts (a function, a value made by a package's own constructor), refused as
 * not `rule`: for an option no other rule states.
 *
 * @since 0.2.0
 * @category rules
 * @example
 * ```ts
 * import { OptionRules } from "@circuitry/core"
 * import { Schema } from "effect"
 *
 * const Options = Schema.Struct({
 *   isFailure: Schema.optional(
 *     OptionRules.Is((u): u is (error: unknown) => boolean => typeof u === "function", "a function")
 *   )
 * })
 * ```
 */
export const Is = <A>(is: (u: unknown) => u is A, rule: string): Codec<A> => S.declare(is, rule)

/**
 * A string.
 *
 * @since 0.2.0
 * @category strings
 */
export const Text: Codec<string> = S.withMessage(Schema.String, "a string")

/**
 * A string of at least one character (a name that shows in metrics and messages).
 *
 * @since 0.2.0
 * @category strings
 */
export const NonEmptyText: Codec<string> = S.refine(Schema.String, (s) => s.length > 0, "a non-empty string")

/**
 * A boolean.
 *
 * @since 0.2.0
 * @category strings
 */
export const Flag: Codec<boolean> = S.withMessage(Schema.Boolean, "a boolean")

const at = (input: unknown, path: ReadonlyArray<PropertyKey>): unknown =>
  path.reduce<unknown>(
    (value, key) =>
      typeof value === "object" && value !== null ? (value as Record<PropertyKey, unknown>)[key] : undefined,
    input
  )

/** An option's path as a reader writes it: `sharing.quorum`, `breakers[0]`; `options` for the whole. */
const pathOf = (path: ReadonlyArray<PropertyKey>): string =>
  path.length === 0
    ? "options"
    : path.map((key, i) => (typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`)).join("")

/**
 * Decodes `input` with `schema`. The first broken rule becomes `error(message)`, where the
 * message reads `"<option> must be <rule>, got <value>"` (the rule is the schema's `message`
 * annotation, as on the schemas of this module; `<option>` is the path, `breakers[0].name` into
 * an array). A required key that is missing reads `"<option> must be given, got undefined"` on
 * both majors. `undefined` reads as no options (`{}`); anything else that is not an object is
 * refused as a whole.
 *
 * @since 0.2.0
 * @category decoding
 * @example
 * ```ts
 * import { OptionRules } from "@circuitry/core"
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
    return Edition.Result.fail(error(`options must be an object, got ${show(input)}`))
  }
  return Edition.Result.mapError(S.decodeObject(schema)(input), ({ message, path }) => {
    return error(`${pathOf(path)} must be ${message}, got ${show(at(input, path))}`)
  })
}

/**
 * A decoder of one input by `schema`, to a result (`Either` on Effect 3, `Result` on 4): for a rule
 * checked on its own, outside an options object. Build it once; a decoder costs more to build than
 * to run.
 *
 * @since 0.2.0
 * @category decoding
 * @example
 * ```ts
 * import { Edition, OptionRules } from "@circuitry/core"
 *
 * const decodeWait = OptionRules.decoder(OptionRules.PositiveMillis)
 * const wait = Edition.Result.getOrUndefined(decodeWait("2 seconds")) // 2000
 * ```
 */
export const decoder: <A, I>(schema: Codec<A, I>) => (input: unknown) => Edition.Result<A, unknown> = S.decoder
