import * as Schema from "effect/Schema"

/** @internal */
export class InvalidRetryOptions extends Schema.TaggedError<InvalidRetryOptions>()("InvalidRetryOptions", {
  message: Schema.String
}) {}
