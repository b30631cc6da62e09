/**
 * AIMD, as Netflix concurrency-limits' `AIMDLimit`: additive increase by one while at least half
 * the limit is in use, multiplicative decrease by `backoff` on a drop or a call slower than
 * `timeout`. The state is the whole-number limit itself.
 */
import { type Algorithm, clamp, type Sample } from "./algorithm.js"

export interface Config {
  readonly initial: number
  readonly min: number
  readonly max: number
  readonly backoff: number
  readonly timeoutMillis: number
}

export const step = (config: Config, limit: number, sample: Sample): number => {
  let next = limit
  if (sample.drop || sample.rtt > config.timeoutMillis) {
    next = Math.floor(limit * config.backoff)
  } else if (sample.inflight * 2 >= limit) {
    next = limit + 1
  }
  return clamp(next, config.min, config.max)
}

export const make = (config: Config): Algorithm<number> => ({
  initial: clamp(config.initial, config.min, config.max),
  step: (limit, sample) => step(config, limit, sample),
  limitOf: (limit) => limit
})
