/**
 * The option rules, as they were first published here: they now live in `@circuitry/core`
 * (`OptionRules`), the foundation every circuitry package checks its options with, and this module
 * re-exports them unchanged. New code imports them from `@circuitry/core`.
 *
 * @since 0.1.0
 */
import type * as Edition from "@circuitry/core/Edition"
import * as Rules from "@circuitry/core/OptionRules"

/**
 * A rule: a schema that reads an option's input `I` as `A`.
 *
 * @since 0.2.0
 * @category rules
 * @deprecated Use `OptionRules.Codec` from `@circuitry/core`.
 */
export type Codec<A, I = A> = Rules.Codec<A, I>

/**
 * A duration as milliseconds (`Infinity` for an infinite one); a negative input is refused.
 *
 * @since 0.1.0
 * @category durations
 * @deprecated Use `OptionRules.Millis` from `@circuitry/core`.
 */
export const Millis: Codec<number, Edition.DurationInput> = Rules.Millis

/**
 * A finite duration >= 0, as milliseconds.
 *
 * @since 0.1.0
 * @category durations
 * @deprecated Use `OptionRules.FiniteMillis` from `@circuitry/core`.
 */
export const FiniteMillis: Codec<number, Edition.DurationInput> = Rules.FiniteMillis

/**
 * A finite duration > 0, as milliseconds.
 *
 * @since 0.1.0
 * @category durations
 * @deprecated Use `OptionRules.PositiveMillis` from `@circuitry/core`.
 */
export const PositiveMillis: Codec<number, Edition.DurationInput> = Rules.PositiveMillis

/**
 * A whole number of at least `min`.
 *
 * @since 0.1.0
 * @category numbers
 * @deprecated Use `OptionRules.Whole` from `@circuitry/core`.
 */
export const Whole: (min: number) => Codec<number> = Rules.Whole

/**
 * One of the given strings.
 *
 * @since 0.1.0
 * @category strings
 * @deprecated Use `OptionRules.OneOf` from `@circuitry/core`.
 */
export const OneOf: <const L extends ReadonlyArray<string>>(...values: L) => Codec<L[number]> = Rules.OneOf

/**
 * A string.
 *
 * @since 0.1.0
 * @category strings
 * @deprecated Use `OptionRules.Text` from `@circuitry/core`.
 */
export const Text: Codec<string> = Rules.Text

/**
 * A boolean.
 *
 * @since 0.1.0
 * @category strings
 * @deprecated Use `OptionRules.Flag` from `@circuitry/core`.
 */
export const Flag: Codec<boolean> = Rules.Flag

/**
 * Shows an input in an option error as the user wrote it.
 *
 * @since 0.2.0
 * @category decoding
 * @deprecated Use `OptionRules.show` from `@circuitry/core`.
 */
export const show: (input: unknown) => string = Rules.show

/**
 * Decodes `input` with `schema` into the options, or the first broken rule as `error(message)`.
 *
 * @since 0.1.0
 * @category decoding
 * @deprecated Use `OptionRules.decode` from `@circuitry/core`.
 */
export const decode: <A, I, E>(
  schema: Codec<A, I>,
  input: unknown,
  error: (message: string) => E
) => Edition.Result<A, E> = Rules.decode
