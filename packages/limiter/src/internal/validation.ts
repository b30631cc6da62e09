/** Checks shared by the validation of limits and options (the rest are @circuitry/core's OptionRules). */

/** A whole number of at least `min`. */
export const isWhole = (n: unknown, min: number): n is number =>
  typeof n === "number" && Number.isInteger(n) && n >= min

/** A finite number strictly between `low` and `high`, or up to `high` when `inclusive`. */
export const isBetween = (n: unknown, low: number, high: number, inclusive = false): n is number =>
  typeof n === "number" && Number.isFinite(n) && n > low && (inclusive ? n <= high : n < high)
