/**
 * Bounded metric memory under churn: caches made and released by the thousand, each with a breaker
 * name and keys of its own, leave the cache's series at the fixed set (their labels never name a
 * cache or a key) and take their breakers' series with them, so the registry holds no more series
 * after the churn than the cache's fixed set adds.
 */
import { Policy } from "@circuitry/breaker"
import { Cache, CacheStore } from "@circuitry/cache"
import { assert, describe, it, metricSeries, yieldNow } from "@circuitry/testkit"
import { Effect, Layer } from "effect"
import { makeTestStore } from "./testStore.js"

/** Every series of the cache package the sources make (metrics.ts): 22 operations, 3 lookups, 5 loads, 3 L2. */
const CACHE_SERIES = 33

const NAMES = 2_000

const cacheSeries = Effect.map(metricSeries, (all) => all.filter((s) => s.name.startsWith("circuitry_cache_")))
/** circuitry's other series (Effect's own, such as its fiber counters, appear on first use). */
const otherSeries = Effect.map(metricSeries, (all) =>
  all.filter((s) => s.name.startsWith("circuitry_") && !s.name.startsWith("circuitry_cache_"))
)

/** One cache's life: made over its own store, used (hits, loads, a failed load; sheds and L2 errors for one in ten), released. */
const lifeOf = (i: number) =>
  Effect.gen(function* () {
    const store = yield* makeTestStore()
    const layer = Cache.layer({
      breaker: { name: `churn-${i}`, policy: Policy.consecutiveFailures(1) },
      l1: { capacity: 10 },
      l2Writes: "background",
      maxConcurrentLoads: 1,
      maxQueuedLoads: 0
    }).pipe(Layer.provide(Layer.succeed(CacheStore.Store, store)))
    yield* Effect.gen(function* () {
      const cache = yield* Cache.Cache
      yield* cache.getOrLoad(`key-${i}`, Effect.succeed("v"))
      yield* cache.getOrLoad(`key-${i}`, Effect.succeed("v"))
      yield* Effect.exit(cache.getOrLoad(`failing-${i}`, Effect.fail("boom")))
      if (i % 10 === 0) {
        // a failing L2: an error opens the circuit, the next read is shed, a background write fails
        store.failing = true
        yield* cache.get(`other-${i}`)
        yield* cache.get(`other-${i}`)
        yield* cache.set(`key-${i}`, "w")
        yield* Effect.forEach(Array.from({ length: 5 }), () => yieldNow, { discard: true })
      }
    }).pipe(Effect.provide(layer))
  })

describe("metrics under churn", () => {
  it.effect(
    `${NAMES} caches made and released leave the cache's fixed series and no breaker's`,
    () =>
      Effect.gen(function* () {
        const others = (yield* otherSeries).length
        for (let i = 0; i < NAMES; i++) yield* lifeOf(i)
        const after = yield* cacheSeries
        assert.isAtMost(after.length, CACHE_SERIES)
        // every life counted into the same series: none is made per cache
        const count = (name: string, attributes: Record<string, string>) =>
          after.find(
            (s) => s.name === name && Object.entries(attributes).every(([key, value]) => s.attributes[key] === value)
          )?.state as { readonly count: number } | undefined
        assert.isAtLeast(count("circuitry_cache_lookups_total", { outcome: "hit" })?.count ?? 0, NAMES)
        assert.isAtLeast(count("circuitry_cache_loads_total", { outcome: "failure" })?.count ?? 0, NAMES)
        assert.isAtLeast(
          count("circuitry_cache_operations_total", { operation: "get", outcome: "shed" })?.count ?? 0,
          NAMES / 10
        )
        // no series anywhere is labelled with a cache's name or a key: the breakers' left with them
        const named = (yield* metricSeries).filter((s) =>
          Object.values(s.attributes).some((v) => /churn-|key-|failing-|other-/.test(v))
        )
        assert.deepStrictEqual(named, [])
        // and nothing else of circuitry's grew
        assert.strictEqual((yield* otherSeries).length, others)
      }),
    120_000
  )
})
