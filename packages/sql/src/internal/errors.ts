import * as Schema from "effect/Schema"

/** @internal */
export class InvalidStoreOptions extends Schema.TaggedError<InvalidStoreOptions>()("InvalidStoreOptions", {
  message: Schema.String
}) {}
