/**
 * The few `Schema` forms the option rules (OptionRules.ts) are made of, on Effect 4 (`Schema.Codec`,
 * `decodeTo` with a `SchemaTransformation`, `check`/`makeFilter`, `annotate`,
 * `decodeUnknownResult`, the first issue read from its `SchemaIssue` tree). The Effect 3 file
 * (schema.effect3.ts) has the same names; see docs/editions.md.
 */
import type * as Edition from "../Edition.js"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import type * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaTransformation from "effect/SchemaTransformation"

/** A schema that decodes `I` to `A` (`Schema.Schema` on Effect 3, `Schema.Codec` on 4). @internal */
export type Codec<A, I = A> = Schema.Codec<A, I>

/** The values `is` accepts; any other is refused as not `message`. @internal */
export const declare = <A>(is: (u: unknown) => u is A, message: string): Codec<A> => Schema.declare(is, { message })

/** `schema`, refusing what it refuses as not `message`. @internal */
export const withMessage = <A, I>(schema: Codec<A, I>, message: string): Codec<A, I> =>
  schema.annotate({ message }) as Codec<A, I>

/** `schema`, also refusing the values `predicate` refuses, as not `message`: the edition's rule. @internal */
export { refine } from "../Edition.js"

/** `from`'s values turned into `to`'s by `decode` (and back by `encode`). @internal */
export const transform = <A, I, B>(
  from: Codec<A, I>,
  to: Codec<B>,
  decode: (a: A) => B,
  encode: (b: B) => A
): Codec<B, I> => from.pipe(Schema.decodeTo(to, SchemaTransformation.transform({ decode, encode })))

/** A decoder of unknown input to a result. @internal */
export const decoder = <A, I>(schema: Codec<A, I>): ((input: unknown) => Edition.Result<A, unknown>) =>
  Schema.decodeUnknownResult(schema)

/** Where decoding first failed (the path into the input), and the rule it broke. @internal */
export interface Issue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

const messageOf = (annotations: { readonly message?: unknown } | undefined): string | undefined =>
  typeof annotations?.message === "string" ? annotations.message : undefined

const astMessage = (ast: SchemaAST.AST): string | undefined =>
  messageOf(ast.annotations as { readonly message?: unknown } | undefined)

/**
 * The message of a schema's outermost check that has one: as a refinement's message on Effect 3
 * (`override: true`), it names the rule whichever part of the schema refused the value.
 */
const checksMessage = (ast: SchemaAST.AST): string | undefined => {
  const checks = (ast as { readonly checks?: ReadonlyArray<{ readonly annotations?: unknown }> }).checks ?? []
  for (let i = checks.length - 1; i >= 0; i--) {
    const message = messageOf(checks[i]!.annotations as { readonly message?: unknown } | undefined)
    if (message !== undefined) return message
  }
  return undefined
}

/** The first leaf of an issue tree, with the path to it and the message of the rule it broke. */
const firstIssue = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>): Issue => {
  switch (issue._tag) {
    case "Pointer":
      return firstIssue(issue.issue, [...path, ...issue.path])
    case "Composite": {
      const message = checksMessage(issue.ast)
      return message === undefined ? firstIssue(issue.issues[0], path) : { path, message }
    }
    case "AnyOf": {
      if (issue.issues.length > 0) return firstIssue(issue.issues[0]!, path)
      // No member took the value's type (an optional field given a string): the rule of the first
      // member that names one, as Effect 3 reports it.
      const members = (issue.ast as { readonly types?: ReadonlyArray<SchemaAST.AST> }).types ?? []
      for (const member of members) {
        const message = checksMessage(member) ?? astMessage(member)
        if (message !== undefined) return { path, message }
      }
      return { path, message: astMessage(issue.ast) ?? "valid" }
    }
    case "Filter":
      return { path, message: messageOf(issue.filter.annotations) ?? firstIssue(issue.issue, path).message }
    case "Encoding":
      return {
        path,
        message: checksMessage(issue.ast) ?? astMessage(issue.ast) ?? firstIssue(issue.issue, path).message
      }
    case "InvalidType":
    case "UnexpectedKey":
      return { path, message: checksMessage(issue.ast) ?? astMessage(issue.ast) ?? "valid" }
    case "InvalidValue":
    case "Forbidden":
      return { path, message: messageOf(issue.annotations) ?? "valid" }
    case "MissingKey":
      return { path, message: messageOf(issue.annotations as { readonly message?: unknown } | undefined) ?? "given" }
    case "OneOf":
      return { path, message: astMessage(issue.ast) ?? "valid" }
  }
}

/** Decodes an object, its unknown keys ignored; a failure is its first issue. @internal */
export const decodeObject =
  <A, I>(schema: Codec<A, I>): ((input: unknown) => Edition.Result<A, Issue>) =>
  (input) =>
    Result.mapError(Schema.decodeUnknownResult(schema, { onExcessProperty: "ignore" })(input), (error) =>
      firstIssue(error.issue, [])
    )
