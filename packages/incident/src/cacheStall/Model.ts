/**
 * The world of the cache-stall incident: skewed traffic over many keys, and a database with a
 * fixed capacity. None of this is library code: it is the model the library is run against. Its
 * time is the Effect Clock (the scenario's), and what reaches the database is counted with
 * `Scenario.count`.
 *
 * @since 0.1.0
 */
import { Scenario } from "@circuitry/chaos"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

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
 * The cache as it is after a long quiet time: a key asked for at rate r with a TTL T is cached
 * with probability rT / (1 + rT), with a uniform time left to live. The draws are a golden-ratio
 * sequence (evenly spread and the same every run), not random numbers.
 *
 * @since 0.1.0
 * @category models
 */
export const warmEntries = (
  zipf: Zipf,
  rate: number,
  ttlMillis: number
): Array<{ readonly key: number; readonly ttlMillis: number }> => {
  const entries: Array<{ key: number; ttlMillis: number }> = []
  for (let i = 0; i < zipf.keys; i++) {
    const rt = (rate * zipf.shares[i]! * ttlMillis) / 1000
    const u = (i * 0.6180339887498949) % 1
    const v = (i * 0.7548776662466927) % 1
    if (u < rt / (1 + rt)) entries.push({ key: i, ttlMillis: Math.max(1, Math.floor(v * ttlMillis)) })
  }
  return entries
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
 * The value the database holds for a key.
 *
 * @since 0.1.0
 * @category models
 */
export const rowOf = (key: string): string => `row of ${key}`

const refused = Effect.zipRight(
  Scenario.count("db.refused"),
  Effect.fail(new DatabaseUnavailable({ message: "database unavailable: over capacity" }))
)

/**
 * A database with a fixed capacity. Queries beyond it (a token bucket refilled at `capacity` per
 * second, holding a tenth of a second's worth) are refused at once as "database unavailable";
 * accepted ones answer after a latency that grows with the load of the last second:
 * `latency / (1 - load / capacity)`, at most ten times the idle latency. Counts `db.queries` (sent)
 * and `db.refused`.
 *
 * @since 0.1.0
 * @category models
 */
export class Database {
  private tokens: number
  private refilledAt = 0
  /** Accepted queries per 100 ms over the last second, for the load that sets the latency. */
  private readonly recent = new Float64Array(10)
  private recentSlot = 0

  constructor(readonly options: DatabaseOptions) {
    this.tokens = options.capacity / 10
  }

  /** The answer for one key, after the database's latency; refused when it is full. */
  query(key: string): Effect.Effect<string, DatabaseUnavailable> {
    return Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.zipRight(
        Scenario.count("db.queries"),
        this.take(now) ? Effect.as(Effect.sleep(this.latency()), rowOf(key)) : refused
      )
    )
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
