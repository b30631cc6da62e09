import * as Duration from "effect/Duration"
import * as Option from "effect/Option"

/**
 * Milliseconds of a write's `ttl`: `Infinity` when there is none (or it is infinite), `undefined`
 * when the input is not a duration at all (or is negative).
 *
 * @internal
 */
export const ttlMillis = (ttl: Duration.DurationInput | undefined): number | undefined => {
  if (ttl === undefined) return Infinity
  const decoded = Duration.decodeUnknown(ttl)
  if (Option.isNone(decoded)) return undefined
  const ms = Duration.toMillis(decoded.value)
  return Number.isNaN(ms) || ms < 0 ? undefined : ms
}

/** @internal */
export const invalidTtl = (operation: string, ttl: unknown): string =>
  `${operation}: ttl must be a duration >= 0 (e.g. "30 seconds" or a number of milliseconds), got ${String(ttl)}`
