import * as Schema from "effect/Schema"

/** @internal */
export class InvalidPlatformOptions extends Schema.TaggedError<InvalidPlatformOptions>()("InvalidPlatformOptions", {
  message: Schema.String
}) {}
