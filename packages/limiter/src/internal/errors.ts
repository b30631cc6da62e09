import * as Rejection from "@circuitry/core/Rejection"
import * as Schema from "effect/Schema"

/** @internal */
export class LimiterRejectedError extends Schema.TaggedError<LimiterRejectedError>()("LimiterRejectedError", {
  limiter: Schema.String,
  limit: Schema.Number,
  inFlight: Schema.Number,
  partition: Schema.optional(Schema.String),
  retryAfterMillis: Schema.Number
}) {
  /** A rejection (`Rejection.isRejection`), on the prototype: a stackless rejection has it too. */
  get [Rejection.TypeId](): Rejection.TypeId {
    return Rejection.TypeId
  }

  override get message(): string {
    const where = this.partition === undefined ? "" : ` (partition "${this.partition}")`
    return `limiter "${this.limiter}" is at its limit of ${this.limit} with ${this.inFlight} in flight${where}; retry after ${this.retryAfterMillis} ms`
  }
}

/**
 * A rejection is the limiter's busiest failure path under overload. The Error constructor captures
 * a stack trace, which costs microseconds and says nothing the fields do not, so a rejection is
 * built from the class's prototype with its fields set in the constructor's order: it is still an
 * `instanceof LimiterRejectedError`, matches its Schema, prints and serialises the same.
 *
 * @internal
 */
export const rejection = (
  limiter: string,
  limit: number,
  inFlight: number,
  partition: string | undefined,
  retryAfterMillis: number
): LimiterRejectedError => {
  const error = Object.create(LimiterRejectedError.prototype)
  error.limiter = limiter
  error.limit = limit
  error.inFlight = inFlight
  if (partition !== undefined) error.partition = partition
  error.retryAfterMillis = retryAfterMillis
  error._tag = "LimiterRejectedError"
  return error
}

/** @internal */
export const isLimiterRejectedError = (u: unknown): u is LimiterRejectedError =>
  Rejection.isTagged(u, "LimiterRejectedError")

/** @internal */
export class InvalidLimiterOptions extends Schema.TaggedError<InvalidLimiterOptions>()("InvalidLimiterOptions", {
  message: Schema.String
}) {}
