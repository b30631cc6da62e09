/**
 * Gradient2, as Netflix concurrency-limits' `Gradient2Limit`: the limit follows the gradient
 * between a long-term average round trip (an exponential average over `longWindow` samples,
 * after a plain average over the first 10) and the last round trip, plus a `queueSize` allowance,
 * smoothed by `smoothing`:
 *
 *   gradient = clamp(rttTolerance * longRtt / rtt, 0.5, 1)
 *   limit'   = limit * (1 - smoothing) + (limit * gradient + queueSize(limit)) * smoothing
 *
 * The limit does not grow while less than half of it is in use (the caller is "app limited"), and
 * when the long average is more than twice the last round trip (load has gone), it decays by 5%
 * per sample instead of waiting for the average. Unlike the original, the long average does not
 * rise with the round trip of a call that started with half the limit or more in use (see below).
 * Like the original, a drop carries no signal of its own here: its (long) round trip is what lowers
 * the limit. A round trip of 0 ms (a call that answered within the Clock's resolution) carries no
 * latency information and changes nothing.
 */
import { type Algorithm, clamp, type Sample } from "./algorithm.js"

export interface Config {
  readonly initial: number
  readonly min: number
  readonly max: number
  readonly smoothing: number
  readonly longWindow: number
  readonly rttTolerance: number
  readonly queueSize: (limit: number) => number
}

export interface State {
  /** The estimated limit, fractional; the limit is its whole part. */
  readonly estimate: number
  /** The long-term average round trip (ms). */
  readonly longRtt: number
  /** Samples in the long average so far (counted up to the warm-up of 10). */
  readonly count: number
  /** The last round trip (ms). */
  readonly lastRtt: number
}

const WARMUP = 10

export const step = (config: Config, state: State, sample: Sample): State => {
  const rtt = sample.rtt
  if (!(rtt > 0)) return state
  const queueSize = config.queueSize(Math.floor(state.estimate))
  // The long average after this sample: a plain mean for the first 10, then exponential. It does
  // not rise with a call that started with half the limit or more in use: that round trip holds the
  // queue the limit lets build, and an average that follows it lets the limit (and the queue) creep
  // up for as long as the overload lasts. It still falls at once, and learns the round trip when
  // there is no average yet or the limit is at its floor (then the queue is the dependency's own).
  let count = state.count
  let longRtt: number
  if (count > 0 && rtt > state.longRtt && sample.inflight * 2 >= state.estimate && state.estimate > config.min) {
    longRtt = state.longRtt
  } else if (count < WARMUP) {
    longRtt = (state.longRtt * count + rtt) / (count + 1)
    count++
  } else {
    const factor = 2 / (config.longWindow + 1)
    longRtt = state.longRtt * (1 - factor) + rtt * factor
  }
  // Load has gone: bring the long average down without waiting for the exponential smoothing.
  const decayed = longRtt / rtt > 2 ? longRtt * 0.95 : longRtt
  const estimate = state.estimate
  // App limited: do not grow a limit that is not being used.
  if (sample.inflight < estimate / 2) return { estimate, longRtt: decayed, count, lastRtt: rtt }
  // The gradient uses the long average before the decay, as the original does.
  const gradient = clamp((config.rttTolerance * longRtt) / rtt, 0.5, 1)
  let next = estimate * gradient + queueSize
  next = estimate * (1 - config.smoothing) + next * config.smoothing
  return { estimate: clamp(next, config.min, config.max), longRtt: decayed, count, lastRtt: rtt }
}

export const make = (config: Config): Algorithm<State> => ({
  initial: { estimate: clamp(config.initial, config.min, config.max), longRtt: 0, count: 0, lastRtt: 0 },
  step: (state, sample) => step(config, state, sample),
  limitOf: (state) => Math.floor(state.estimate),
  ignoresZeroRtt: true
})
