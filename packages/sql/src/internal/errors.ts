import * as Schema from "effect/Schema"

/** @internal */
export class InvalidSqlOptions extends Schema.TaggedError<InvalidSqlOptions>()("InvalidSqlOptions", {
  message: Schema.String
}) {}

/**
 * The former name, for the files that still import it.
 *
 * @internal
 */
export const InvalidStoreOptions = InvalidSqlOptions

/** @internal */
export type InvalidStoreOptions = InvalidSqlOptions
