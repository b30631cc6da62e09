import * as Edition from "@circuitry/core/Edition"
import * as Schema from "effect/Schema"

/** @internal */
export class InvalidChaosOptions extends Schema.TaggedError<InvalidChaosOptions>()("InvalidChaosOptions", {
  message: Schema.String
}) {}

/** @internal */
export class SloBroken extends Schema.TaggedError<SloBroken>()("SloBroken", {
  /** The second of the scenario (0-based) in which the figure broke its limit. */
  second: Schema.Number,
  /** `"failureRate"`, `"p99"`, or `"counter"` (then `counter` names it). */
  figure: Edition.literals(["failureRate", "p99", "counter"]),
  counter: Schema.optional(Schema.String),
  value: Schema.Number,
  limit: Schema.Number
}) {
  override get message(): string {
    const what =
      this.figure === "failureRate"
        ? `failure rate ${this.value} is above the SLO's ${this.limit}`
        : this.figure === "p99"
          ? `p99 latency ${this.value} ms is above the SLO's ${this.limit} ms`
          : `counter "${this.counter}" ${this.value} is above the SLO's ${this.limit}`
    return `SLO broken in second ${this.second}: ${what}`
  }
}
