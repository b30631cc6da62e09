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
  record(failure: boolean, now: number, durationMillis: number): boolean
  /** Empties the window (every transition starts a new one). */
  reset(): void
  /** What the window holds at `now`. */
  counts(now: number): Counts
  /**
   * Takes over what `previous` (a tracker of the policy this one replaces, live) holds at `now`,
   * when it is of the same kind: this one must be new (empty). A count window keeps the most recent
   * calls that fit its size; a time window keeps the buckets that fall in its duration (placed by
   * their start, at its own resolution). Returns false, and stays empty, when the kinds differ.
   */
  adopt(previous: Tracker, now: number): boolean
}

/**
 * Trackers are classes, not closures: a registry may hold 100,000 breakers, and methods on a
 * prototype cost nothing per breaker.
 *
 * @internal
 */
export class ConsecutiveFailures implements Tracker {
  private consecutive = 0
  private calls = 0
  private failures = 0
  constructor(private readonly threshold: number) {}
  record(failure: boolean): boolean {
    this.calls++
    if (failure) {
      this.failures++
      return ++this.consecutive >= this.threshold
    }
    this.consecutive = 0
    return false
  }
  reset(): void {
    this.consecutive = 0
    this.calls = 0
    this.failures = 0
  }
  counts(): Counts {
    return { calls: this.calls, failures: this.failures, slowCalls: 0, consecutiveFailures: this.consecutive }
  }
  adopt(previous: Tracker): boolean {
    if (!(previous instanceof ConsecutiveFailures)) return false
    this.consecutive = previous.consecutive
    this.calls = previous.calls
    this.failures = previous.failures
    return true
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
export class CountWindow implements Tracker {
  private readonly ring: Uint8Array
  private next = 0
  private calls = 0
  private failures = 0
  private slowCalls = 0
  private consecutive = 0
  constructor(
    private readonly size: number,
    private readonly options: RateOptions
  ) {
    this.ring = new Uint8Array(size)
  }
  record(failure: boolean, _now: number, durationMillis: number): boolean {
    if (this.calls === this.size) {
      const old = this.ring[this.next]!
      if (old & FAILURE) this.failures--
      if (old & SLOW) this.slowCalls--
    } else {
      this.calls++
    }
    const slow = this.options.slowMillis !== undefined && durationMillis > this.options.slowMillis
    this.ring[this.next] = (failure ? FAILURE : 0) | (slow ? SLOW : 0)
    this.next = (this.next + 1) % this.size
    if (failure) {
      this.failures++
      this.consecutive++
    } else {
      this.consecutive = 0
    }
    if (slow) this.slowCalls++
    return verdict(this.options, this.calls, this.failures, this.slowCalls)
  }
  reset(): void {
    this.ring.fill(0)
    this.next = 0
    this.calls = 0
    this.failures = 0
    this.slowCalls = 0
    this.consecutive = 0
  }
  counts(): Counts {
    return {
      calls: this.calls,
      failures: this.failures,
      slowCalls: this.slowCalls,
      consecutiveFailures: this.consecutive
    }
  }
  adopt(previous: Tracker): boolean {
    if (!(previous instanceof CountWindow)) return false
    // The most recent `kept` calls, oldest first.
    const kept = Math.min(previous.calls, this.size)
    const start = (previous.next - kept + previous.size) % previous.size
    for (let i = 0; i < kept; i++) {
      const flags = previous.ring[(start + i) % previous.size]!
      this.ring[i] = flags
      if (flags & FAILURE) this.failures++
      if (flags & SLOW) this.slowCalls++
    }
    this.calls = kept
    this.next = kept % this.size
    this.consecutive = previous.consecutive
    return true
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
export class TimeWindow implements Tracker {
  private readonly width: number
  private readonly buckets: number
  private readonly index: Float64Array
  private readonly bucketCalls: Uint32Array
  private readonly bucketFailures: Uint32Array
  private readonly bucketSlow: Uint32Array
  private calls = 0
  private failures = 0
  private slowCalls = 0
  private consecutive = 0
  /** The bucket index `evict` last saw (-1: none yet). */
  private last = -1
  constructor(
    durationMillis: number,
    private readonly options: RateOptions
  ) {
    const { buckets, width } = timeWindowGeometry(durationMillis)
    this.width = width
    this.buckets = buckets
    this.index = new Float64Array(buckets).fill(-1)
    this.bucketCalls = new Uint32Array(buckets)
    this.bucketFailures = new Uint32Array(buckets)
    this.bucketSlow = new Uint32Array(buckets)
  }
  /**
   * Drops the buckets that left the window; returns the current bucket's index. While time moves
   * within one bucket (most calls) this is one comparison; when it moves on, only the slots it
   * passed are cleared (each of them holds a bucket that left the window, or nothing).
   */
  private evict(now: number): number {
    const current = Math.floor(now / this.width)
    const last = this.last
    if (current === last) return current
    if (current > last && last >= 0) {
      for (let b = last + 1; b <= current && b <= last + this.buckets; b++) {
        const slot = b % this.buckets
        if (this.index[slot]! <= current - this.buckets) this.clear(slot)
      }
    } else {
      // The first call, or the clock went back: look at every slot.
      for (let i = 0; i < this.buckets; i++) {
        const index = this.index[i]!
        if (index >= 0 && index <= current - this.buckets) this.clear(i)
      }
    }
    this.last = current
    return current
  }
  private clear(slot: number): void {
    this.calls -= this.bucketCalls[slot]!
    this.failures -= this.bucketFailures[slot]!
    this.slowCalls -= this.bucketSlow[slot]!
    this.index[slot] = -1
    this.bucketCalls[slot] = 0
    this.bucketFailures[slot] = 0
    this.bucketSlow[slot] = 0
  }
  record(failure: boolean, now: number, durationMillis: number): boolean {
    const current = this.evict(now)
    const slot = current % this.buckets
    this.index[slot] = current
    const slow = this.options.slowMillis !== undefined && durationMillis > this.options.slowMillis
    this.bucketCalls[slot]!++
    this.calls++
    if (failure) {
      this.bucketFailures[slot]!++
      this.failures++
      this.consecutive++
    } else {
      this.consecutive = 0
    }
    if (slow) {
      this.bucketSlow[slot]!++
      this.slowCalls++
    }
    return verdict(this.options, this.calls, this.failures, this.slowCalls)
  }
  reset(): void {
    this.last = -1
    this.index.fill(-1)
    this.bucketCalls.fill(0)
    this.bucketFailures.fill(0)
    this.bucketSlow.fill(0)
    this.calls = 0
    this.failures = 0
    this.slowCalls = 0
    this.consecutive = 0
  }
  counts(now: number): Counts {
    this.evict(now)
    return {
      calls: this.calls,
      failures: this.failures,
      slowCalls: this.slowCalls,
      consecutiveFailures: this.consecutive
    }
  }
  adopt(previous: Tracker, now: number): boolean {
    if (!(previous instanceof TimeWindow)) return false
    previous.evict(now)
    const current = this.evict(now)
    for (let i = 0; i < previous.buckets; i++) {
      const index = previous.index[i]!
      if (index < 0) continue
      // The old bucket's start, in this window's buckets: kept when it is still in this window.
      const bucket = Math.floor((index * previous.width) / this.width)
      if (bucket <= current - this.buckets || bucket > current) continue
      const slot = bucket % this.buckets
      this.index[slot] = bucket
      this.bucketCalls[slot]! += previous.bucketCalls[i]!
      this.bucketFailures[slot]! += previous.bucketFailures[i]!
      this.bucketSlow[slot]! += previous.bucketSlow[i]!
      this.calls += previous.bucketCalls[i]!
      this.failures += previous.bucketFailures[i]!
      this.slowCalls += previous.bucketSlow[i]!
    }
    this.consecutive = previous.consecutive
    return true
  }
}

const verdict = (options: RateOptions, calls: number, failures: number, slowCalls: number): boolean =>
  calls >= options.minimumCalls &&
  (failures / calls >= options.threshold ||
    (options.slowMillis !== undefined && slowCalls / calls >= options.slowThreshold))
