import * as Duration from "effect/Duration"
import * as Option from "effect/Option"

/**
 * The one TTL rule of every `CacheStore` (see `CacheStore.ttlMillis`): `Infinity` when there is no
 * TTL or it is infinite, 0 when it is zero or less (read as Effect reads any duration: a negative
 * or NaN duration is zero), `undefined` when the input is not a duration at all.
 *
 * @internal
 */
export const ttlMillis = (ttl: Duration.DurationInput | undefined): number | undefined => {
  if (ttl === undefined) return Infinity
  const decoded = Duration.decodeUnknown(ttl)
  return Option.isNone(decoded) ? undefined : Duration.toMillis(decoded.value)
}

/** @internal */
export const invalidTtl = (operation: string, ttl: unknown): string =>
  `${operation}: ttl must be a duration (e.g. "30 seconds" or a number of milliseconds), got ${String(ttl)}`
