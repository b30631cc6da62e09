/**
 * The latency estimator behind a percentile hedge delay: a ring of the last `SIZE` latencies in a
 * `Float64Array`, and the percentile recomputed every `EVERY` samples by quickselect on a scratch
 * copy (no sorting, no allocation after construction). A sample costs one store; a call reads a
 * cached number. Exact over the recent samples, bounded in memory (16 KiB), and it follows the
 * dependency as its latency moves (old samples fall out of the ring).
 */

/** Latencies kept. */
const SIZE = 1024
/** Samples between two recomputations of the percentile. */
const EVERY = 32
/** Below this many samples the percentile is not trusted. */
export const WARMUP = 32

/** @internal */
export class Latencies {
  private readonly ring = new Float64Array(SIZE)
  private readonly scratch = new Float64Array(SIZE)
  private count = 0
  private next = 0
  private sinceUpdate = 0
  private value: number | undefined

  /** `quantile` in (0, 1): 0.95 is the 95th percentile. */
  constructor(private readonly quantile: number) {}

  record(millis: number): void {
    this.ring[this.next] = millis
    this.next = (this.next + 1) % SIZE
    if (this.count < SIZE) this.count++
    if (++this.sinceUpdate >= EVERY && this.count >= WARMUP) {
      this.sinceUpdate = 0
      this.value = this.compute()
    }
  }

  /** The percentile of the recent samples; undefined until there are `WARMUP` of them. */
  get percentile(): number | undefined {
    return this.value
  }

  get samples(): number {
    return this.count
  }

  private compute(): number {
    const n = this.count
    const a = this.scratch
    for (let i = 0; i < n; i++) a[i] = this.ring[i]!
    // The nearest-rank percentile: the smallest sample with at least `quantile` of them at or below it.
    const k = Math.min(n - 1, Math.max(0, Math.ceil(this.quantile * n) - 1))
    return select(a, n, k)
  }
}

/** The k-th smallest of a[0..n) (Hoare's quickselect, middle pivot); reorders a. */
const select = (a: Float64Array, n: number, k: number): number => {
  let lo = 0
  let hi = n - 1
  while (lo < hi) {
    const pivot = a[(lo + hi) >>> 1]!
    let i = lo
    let j = hi
    while (i <= j) {
      while (a[i]! < pivot) i++
      while (a[j]! > pivot) j--
      if (i <= j) {
        const t = a[i]!
        a[i] = a[j]!
        a[j] = t
        i++
        j--
      }
    }
    if (k <= j) hi = j
    else if (k >= i) lo = i
    else return a[k]!
  }
  return a[k]!
}
