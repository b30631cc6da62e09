/**
 * The option rules, as they were first published here: they now live in `@circuitry/core`
 * (`OptionRules`), the foundation every circuitry package checks its options with, and this module
 * re-exports them unchanged. New code imports them from `@circuitry/core`.
 *
 * @since 0.1.0
 */
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
export const Millis = Rules.Millis

/**
 * A finite duration >= 0, as milliseconds.
 *
 * @since 0.1.0
 * @category durations
 * @deprecated Use `OptionRules.FiniteMillis` from `@circuitry/core`.
 */
export const FiniteMillis = Rules.FiniteMillis

/**
 * A finite duration > 0, as milliseconds.
 *
 * @since 0.1.0
 * @category durations
 * @deprecated Use `OptionRules.PositiveMillis` from `@circuitry/core`.
 */
export const PositiveMillis = Rules.PositiveMillis

/**
 * A whole number of at least `min`.
 *
 * @since 0.1.0
 * @category numbers
 * @deprecated Use `OptionRules.Whole` from `@circuitry/core`.
 */
export const Whole = Rules.Whole

/**
 * One of the given strings.
 *
 * @since 0.1.0
 * @category strings
 * @deprecated Use `OptionRules.OneOf` from `@circuitry/core`.
 */
export const OneOf = Rules.OneOf

/**
 * A string.
 *
 * @since 0.1.0
 * @category strings
 * @deprecated Use `OptionRules.Text` from `@circuitry/core`.
 */
export const Text = Rules.Text

/**
 * A boolean.
 *
 * @since 0.1.0
 * @category strings
 * @deprecated Use `OptionRules.Flag` from `@circuitry/core`.
 */
export const Flag = Rules.Flag

/**
 * Shows an input in an option error as the user wrote it.
 *
 * @since 0.2.0
 * @category decoding
 * @deprecated Use `OptionRules.show` from `@circuitry/core`.
 */
export const show = Rules.show

/**
 * Decodes `input` with `schema` into the options, or the first broken rule as `error(message)`.
 *
 * @since 0.1.0
 * @category decoding
 * @deprecated Use `OptionRules.decode` from `@circuitry/core`.
 */
export const decode = Rules.decode
