/**
 * The one interface every cache adapter implements: memory, Redis, layered, guarded.
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * A cache operation that failed: `operation` is the method (`get`, `set`, ...).
 *
 * @since 0.1.0
 * @category errors
 */
export class CacheError extends Schema.TaggedError<CacheError>()("CacheError", {
  operation: Schema.String,
  message: Schema.String,
  cause: Schema.optional(Schema.Unknown)
}) {}

/**
 * Options of a write.
 *
 * @since 0.1.0
 * @category models
 */
export interface WriteOptions {
  /** How long the entry lives; no TTL means it lives until evicted or deleted. */
  readonly ttl?: Duration.DurationInput | undefined
}

/**
 * A cache adapter.
 *
 * - `set`: true when stored.
 * - `touch`: true when the key existed and its expiry was renewed.
 * - `delete`: true when a key was removed.
 *
 * @since 0.1.0
 * @category models
 */
export interface CacheStore<E = CacheError> {
  readonly get: (key: string) => Effect.Effect<Option.Option<string>, E>
  readonly set: (key: string, value: string, options?: WriteOptions) => Effect.Effect<boolean, E>
  readonly touch: (key: string, options?: WriteOptions) => Effect.Effect<boolean, E>
  readonly delete: (key: string) => Effect.Effect<boolean, E>
  readonly keys: (prefix?: string) => Effect.Effect<ReadonlyArray<string>, E>
  readonly size: Effect.Effect<number, E>
  readonly ping: Effect.Effect<boolean, E>
}
