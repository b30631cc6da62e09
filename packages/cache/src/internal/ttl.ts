import * as Edition from "@circuitry/core/Edition"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"

/**
 * The one TTL rule of every `CacheStore` (see `CacheStore.ttlMillis`): `Infinity` when there is no
 * TTL or it is infinite, 0 when it is zero or less (a negative or NaN duration is zero, on both
 * Effect majors), `undefined` when the input is not a duration at all.
 *
 * @internal
 */
export const ttlMillis = (ttl: Edition.DurationInput | undefined): number | undefined => {
  if (ttl === undefined) return Infinity
  const decoded = Edition.durationFromUnknown(ttl)
  if (Option.isNone(decoded)) return undefined
  // Effect 3 reads a negative duration as zero; Effect 4 keeps its sign: zero on both.
  const millis = Duration.toMillis(decoded.value)
  return millis > 0 ? millis : 0
}

/** @internal */
export const invalidTtl = (operation: string, ttl: unknown): string =>
  `${operation}: ttl must be a duration (e.g. "30 seconds" or a number of milliseconds), got ${String(ttl)}`
