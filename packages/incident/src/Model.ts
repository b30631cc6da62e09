/**
 * The world the replay runs in: a timeline of virtual milliseconds, skewed traffic, a database
 * with a fixed capacity, and a cache store that stalls. None of this is library code: it is the
 * model the library is run against.
 *
 * @since 0.1.0
 */
import { CacheStore } from "@circuitry/cache"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * Virtual time at a finer grain than the Clock's steps: request arrivals, database answers and the
 * stall are scheduled here, in sub-steps of `stepMillis`.
 *
 * @since 0.1.0
 * @category models
 */
export class Timeline {
  /** Virtual milliseconds since the start of the replay. */
  now = 0
  private index = 0
  private readonly due = new Map<number, Array<() => void>>()

  constructor(readonly stepMillis: number) {}

  /** Runs `f` at the first sub-step at or after `at` (never in the current one). */
  at(at: number, f: () => void): void {
    const index = Math.max(this.index + 1, Math.ceil(at / this.stepMillis))
    const list = this.due.get(index)
    if (list === undefined) this.due.set(index, [f])
    else list.push(f)
  }

  /** Moves to sub-step `index` and runs what is due there. */
  advanceTo(index: number): void {
    this.index = index
    this.now = index * this.stepMillis
    const list = this.due.get(index)
    if (list === undefined) return
    this.due.delete(index)
    for (const f of list) f()
  }
}

/**
 * A small seeded generator (mulberry32), so that every strategy sees the same traffic and every
 * run of the same flags gives the same numbers.
 *
 * @since 0.1.0
 * @category models
 */
export const random = (seed: number): (() => number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * Zipf-like popularity: key `i` (0-based) is asked for in proportion to `1 / (i + 1) ** exponent`.
 *
 * @since 0.1.0
 * @category models
 */
export class Zipf {
  /** The share of the traffic each key gets. */
  readonly shares: Float64Array
  private readonly cdf: Float64Array

  constructor(
    readonly keys: number,
    exponent: number
  ) {
    this.shares = new Float64Array(keys)
    let total = 0
    for (let i = 0; i < keys; i++) total += this.shares[i] = 1 / Math.pow(i + 1, exponent)
    this.cdf = new Float64Array(keys)
    let sum = 0
    for (let i = 0; i < keys; i++) {
      this.shares[i] = this.shares[i]! / total
      sum += this.shares[i]!
      this.cdf[i] = sum
    }
  }

  /** The key for a uniform draw `u` in [0, 1). */
  sample(u: number): number {
    let lo = 0
    let hi = this.keys - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.cdf[mid]! < u) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

/**
 * The database refused a query: it is over its capacity.
 *
 * @since 0.1.0
 * @category errors
 */
export class DatabaseUnavailable extends Schema.TaggedError<DatabaseUnavailable>()("DatabaseUnavailable", {
  message: Schema.String
}) {}

/**
 * What one strategy's world counted in one second of virtual time.
 *
 * @since 0.1.0
 * @category models
 */
export interface Second {
  requests: number
  /** Cache reads that returned no value: a miss, a failed read or a read shed by an open circuit. */
  misses: number
  /** Queries sent to the database (accepted or refused). */
  queries: number
  /** Queries the database refused ("database unavailable"). */
  refused: number
  /** Requests that got no answer: their load failed, or it came after the request's deadline. */
  failed: number
  /** Cache calls that failed because the cache was stalled. */
  cacheErrors: number
}

/**
 * Per-second counters over the whole replay.
 *
 * @since 0.1.0
 * @category models
 */
export class Counters {
  readonly seconds: Array<Second>

  constructor(
    seconds: number,
    private readonly timeline: Timeline
  ) {
    this.seconds = Array.from({ length: seconds }, () => ({
      requests: 0,
      misses: 0,
      queries: 0,
      refused: 0,
      failed: 0,
      cacheErrors: 0
    }))
  }

  /** The counters of the second the timeline is in now (the last one past the end). */
  get current(): Second {
    const index = Math.min(this.seconds.length - 1, Math.floor(this.timeline.now / 1000))
    return this.seconds[index]!
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface DatabaseOptions {
  /** Queries per second it can serve; above it, queries are refused. */
  readonly capacity: number
  /** Latency when idle, in milliseconds; it grows as the database fills. */
  readonly latencyMillis: number
}

/**
 * A database with a fixed capacity. Queries beyond it (a token bucket refilled at `capacity`
 * per second, holding a tenth of a second's worth) are refused at once as "database
 * unavailable"; accepted ones answer after a latency that grows with the load of the last
 * second: `latency / (1 - load / capacity)`, at most ten times the idle latency.
 *
 * @since 0.1.0
 * @category models
 */
/** The value the database holds for a key. */
export const rowOf = (key: string): string => `row of ${key}`

const unavailable = new DatabaseUnavailable({ message: "database unavailable: over capacity" })

export class Database {
  private tokens: number
  private refilledAt = 0
  /** Accepted queries per 100 ms over the last second, for the load that sets the latency. */
  private readonly recent = new Float64Array(10)
  private recentSlot = 0

  constructor(
    readonly options: DatabaseOptions,
    private readonly timeline: Timeline,
    private readonly counters: Counters
  ) {
    this.tokens = options.capacity / 10
  }

  /**
   * Sends one query now: the virtual time its answer arrives, or undefined when the database
   * refuses it.
   */
  send(): number | undefined {
    const now = this.timeline.now
    const second = this.counters.current
    second.queries++
    if (!this.take(now)) {
      second.refused++
      return undefined
    }
    return now + this.latency()
  }

  /** The answer for one key, after the database's latency; refused when it is full. */
  query(key: string): Effect.Effect<string, DatabaseUnavailable> {
    return Effect.async<string, DatabaseUnavailable>((resume) => {
      const answerAt = this.send()
      if (answerAt === undefined) resume(Effect.fail(unavailable))
      else this.timeline.at(answerAt, () => resume(Effect.succeed(rowOf(key))))
    })
  }

  private take(now: number): boolean {
    const { capacity } = this.options
    this.tokens = Math.min(capacity / 10, this.tokens + ((now - this.refilledAt) * capacity) / 1000)
    this.refilledAt = now
    const slot = Math.floor(now / 100)
    while (this.recentSlot < slot) this.recent[++this.recentSlot % 10] = 0
    if (this.tokens < 1) return false
    this.tokens--
    this.recent[slot % 10]!++
    return true
  }

  private latency(): number {
    let load = 0
    for (const n of this.recent) load += n
    const busy = Math.min(0.9, load / this.options.capacity)
    return this.options.latencyMillis / (1 - busy)
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface StallOptions {
  /** When the stall starts, in virtual milliseconds. */
  readonly atMillis: number
  /** How long the cache answers nothing. */
  readonly forMillis: number
  /**
   * The deadline of one cache call. A call that waits on the stalled cache fails at its deadline,
   * or when the stall ends and the client drops the stuck connection, whichever comes first.
   */
  readonly timeoutMillis: number
}

/**
 * A cache store that stalls: from `atMillis`, for `forMillis`, every call waits. The stall ends the
 * way the incident's did: the client gives up on the stuck connection and every call waiting on
 * it fails at once (a deadline that kills the shared connection turns one slow call into a batch
 * of failures); the new connection is healthy. A call whose own deadline comes first fails then.
 *
 * @since 0.1.0
 * @category models
 */
export const stalling = (
  store: CacheStore.CacheStore<never>,
  stall: StallOptions,
  timeline: Timeline,
  counters: Counters
): CacheStore.CacheStore<CacheStore.CacheError> => {
  const end = stall.atMillis + stall.forMillis
  const stalled = () => timeline.now >= stall.atMillis && timeline.now < end
  const stuck = <A>(operation: string): Effect.Effect<A, CacheStore.CacheError> =>
    Effect.async<A, CacheStore.CacheError>((resume) => {
      const deadline = timeline.now + stall.timeoutMillis
      const fail = (message: string) => () => {
        counters.current.cacheErrors++
        resume(Effect.fail(new CacheStore.CacheError({ operation, message })))
      }
      if (deadline < end) timeline.at(deadline, fail("timed out: the cache did not answer"))
      else timeline.at(end, fail("connection reset: the stuck connection was dropped"))
    })
  const call = <A>(operation: string, f: () => Effect.Effect<A>): Effect.Effect<A, CacheStore.CacheError> =>
    Effect.suspend(() => (stalled() ? stuck<A>(operation) : f()))
  return {
    get: (key) => call<Option.Option<string>>("get", () => store.get(key)),
    set: (key, value, options) => call("set", () => store.set(key, value, options)),
    touch: (key, options) => call("touch", () => store.touch(key, options)),
    delete: (key) => call("delete", () => store.delete(key)),
    keys: (prefix) => call("keys", () => store.keys(prefix)),
    size: call("size", () => store.size),
    ping: call("ping", () => store.ping)
  }
}
