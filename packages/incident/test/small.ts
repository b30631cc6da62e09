import * as CacheStall from "../src/cacheStall/CacheStall.js"

/** A small cache-stall incident: 300 requests/s, a 3 s stall at 10 s, the breaker open 10 s. */
export const small: CacheStall.Config = {
  ...CacheStall.defaults,
  rate: 300,
  keys: 5_000,
  ttlMillis: 20_000,
  dbCapacity: 200,
  stallAtMillis: 10_000,
  stallMillis: 3_000,
  openForMillis: 10_000,
  durationMillis: 40_000,
  maxConcurrentLoads: 16
}
