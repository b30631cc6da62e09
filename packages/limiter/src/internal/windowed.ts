/**
 * Sampling windows, as Netflix concurrency-limits' `WindowedLimit` over an
 * `ImmutableAverageSampleWindow`: samples are gathered into a window (lowest and average round
 * trip, most in flight, whether any dropped), and when a call ends past the window's end, the
 * window goes to the inner algorithm as one sample (the average round trip, the most in flight,
 * a drop if any) provided it holds at least `windowSize` samples; a smaller window is dropped. The
 * next window lasts twice the lowest round trip seen, between `minWindow` and `maxWindow`. One
 * update per window is what keeps a burst of slow calls from cutting the limit once per call, and
 * a long average over windows from following a sustained overload within seconds.
 */
import type { Algorithm, Sample } from "./algorithm.js"

export interface Config {
  readonly minWindowMillis: number
  readonly maxWindowMillis: number
  readonly windowSize: number
}

export interface State<S> {
  readonly inner: S
  readonly nextUpdate: number
  readonly minRtt: number
  readonly sum: number
  readonly maxInFlight: number
  readonly count: number
  readonly drop: boolean
}

export const step = <S>(config: Config, inner: Algorithm<S>, state: State<S>, sample: Sample): State<S> => {
  // The original ignores round trips under 100 microseconds; the Clock's whole milliseconds make that 0.
  if (!(sample.rtt > 0)) return state
  const minRtt = Math.min(state.minRtt, sample.rtt)
  const sum = state.sum + sample.rtt
  const maxInFlight = Math.max(state.maxInFlight, sample.inflight)
  const count = state.count + 1
  const drop = state.drop || sample.drop
  const end = sample.start + sample.rtt
  if (!(end > state.nextUpdate)) return { ...state, minRtt, sum, maxInFlight, count, drop }
  const nextUpdate = end + Math.min(Math.max(minRtt * 2, config.minWindowMillis), config.maxWindowMillis)
  const ready = count >= config.windowSize
  return {
    inner: ready
      ? inner.step(state.inner, { start: sample.start, rtt: sum / count, inflight: maxInFlight, drop })
      : state.inner,
    nextUpdate,
    minRtt: Infinity,
    sum: 0,
    maxInFlight: 0,
    count: 0,
    drop: false
  }
}

export const make = <S>(config: Config, inner: Algorithm<S>): Algorithm<State<S>> => ({
  initial: { inner: inner.initial, nextUpdate: 0, minRtt: Infinity, sum: 0, maxInFlight: 0, count: 0, drop: false },
  step: (state, sample) => step(config, inner, state, sample),
  limitOf: (state) => inner.limitOf(state.inner),
  ignoresZeroRtt: true
})
