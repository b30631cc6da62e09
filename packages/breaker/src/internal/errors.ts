import * as Schema from "effect/Schema"

/** @internal */
export class BreakerOpenError extends Schema.TaggedError<BreakerOpenError>()("BreakerOpenError", {
  breaker: Schema.String,
  state: Schema.Literal("Open", "HalfOpen", "Isolated"),
  retryAfterMillis: Schema.Number
}) {
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
 * A rejection is the breaker's busiest failure path: build it without a stack trace (which costs
 * microseconds and says nothing the fields do not) and without re-validating fields we made.
 *
 * @internal
 */
export const rejection = (
  breaker: string,
  state: "Open" | "HalfOpen" | "Isolated",
  retryAfterMillis: number
): BreakerOpenError => {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return new BreakerOpenError({ breaker, state, retryAfterMillis }, true)
  } finally {
    Error.stackTraceLimit = limit
  }
}

/** @internal */
export class InvalidBreakerOptions extends Schema.TaggedError<InvalidBreakerOptions>()("InvalidBreakerOptions", {
  message: Schema.String
}) {}
