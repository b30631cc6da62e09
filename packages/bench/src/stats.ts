/**
 * Small, pure helpers for turning timing samples into figures.
 */

/** The median of a non-empty list (the mean of the middle two for an even count). */
export const median = (values: ReadonlyArray<number>): number => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** Half the distance between the 25th and 75th percentiles, as a fraction of the median: the noise. */
export const spread = (values: ReadonlyArray<number>): number => {
  if (values.length < 2) return 0
  const sorted = [...values].sort((a, b) => a - b)
  const at = (p: number) => {
    const i = (sorted.length - 1) * p
    const lo = Math.floor(i)
    const hi = Math.ceil(i)
    return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (i - lo)
  }
  const m = median(sorted)
  return m === 0 ? 0 : (at(0.75) - at(0.25)) / 2 / m
}

/**
 * The median of per-repeat ratios `a[i] / b[i]`: samples of the same repeat ran back to back, so
 * their ratio cancels most of the drift of the machine's load between repeats.
 */
export const pairedRatio = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): number =>
  median(a.slice(0, Math.min(a.length, b.length)).map((x, i) => x / b[i]!))
