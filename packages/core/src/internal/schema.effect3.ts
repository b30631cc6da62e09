/**
 * The few `Schema` forms the option rules (OptionRules.ts) are made of, on Effect 3 (`Schema.Schema`,
 * `transformOrFail`, `filter`, `annotations`, `decodeUnknownEither`, `ArrayFormatter`). The
 * Effect 4 file (schema.effect4.ts) has the same names over Effect 4's `Schema` (`Codec`,
 * `decodeTo`, `check`/`makeFilter`, `annotate`, `decodeUnknownResult`, `SchemaIssue`); see
 * docs/editions.md.
 */
import type * as Edition from "../Edition.js"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/** A schema that decodes `I` to `A` (`Schema.Schema` on Effect 3, `Schema.Codec` on 4). @internal */
export type Codec<A, I = A> = Schema.Schema<A, I>

/** The values `is` accepts; any other is refused as not `message`. @internal */
export const declare = <A>(is: (u: unknown) => u is A, message: string): Codec<A> =>
  Schema.declare(is, { message: () => message })

/** `schema`, refusing what it refuses as not `message`. @internal */
export const withMessage = <A, I>(schema: Codec<A, I>, message: string): Codec<A, I> =>
  schema.annotations({ message: () => message })

/** `schema`, also refusing the values `predicate` refuses, as not `message`: the edition's rule. @internal */
export { refine } from "../Edition.js"

/** `from`'s values turned into `to`'s by `decode` (and back by `encode`). @internal */
export const transform = <A, I, B>(
  from: Codec<A, I>,
  to: Codec<B>,
  decode: (a: A) => B,
  encode: (b: B) => A
): Codec<B, I> =>
  Schema.transformOrFail(from, to, {
    strict: true,
    decode: (a) => ParseResult.succeed(decode(a)),
    encode: (b) => ParseResult.succeed(encode(b))
  })

/** A decoder of unknown input to a result. @internal */
export const decoder = <A, I>(schema: Codec<A, I>): ((input: unknown) => Edition.Result<A, unknown>) =>
  Schema.decodeUnknownEither(schema)

/** Where decoding first failed (the path into the input), and the rule it broke. @internal */
export interface Issue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** Decodes an object, its unknown keys ignored; a failure is its first issue. @internal */
export const decodeObject =
  <A, I>(schema: Codec<A, I>): ((input: unknown) => Edition.Result<A, Issue>) =>
  (input) =>
    Either.mapLeft(Schema.decodeUnknownEither(schema, { onExcessProperty: "ignore" })(input), (parseError) => {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(parseError)[0]
      // A missing key: in the words of Effect 4's reading (schema.effect4.ts), not "is missing".
      const message = issue?._tag === "Missing" ? "given" : issue?.message
      return { path: issue?.path ?? [], message: message ?? "valid" }
    })
