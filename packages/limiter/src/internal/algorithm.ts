/** What every limit algorithm is given and what it gives back: the shared shape of the step functions. */

/** One finished call, as the algorithm sees it. */
export interface Sample {
  /** When the call started, epoch milliseconds from the Effect Clock. */
  readonly start: number
  /** Round-trip time in milliseconds, from the Effect Clock. */
  readonly rtt: number
  /** Calls in flight when this one started (itself included). */
  readonly inflight: number
  /** The call signalled overload (a timeout, a rejection from further down). */
  readonly drop: boolean
}

/**
 * A pure step function over a state `S`: `step` never mutates its input, so a test (or a model
 * check) can drive it with samples and compare states.
 */
export interface Algorithm<S> {
  readonly initial: S
  readonly step: (state: S, sample: Sample) => S
  /** The whole-number limit a state stands for, within [min, max]. */
  readonly limitOf: (state: S) => number
  /**
   * Set when a sample whose round trip is not > 0 ms always gives back the same state (Gradient2,
   * Vegas, Windowed: such a sample carries no latency): the limiter then skips the step for it. A
   * call that answers within the Clock's resolution is the commonest sample of a fast dependency.
   */
  readonly ignoresZeroRtt?: true
}

export const clamp = (n: number, min: number, max: number): number => Math.max(min, Math.min(max, n))
