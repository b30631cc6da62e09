/**
 * The one interface every cache adapter implements: memory, Redis, layered, guarded.
 *
 * @since 0.1.0
 */
import * as Edition from "@circuitry/core/Edition"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ttl from "./internal/ttl.js"

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
 * Options that break a rule; `message` names the option and the rule.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidCacheOptions extends Schema.TaggedError<InvalidCacheOptions>()("InvalidCacheOptions", {
  message: Schema.String
}) {}

/**
 * Options of a write. The TTL rule is the same in every store (memory, Redis, layered, guarded):
 *
 * - no `ttl`, or an infinite one: the entry lives until it is evicted or deleted;
 * - a `ttl` > 0: the entry expires that long after the write (Redis rounds up to whole milliseconds);
 * - a `ttl` of zero or less: the entry is already expired. `set` stores nothing, removes what was
 *   under the key (a write never leaves the value it meant to replace) and returns `false`
 *   (nothing was stored); `touch` removes the entry and returns whether it existed. A `ttl`
 *   computed as "what is left" that has run out thus behaves as expiry does, with no error to
 *   handle. (A negative or NaN duration is zero, on both Effect majors.)
 * - a `ttl` that is not a duration at all (`"soon"`; only reachable past the type checker) is a
 *   defect naming the rule, in every store.
 *
 * @since 0.1.0
 * @category models
 */
export interface WriteOptions {
  /**
   * How long the entry lives; no TTL means it lives until evicted or deleted. Exactly as API.md
   * writes it (no `| undefined`), so that a store written to the contract under
   * `exactOptionalPropertyTypes` is a `CacheStore`.
   */
  readonly ttl?: Edition.DurationInput
}

/**
 * An entry as read with its remaining time to live.
 *
 * @since 0.1.0
 * @category models
 */
export interface CacheEntry {
  readonly value: string
  /** Time left before the entry expires, measured when it was read; `None` when it never expires. */
  readonly ttl: Option.Option<Duration.Duration>
}

/**
 * A cache adapter.
 *
 * - `set`: true when stored.
 * - `touch`: true when the key existed and its expiry was renewed: to `ttl` from now, or to no
 *   expiry at all when `ttl` is not given (as `set` without a `ttl`).
 * - `delete`: true when a key was removed.
 * - `getEntry` (optional): `get` with the entry's remaining TTL. A store that offers it lets a
 *   `LayeredStore` fill its L1 with an entry that expires when the L2 entry does.
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
  readonly getEntry?: ((key: string) => Effect.Effect<Option.Option<CacheEntry>, E>) | undefined
}

/**
 * The TTL rule of `WriteOptions`, as milliseconds: `Infinity` for no expiry, 0 for "already
 * expired", `undefined` when `ttl` is not a duration. For store implementers.
 *
 * @since 0.1.0
 * @category ttl
 * @example
 * ```ts
 * import { CacheStore } from "@circuitry/cache"
 *
 * CacheStore.ttlMillis(undefined) // Infinity
 * CacheStore.ttlMillis("1 minute") // 60000
 * CacheStore.ttlMillis(-5) // 0: already expired
 * ```
 */
export const ttlMillis: (ttl: Edition.DurationInput | undefined) => number | undefined = ttl.ttlMillis

/**
 * The defect message for a `ttl` that is not a duration (`operation` names the store and method).
 *
 * @since 0.1.0
 * @category ttl
 */
export const invalidTtl: (operation: string, ttl: unknown) => string = ttl.invalidTtl

/**
 * A store as a service, so that a store layer (`MemoryStore.layer`, a Redis store layer) can feed
 * `Cache.layer`. Its error type is left open: the cache guard turns every error into a fallback.
 *
 * @since 0.1.0
 * @category tags
 */
export class Store extends Edition.KeyClass<Store, CacheStore<unknown>>()("@circuitry/cache/CacheStore/Store") {}
