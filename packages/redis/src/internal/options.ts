/**
 * The options of both Redis adapters, checked once at construction with the shared rules of
 * `OptionRules` (Effect Schema) into the package's one options error.
 */
import { OptionRules } from "@circuitry/breaker"
import type * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { DEFAULT_URL } from "./client.js"

/** @internal */
export class InvalidRedisOptions extends Schema.TaggedError<InvalidRedisOptions>()("InvalidRedisOptions", {
  message: Schema.String
}) {}

/** @internal */
export interface Options {
  readonly url?: string | undefined
  readonly prefix?: string | undefined
  readonly deadline?: Duration.DurationInput | undefined
  /** @deprecated the old name of `deadline` (RedisBreakerStore) */
  readonly timeout?: Duration.DurationInput | undefined
  readonly liveness?: Duration.DurationInput | undefined
}

/** @internal */
export interface Resolved {
  readonly url: string
  readonly prefix: string
  readonly deadlineMillis: number
  readonly livenessMillis: number
}

const DEFAULT_DEADLINE_MILLIS = 1_000
const DEFAULT_LIVENESS_MILLIS = 5_000

const Url = Schema.String.pipe(
  Schema.pattern(/^rediss?:\/\//, { message: () => "a redis:// or rediss:// URL" })
).annotations({ message: () => "a redis:// or rediss:// URL" })

const OptionsSchema = Schema.Struct({
  url: Schema.optional(Url),
  prefix: Schema.optional(OptionRules.Text),
  deadline: Schema.optional(OptionRules.PositiveMillis),
  timeout: Schema.optional(OptionRules.PositiveMillis),
  liveness: Schema.optional(OptionRules.PositiveMillis)
})

const invalid = (message: string) => new InvalidRedisOptions({ message })

/**
 * Validates the options once, at construction. `liveness` defaults to 5 seconds, and never less
 * than the deadline.
 *
 * @internal
 */
export const resolve = (
  options: Options | undefined,
  defaultPrefix: string
): Either.Either<Resolved, InvalidRedisOptions> =>
  Either.flatMap(OptionRules.decode(OptionsSchema, options, invalid), (o) => {
    if (o.deadline !== undefined && o.timeout !== undefined) {
      return Either.left(invalid("deadline and timeout (its deprecated old name) are one option: give only deadline"))
    }
    const deadlineMillis = o.deadline ?? o.timeout ?? DEFAULT_DEADLINE_MILLIS
    const livenessMillis = o.liveness ?? Math.max(DEFAULT_LIVENESS_MILLIS, deadlineMillis)
    if (livenessMillis < deadlineMillis) {
      return Either.left(
        invalid(
          `liveness (${livenessMillis} ms) must be at least the deadline (${deadlineMillis} ms): ` +
            "a connection must not be judged dead before one call may time out"
        )
      )
    }
    return Either.right({
      url: o.url ?? DEFAULT_URL,
      prefix: o.prefix ?? defaultPrefix,
      deadlineMillis,
      livenessMillis
    })
  })
