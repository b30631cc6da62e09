/**
 * The rules options follow, written once as Schemas, and the one way an option is checked against
 * one: `check(label, rule, input)` decodes the input or says, in `InvalidBreakerOptions`' words,
 * "<label> must be <rule>, got <input>".
 *
 * Each rule is a Schema that decodes what a user wrote into what the breaker uses (a duration into
 * milliseconds), with the rule in words beside it, so a message never drifts from the check.
 */
import * as Edition from "@circuitry/core/Edition"
import { decoder, FiniteMillis, NonEmptyText, show, type Codec } from "@circuitry/core/OptionRules"
import * as Schema from "effect/Schema"

export { show }

/** A rule: the Schema that checks (and decodes) an input, its decoder (built once), and the rule in words. */
export interface Rule<A> {
  readonly schema: Codec<A, any>
  readonly decode: (input: unknown) => Edition.Result<A, unknown>
  /** The rule in words, given the option's last name (e.g. "threshold"). */
  readonly says: (name: string) => string
}

/** Rules are made once (at module load): a decoder costs more to build than to run. */
const rule = <A>(schema: Codec<A, any>, says: (name: string) => string): Rule<A> => ({
  schema,
  decode: remembered(decoder(schema)),
  says
})

/** How many inputs a rule remembers its answer for (a config uses a handful: "30 seconds", 5). */
const REMEMBERED = 64

/**
 * A decoder that remembers its answers for strings and numbers: decoding is pure, and a breaker
 * made on the request path (a registry keyed by tenant) checks the same few inputs every time
 * (decoding "30 seconds" costs about 1 µs). Objects are decoded each time.
 */
const remembered = <A>(
  decode: (input: unknown) => Edition.Result<A, unknown>
): ((input: unknown) => Edition.Result<A, unknown>) => {
  const answers = new Map<unknown, Edition.Result<A, unknown>>()
  return (input) => {
    if (typeof input !== "string" && typeof input !== "number") return decode(input)
    let answer = answers.get(input)
    if (answer === undefined) {
      answer = decode(input)
      if (answers.size >= REMEMBERED) answers.clear()
      answers.set(input, answer)
    }
    return answer
  }
}

// The duration rule every package shares (OptionRules.FiniteMillis): a negative wait is a mistake
// to report, not a zero (Duration clamps negative inputs), and an infinite one is no wait at all.
const decodeFiniteMillis = decoder(FiniteMillis)

/** Milliseconds of a DurationInput, or undefined when it is not a finite duration >= 0. */
export const millis = (input: unknown): number | undefined => Edition.Result.getOrUndefined(decodeFiniteMillis(input))

/** A safe integer >= `min` (`Schema.int()` and `greaterThanOrEqualTo` on Effect 3). */
const wholeAtLeast = (min: number): Codec<number> =>
  Edition.refine(Schema.Number, (n) => Number.isSafeInteger(n) && n >= min, `a whole number >= ${min}`)

/** A whole number of at least `min`. */
export const wholeNumber = (min: number): Rule<number> => rule(wholeAtLeast(min), () => `a whole number >= ${min}`)

/** A whole number from `min` to `max`. */
export const wholeNumberBetween = (min: number, max: number): Rule<number> =>
  rule(
    Edition.refine(wholeAtLeast(min), (n) => n <= max, `a whole number <= ${max}`),
    () => `a whole number between ${min} and ${max}`
  )

/** A share: 0 < x <= 1. */
export const ratio: Rule<number> = rule(
  Edition.refine(Schema.Number, (n) => n > 0 && n <= 1, "a number with 0 < n <= 1"),
  (name) => `a number with 0 < ${name} <= 1`
)

/** A finite duration of at least `min` milliseconds (`"> 0"`: more than zero), decoded into milliseconds. */
export const duration = (min: number | "> 0"): Rule<number> =>
  rule(
    min === "> 0"
      ? Edition.refine(FiniteMillis, (ms) => ms > 0, "a finite duration > 0")
      : Edition.refine(FiniteMillis, (ms) => ms >= min, `a finite duration >= ${min}`),
    () =>
      min === "> 0"
        ? "a finite duration > 0"
        : min === 0
          ? "a finite duration >= 0"
          : `a finite duration of at least ${min} millisecond${min === 1 ? "" : "s"}`
  )

/** A non-empty string. */
export const nonEmptyString: Rule<string> = rule(NonEmptyText, () => "a non-empty string")

/** The rules the breaker's options use, made once. */
export const atLeastOne: Rule<number> = wholeNumber(1)
export const durationAtLeastZero: Rule<number> = duration(0)
export const durationAboveZero: Rule<number> = duration("> 0")
export const durationAtLeastOneMilli: Rule<number> = duration(1)
export const countWindowSize: Rule<number> = wholeNumberBetween(1, 1_000_000)

/**
 * Checks one option against its rule: the decoded value, or the message
 * "<label> must be <rule>, got <input>". The rule's words take the label's last name.
 */
export const check = <A>(label: string, rule: Rule<A>, input: unknown): Edition.Result<A, string> => {
  const decoded = rule.decode(input)
  return Edition.Result.isSuccess(decoded)
    ? (decoded as Edition.Result<A, never>)
    : Edition.Result.fail(`${label} must be ${rule.says(lastName(label))}, got ${show(input)}`)
}

const lastName = (label: string): string => {
  const words = label.split(/[ .]/)
  return words[words.length - 1]!
}

/** Whether a value can be read as an object of options (a JSON config can hold anything). */
export const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)
