/** A fixed limit: the step function changes nothing (a bulkhead when combined with a queue). */
import type { Algorithm } from "./algorithm.js"

export const make = (limit: number): Algorithm<number> => ({
  initial: limit,
  step: (state) => state,
  limitOf: (state) => state
})
