import * as Edition from "@circuitry/core/Edition"
import * as Rejection from "@circuitry/core/Rejection"
import * as Schema from "effect/Schema"

/** @internal */
export class BreakerOpenError extends Schema.TaggedError<BreakerOpenError>()("BreakerOpenError", {
  breaker: Schema.String,
  state: Edition.literals(["Open", "HalfOpen", "Isolated"]),
  retryAfterMillis: Schema.Number
}) {
  /** A rejection (`Rejection.isRejection`), on the prototype: a stackless rejection has it too. */
  get [Rejection.TypeId](): Rejection.TypeId {
    return Rejection.TypeId
  }

  override get message(): string {
    switch (this.state) {
      case "Open":
        return `circuit "${this.breaker}" is open; retry after ${this.retryAfterMillis} ms`
      case "HalfOpen":
        return `circuit "${this.breaker}" is half-open and every probe permit is taken`
      case "Isolated":
        return `circuit "${this.breaker}" is isolated until it is reset`
    }
  }
}

/**
 * A rejection is the breaker's busiest failure path. The Error constructor captures a stack trace,
 * which costs microseconds and says nothing the fields do not, so a rejection is built from the
 * class's prototype with its fields set in the constructor's order: it is still an
 * `instanceof BreakerOpenError`, matches its Schema, prints and serialises the same.
 *
 * @internal
 */
export const rejection = (
  breaker: string,
  state: "Open" | "HalfOpen" | "Isolated",
  retryAfterMillis: number
): BreakerOpenError => {
  const error = Object.create(BreakerOpenError.prototype)
  error.breaker = breaker
  error.state = state
  error.retryAfterMillis = retryAfterMillis
  error._tag = "BreakerOpenError"
  return error
}

/** @internal */
export const isBreakerOpenError = (u: unknown): u is BreakerOpenError => Rejection.isTagged(u, "BreakerOpenError")

/** @internal */
export class InvalidBreakerOptions extends Schema.TaggedError<InvalidBreakerOptions>()("InvalidBreakerOptions", {
  message: Schema.String
}) {}

/** @internal */
export class BreakerTimeoutError extends Schema.TaggedError<BreakerTimeoutError>()("BreakerTimeoutError", {
  breaker: Schema.String,
  timeoutMillis: Schema.Number
}) {
  override get message(): string {
    return `circuit "${this.breaker}": the call took over its ${this.timeoutMillis} ms timeout`
  }
}
