/**
 * Vegas, as Netflix concurrency-limits' `VegasLimit` (after TCP Vegas): the queue a limit builds is
 * estimated from the lowest round trip seen (`rttNoLoad`) and the last one,
 *
 *   queue = ceil(limit * (1 - rttNoLoad / rtt))
 *
 * and the limit grows by `beta` when there is (almost) no queue (queue <= threshold), by
 * `log10(limit)` while queue < alpha, shrinks by `log10(limit)` when queue > beta or on a drop,
 * and stays between. Every `probeMultiplier * limit` samples (with a jitter in [0.5, 1)) the next
 * round trip is taken as the new `rttNoLoad`, so the base can rise when the dependency gets slower
 * for good. The jitter comes from a small generator kept in the state, so the step stays pure and
 * a run is reproducible. A round trip of 0 ms carries no latency information and changes nothing
 * (the original rejects it).
 */
import { type Algorithm, clamp, type Sample } from "./algorithm.js"

export interface Config {
  readonly initial: number
  readonly min: number
  readonly max: number
  readonly alpha: (limit: number) => number
  readonly beta: (limit: number) => number
  readonly threshold: (limit: number) => number
  readonly increase: (limit: number) => number
  readonly decrease: (limit: number) => number
  readonly smoothing: number
  readonly probeMultiplier: number
}

export interface State {
  readonly estimate: number
  /** The lowest round trip since the last probe (ms); 0 before the first sample. */
  readonly rttNoLoad: number
  readonly probeCount: number
  /** In [0.5, 1). */
  readonly probeJitter: number
  /** The state of the jitter's generator. */
  readonly seed: number
}

/** `max(1, floor(log10(n)))`, the original's `Log10RootIntFunction`. */
export const log10Root = (n: number): number => Math.max(1, Math.floor(Math.log10(Math.max(1, n))))

/** xorshift32: the next seed, and a number in [0.5, 1) from it. */
const nextJitter = (seed: number): { seed: number; jitter: number } => {
  let x = seed | 0
  x ^= x << 13
  x ^= x >>> 17
  x ^= x << 5
  return { seed: x, jitter: 0.5 + ((x >>> 0) / 4294967296) * 0.5 }
}

const INITIAL_SEED = 0x9e3779b9 | 0

export const step = (config: Config, state: State, sample: Sample): State => {
  const rtt = sample.rtt
  if (!(rtt > 0)) return state
  const probeCount = state.probeCount + 1
  // Probe: take this round trip as the new base. Not from a call that started with half the limit
  // or more in use (unless the limit is at its floor): its round trip holds the queue the limit
  // lets build, and taken as the base it would let that queue grow by alpha at every probe.
  if (
    state.probeJitter * config.probeMultiplier * state.estimate <= probeCount &&
    (sample.inflight * 2 < state.estimate || state.estimate <= config.min)
  ) {
    const { jitter, seed } = nextJitter(state.seed)
    return { estimate: state.estimate, rttNoLoad: rtt, probeCount: 0, probeJitter: jitter, seed }
  }
  if (state.rttNoLoad === 0 || rtt < state.rttNoLoad) return { ...state, rttNoLoad: rtt, probeCount }
  const estimate = state.estimate
  const limit = Math.floor(estimate)
  const queue = Math.ceil(estimate * (1 - state.rttNoLoad / rtt))
  let next: number
  if (sample.drop) {
    next = config.decrease(estimate)
  } else if (sample.inflight * 2 < estimate) {
    // Not close to the limit: do not drift upwards.
    return { ...state, probeCount }
  } else if (queue <= config.threshold(limit)) {
    next = estimate + config.beta(limit)
  } else if (queue < config.alpha(limit)) {
    next = config.increase(estimate)
  } else if (queue > config.beta(limit)) {
    next = config.decrease(estimate)
  } else {
    return { ...state, probeCount }
  }
  next = clamp(next, config.min, config.max)
  next = (1 - config.smoothing) * estimate + config.smoothing * next
  return { ...state, estimate: next, probeCount }
}

export const make = (config: Config): Algorithm<State> => {
  const { jitter, seed } = nextJitter(INITIAL_SEED)
  return {
    initial: {
      estimate: clamp(config.initial, config.min, config.max),
      rttNoLoad: 0,
      probeCount: 0,
      probeJitter: jitter,
      seed
    },
    step: (state, sample) => step(config, state, sample),
    limitOf: (state) => Math.floor(state.estimate),
    ignoresZeroRtt: true
  }
}
