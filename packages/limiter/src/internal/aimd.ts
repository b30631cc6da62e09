/**
 * AIMD, as Netflix concurrency-limits' `AIMDLimit`: additive increase by one while at least half
 * the limit is in use, multiplicative decrease by `backoff` on a drop or a call slower than
 * `timeout`. With `rttTolerance` (the default when no `timeout` is given), a call slower than
 * `rttTolerance` times the base round trip, plus the Clock's resolution (1 ms), is a drop too: a
 * loss signal alone lets the queue grow until calls time out, which is many times the base latency.
 *
 * The base is the lowest round trip over the current and the previous congestion cycle (a cycle
 * ends at each backoff), so it follows a dependency that gets slower for good within two cycles and
 * does not creep up with the queue the limit itself builds: a backoff of at most 1 / rttTolerance
 * brings the calls in flight back to the dependency's capacity, where the base is measured again.
 */
import { type Algorithm, clamp, type Sample } from "./algorithm.js"

export interface Config {
  readonly initial: number
  readonly min: number
  readonly max: number
  readonly backoff: number
  /** A call slower than this (ms) is a drop; Infinity for none. */
  readonly timeoutMillis: number
  /** A call slower than this times the base round trip (plus 1 ms) is a drop; undefined for none. */
  readonly rttTolerance: number | undefined
}

export interface State {
  readonly limit: number
  /** The lowest round trip (> 0 ms) since the last backoff; Infinity before one. */
  readonly base: number
  /** The lowest round trip of the cycle before. */
  readonly previousBase: number
}

export const step = (config: Config, state: State, sample: Sample): State => {
  const { limit, previousBase } = state
  const rtt = sample.rtt
  // Only kept with rttTolerance (the state is then Netflix's: the limit). A 0 ms round trip carries
  // no latency: it is no base.
  const base = config.rttTolerance !== undefined && rtt > 0 && rtt < state.base ? rtt : state.base
  const slow =
    rtt > config.timeoutMillis ||
    (config.rttTolerance !== undefined && rtt > config.rttTolerance * Math.min(base, previousBase) + 1)
  if (sample.drop || slow) {
    return {
      limit: clamp(Math.floor(limit * config.backoff), config.min, config.max),
      base: Infinity,
      previousBase: base
    }
  }
  const next = sample.inflight * 2 >= limit ? clamp(limit + 1, config.min, config.max) : limit
  return next === limit && base === state.base ? state : { limit: next, base, previousBase }
}

export const make = (config: Config): Algorithm<State> => ({
  initial: { limit: clamp(config.initial, config.min, config.max), base: Infinity, previousBase: Infinity },
  step: (state, sample) => step(config, state, sample),
  limitOf: (state) => state.limit
})
