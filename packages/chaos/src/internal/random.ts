/**
 * A small seeded generator (mulberry32): 32 bits of state, a full period of 2^32, good enough to
 * draw faults and far faster than anything cryptographic. Never `Math.random`: a run must be
 * reproducible from its seed.
 *
 * @internal
 */
export type Random = () => number

/** @internal */
export const make = (seed: number): Random => {
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
 * The seed of stream `index` of a run seeded with `seed` (a 32-bit hash of the pair), so that each
 * request of a scenario draws from a stream of its own: its faults do not depend on how the other
 * requests were scheduled.
 *
 * @internal
 */
export const derive = (seed: number, index: number): number => {
  let h = Math.imul((seed >>> 0) ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index >>> 0, 0xc2b2ae35)
  h ^= h >>> 16
  h = Math.imul(h, 0x7feb352d)
  h ^= h >>> 15
  h = Math.imul(h, 0x846ca68b)
  h ^= h >>> 16
  return h >>> 0
}

/** A standard normal draw (Box-Muller). @internal */
export const normal = (random: Random): number => {
  const u = 1 - random() // in (0, 1]: the logarithm stays finite
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random())
}
