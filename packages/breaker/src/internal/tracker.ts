/**
 * Trackers: the mutable, Effect-free bookkeeping behind each `Policy`.
 *
 * A tracker is fed one outcome at a time (with the Clock's `now` and the call's duration) and
 * answers whether the circuit should trip. It holds no Effect services and reads no clock, so
 * the state machine and its model test can drive it directly.
 */

/** @internal */
export interface Counts {
  readonly calls: number
  readonly failures: number
  readonly slowCalls: number
  readonly consecutiveFailures: number
}

/** @internal */
export interface Tracker {
  /** Records one outcome; true when the policy now says "open". */
  readonly record: (failure: boolean, now: number, durationMillis: number) => boolean
  /** Empties the window (every transition starts a new one). */
  readonly reset: () => void
  /** What the window holds at `now`. */
  readonly counts: (now: number) => Counts
}

/** @internal */
export const consecutiveFailures = (threshold: number): Tracker => {
  let consecutive = 0
  let calls = 0
  let failures = 0
  return {
    record: (failure) => {
      calls++
      if (failure) {
        failures++
        consecutive++
        return consecutive >= threshold
      }
      consecutive = 0
      return false
    },
    reset: () => {
      consecutive = 0
      calls = 0
      failures = 0
    },
    counts: () => ({ calls, failures, slowCalls: 0, consecutiveFailures: consecutive })
  }
}

/** @internal */
export interface RateOptions {
  readonly threshold: number
  readonly minimumCalls: number
  readonly slowMillis: number | undefined
  readonly slowThreshold: number
}

const FAILURE = 1
const SLOW = 2

/**
 * Failure rate over the last `size` calls: a ring of flags with running totals, so a record is
 * O(1) and allocates nothing.
 *
 * @internal
 */
export const countWindow = (size: number, options: RateOptions): Tracker => {
  const ring = new Uint8Array(size)
  let next = 0
  let calls = 0
  let failures = 0
  let slowCalls = 0
  let consecutive = 0
  return {
    record: (failure, _now, durationMillis) => {
      if (calls === size) {
        const old = ring[next]!
        if (old & FAILURE) failures--
        if (old & SLOW) slowCalls--
      } else {
        calls++
      }
      const slow = options.slowMillis !== undefined && durationMillis > options.slowMillis
      ring[next] = (failure ? FAILURE : 0) | (slow ? SLOW : 0)
      next = (next + 1) % size
      if (failure) {
        failures++
        consecutive++
      } else {
        consecutive = 0
      }
      if (slow) slowCalls++
      return verdict(options, calls, failures, slowCalls)
    },
    reset: () => {
      ring.fill(0)
      next = 0
      calls = 0
      failures = 0
      slowCalls = 0
      consecutive = 0
    },
    counts: () => ({ calls, failures, slowCalls, consecutiveFailures: consecutive })
  }
}

/** How many buckets a time window is cut into (the window's resolution is duration / BUCKETS). */
export const TIME_WINDOW_BUCKETS = 20

/**
 * The bucket width of a time window of `durationMillis`, and how many buckets it spans. A call at
 * time `t` is in the window at `now` when `floor(t / width) > floor(now / width) - buckets`.
 *
 * @internal
 */
export const timeWindowGeometry = (durationMillis: number): { readonly width: number; readonly buckets: number } => {
  const width = Math.max(1, Math.ceil(durationMillis / TIME_WINDOW_BUCKETS))
  return { width, buckets: Math.max(1, Math.ceil(durationMillis / width)) }
}

/**
 * Failure rate over the calls of the last `durationMillis`, kept in fixed buckets so that memory
 * does not grow with the call rate.
 *
 * @internal
 */
export const timeWindow = (durationMillis: number, options: RateOptions): Tracker => {
  const { buckets, width } = timeWindowGeometry(durationMillis)
  const index = new Float64Array(buckets).fill(-1)
  const bucketCalls = new Uint32Array(buckets)
  const bucketFailures = new Uint32Array(buckets)
  const bucketSlow = new Uint32Array(buckets)
  let calls = 0
  let failures = 0
  let slowCalls = 0
  let consecutive = 0
  const evict = (now: number) => {
    const current = Math.floor(now / width)
    for (let i = 0; i < buckets; i++) {
      if (index[i]! >= 0 && index[i]! <= current - buckets) {
        calls -= bucketCalls[i]!
        failures -= bucketFailures[i]!
        slowCalls -= bucketSlow[i]!
        index[i] = -1
        bucketCalls[i] = 0
        bucketFailures[i] = 0
        bucketSlow[i] = 0
      }
    }
    return current
  }
  return {
    record: (failure, now, durationMillis) => {
      const current = evict(now)
      const slot = current % buckets
      index[slot] = current
      const slow = options.slowMillis !== undefined && durationMillis > options.slowMillis
      bucketCalls[slot]!++
      calls++
      if (failure) {
        bucketFailures[slot]!++
        failures++
        consecutive++
      } else {
        consecutive = 0
      }
      if (slow) {
        bucketSlow[slot]!++
        slowCalls++
      }
      return verdict(options, calls, failures, slowCalls)
    },
    reset: () => {
      index.fill(-1)
      bucketCalls.fill(0)
      bucketFailures.fill(0)
      bucketSlow.fill(0)
      calls = 0
      failures = 0
      slowCalls = 0
      consecutive = 0
    },
    counts: (now) => {
      evict(now)
      return { calls, failures, slowCalls, consecutiveFailures: consecutive }
    }
  }
}

const verdict = (options: RateOptions, calls: number, failures: number, slowCalls: number): boolean =>
  calls >= options.minimumCalls &&
  (failures / calls >= options.threshold ||
    (options.slowMillis !== undefined && slowCalls / calls >= options.slowThreshold))
