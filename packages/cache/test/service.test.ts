import { BreakerRegistry, CircuitBreaker, Policy } from "@circuitry/breaker"
import { Cache, CacheStore, MemoryStore } from "@circuitry/cache"
import * as Edition from "@circuitry/core/Edition"
import { assert, describe, it, TestClock } from "@circuitry/testkit"
import { Effect, Fiber, Layer } from "effect"
import { makeTestStore } from "./testStore.js"

describe("Cache as a service", () => {
  it.scoped("the load cap lives in the cache value: a cache provided by hand keeps maxConcurrentLoads", () =>
    Effect.gen(function* () {
      const cache = yield* Cache.make(yield* MemoryStore.make(), { maxConcurrentLoads: 1 })
      assert.isTrue(Cache.isCache(cache))
      assert.isFalse(Cache.isCache(yield* MemoryStore.make()))
      assert.isFalse(Cache.isCache(null))
      let running = 0
      let peak = 0
      const load = (value: string) =>
        Effect.gen(function* () {
          running++
          peak = Math.max(peak, running)
          yield* Effect.sleep("1 second")
          running--
          return value
        })
      const fiber = yield* Edition.forkChild(
        Effect.all(
          ["a", "b", "c"].map((key) => Cache.getOrLoad(key, load(key))),
          { concurrency: "unbounded" }
        ).pipe(Effect.provideService(Cache.Cache, cache))
      )
      yield* TestClock.adjust("3 seconds")
      assert.deepStrictEqual(yield* Fiber.join(fiber), ["a", "b", "c"])
      assert.strictEqual(peak, 1)
      // the method and the accessor are one cache: what one loaded, the other reads
      assert.strictEqual(yield* cache.getOrLoad("a", Effect.die("not loaded again")), "a")
    })
  )

  it.scoped("Cache.layer takes its breaker from the BreakerRegistry in the context, by name", () =>
    Effect.gen(function* () {
      const store = yield* makeTestStore()
      const registry = BreakerRegistry.layer({
        defaults: { openFor: "1 minute" },
        overrides: { "redis-cache": { policy: Policy.consecutiveFailures(1) } }
      })
      const layer = Cache.layer({ breaker: { name: "redis-cache" } }).pipe(
        Layer.provide(Layer.succeed(CacheStore.Store, store)),
        Layer.provideMerge(registry)
      )
      const context = yield* Layer.build(layer)
      const { breaker, fromRegistry, names } = yield* Effect.gen(function* () {
        const registry = yield* BreakerRegistry.BreakerRegistry
        return {
          breaker: yield* Cache.CacheBreaker,
          fromRegistry: yield* registry.get("redis-cache"),
          names: yield* registry.names
        }
      }).pipe(Effect.provide(context))
      assert.strictEqual(breaker, fromRegistry)
      assert.include(names, "redis-cache")
      // the registry's override applies: one failure opens it
      store.failing = true
      yield* Cache.Cache.pipe(
        Effect.flatMap((cache) => cache.get("k")),
        Effect.provide(context)
      )
      assert.strictEqual((yield* breaker.state)._tag, "Open")
      assert.deepStrictEqual(yield* breaker.state, CircuitBreaker.State.Open({ until: 60_000 }))
    })
  )

  it.scoped("without a registry, Cache.layer makes its own breaker", () =>
    Effect.gen(function* () {
      const context = yield* Layer.build(
        Cache.layer({ breaker: { name: "own", policy: Policy.consecutiveFailures(7) } }).pipe(
          Layer.provide(MemoryStore.layer())
        )
      )
      assert.strictEqual((yield* Effect.provide(Cache.CacheBreaker, context)).name, "own")
    })
  )

  it.effect("with a registry, breaker options beyond the name are an options error naming the way out", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Layer.build(
          Cache.layer({ breaker: { name: "c", openFor: "5 seconds" } }).pipe(
            Layer.provide(MemoryStore.layer()),
            Layer.provide(BreakerRegistry.layer())
          )
        )
      ).pipe(Effect.scoped)
      assert.strictEqual(error._tag, "InvalidCacheOptions")
      assert.include(error.message, "openFor")
      assert.include(error.message, `overrides["c"]`)
    })
  )
})
