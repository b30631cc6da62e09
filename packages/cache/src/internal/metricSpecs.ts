/**
 * The cache's metrics, declared once: names and help texts. metrics.ts makes the public counters
 * from them.
 */

/** A metric's name and help text. @internal */
export interface Spec {
  readonly name: string
  readonly description: string
}

/** @internal */
export const operations: Spec = {
  name: "circuitry_cache_operations_total",
  description:
    "Operations on a guarded cache store, by operation and outcome: hit or miss (get), success (the others), " +
    "shed (refused by the open circuit) or error (the store failed); shed and error returned the fallback"
}

/** @internal */
export const lookups: Spec = {
  name: "circuitry_cache_lookups_total",
  description:
    "getOrLoad lookups, by outcome: hit (served from the cache), load (started the key's load), " +
    "coalesced (joined the key's load in flight)"
}

/** @internal */
export const loads: Spec = {
  name: "circuitry_cache_loads_total",
  description:
    "Loads getOrLoad started, by how they ended: success, failure, rejected (by the load cap's line, " +
    "with a reason: queue-full or wait-exceeded), interrupted"
}

/** @internal */
export const l2WriteFailures: Spec = {
  name: "circuitry_cache_l2_write_failures_total",
  description: "Background L2 writes of a layered cache store that failed, by operation: set, touch, delete"
}
