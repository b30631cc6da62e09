/**
 * One update per round trip: a sample from a call that started before the algorithm last changed
 * its state was admitted under the old limit and says nothing about the new one, so it is not given
 * to the algorithm. A drop that arrives within one round trip of a backoff then belongs to the same
 * congestion event (as TCP counts one loss event per window), an increase waits until a call
 * admitted under the new limit has come back (TCP's additive increase of one per round trip), and
 * Vegas and Gradient2 compare round trips once per round trip (as TCP Vegas does), not once per call.
 * Per call, a limit that changes on every sample moves by a whole round trip's worth of samples
 * before the first sample taken under the new limit arrives: it overshoots, then a burst of late
 * drops takes it down to its floor.
 */
import type { Algorithm, Sample } from "./algorithm.js"

export interface State<S> {
  readonly inner: S
  /** When the inner state last changed (epoch ms): calls that started before it are skipped. */
  readonly changedAt: number
}

export const step = <S>(inner: Algorithm<S>, state: State<S>, sample: Sample): State<S> => {
  if (sample.start < state.changedAt) return state
  const next = inner.step(state.inner, sample)
  // A sample that changes nothing (an idle limit, a 0 ms round trip) does not start a new round.
  return next === state.inner ? state : { inner: next, changedAt: sample.start + sample.rtt }
}

export const make = <S>(inner: Algorithm<S>): Algorithm<State<S>> => ({
  initial: { inner: inner.initial, changedAt: -Infinity },
  step: (state, sample) => step(inner, state, sample),
  limitOf: (state) => inner.limitOf(state.inner),
  ...(inner.ignoresZeroRtt === true ? { ignoresZeroRtt: true as const } : {})
})
