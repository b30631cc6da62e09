import { Policy } from "@circuitry/breaker"
import { Cache, CacheStore, MemoryStore } from "@circuitry/cache"
import * as Edition from "@circuitry/core/Edition"
import { assert, describe, it, Result, result, TestClock, yieldNow } from "@circuitry/testkit"
import { Deferred, Effect, Exit, Fiber, Layer, Option } from "effect"
import { assertEqual } from "./equal.js"
import { makeTestStore, type TestStore } from "./testStore.js"

/** Runs `body` with a `Cache` built by `Cache.layer` over a test store (also given to `body`). */
const withCache = <A, E>(
  options: Cache.LayerOptions,
  body: (store: TestStore) => Effect.Effect<A, E, Cache.Cache | Cache.CacheBreaker>
) =>
  Effect.gen(function* () {
    const store = yield* makeTestStore()
    const layer = Cache.layer(options).pipe(Layer.provide(Layer.succeed(CacheStore.Store, store)))
    return yield* body(store).pipe(Effect.provide(layer))
  })

/**
 * A load that counts its runs and the peak of runs at once. It takes `millis` on the clock, or,
 * with `"yields"`, gives way to other fibers a few times (no clock: fast with 1,000 fibers).
 */
const counter = (millis: number | "yields" = 1_000) => {
  const state = { runs: 0, running: 0, peak: 0 }
  const load = (value: string) =>
    Effect.gen(function* () {
      state.runs++
      state.running++
      state.peak = Math.max(state.peak, state.running)
      if (millis === "yields") {
        for (let i = 0; i < 5; i++) yield* yieldNow
      } else {
        yield* Effect.sleep(millis)
      }
      return value
    }).pipe(
      Effect.ensuring(
        Effect.sync(() => {
          state.running--
        })
      )
    )
  return { state, load }
}

describe("Cache.getOrLoad", () => {
  it.scoped("a hit returns the cached value without loading", () =>
    withCache({}, (store) =>
      Effect.gen(function* () {
        yield* store.inner.set("k", "cached")
        const { load, state } = counter()
        assert.strictEqual(yield* Cache.getOrLoad("k", load("loaded")), "cached")
        assert.strictEqual(state.runs, 0)
      })
    )
  )

  it.scoped("a miss loads, returns the value and writes it back with the ttl", () =>
    withCache({}, (store) =>
      Effect.gen(function* () {
        const value = yield* Cache.getOrLoad("k", Effect.succeed("loaded"), { ttl: "1 minute" })
        assert.strictEqual(value, "loaded")
        assertEqual(yield* store.inner.get("k"), Option.some("loaded"))
        yield* TestClock.adjust("1 minute")
        assertEqual(yield* store.inner.get("k"), Option.none())
      })
    )
  )

  it.scoped("100 concurrent misses on one key load once", () =>
    withCache({}, (store) =>
      Effect.gen(function* () {
        const { load, state } = counter()
        const fiber = yield* Edition.forkChild(
          Effect.all(
            Array.from({ length: 100 }, () => Cache.getOrLoad("k", load("v"))),
            { concurrency: "unbounded" }
          )
        )
        yield* TestClock.adjust("1 second")
        const values = yield* Fiber.join(fiber)
        assert.strictEqual(state.runs, 1)
        assert.strictEqual(values.length, 100)
        assert.isTrue(values.every((v) => v === "v"))
        assert.strictEqual(store.calls.set, 1)
        assertEqual(yield* store.inner.get("k"), Option.some("v"))
      })
    )
  )

  it.scoped("a failed load fails every caller of that flight and is not cached", () =>
    withCache({}, (store) =>
      Effect.gen(function* () {
        let runs = 0
        const failing = Effect.suspend(() => {
          runs++
          return Effect.andThen(Effect.sleep("1 second"), Effect.fail("db down" as const))
        })
        const fiber = yield* Edition.forkChild(
          Effect.all([result(Cache.getOrLoad("k", failing)), result(Cache.getOrLoad("k", failing))], {
            concurrency: "unbounded"
          })
        )
        yield* TestClock.adjust("1 second")
        const results = yield* Fiber.join(fiber)
        assert.strictEqual(runs, 1)
        assert.deepStrictEqual(
          results.map((r) => Result.match(r, { onFailure: (error) => error, onSuccess: () => "ok" })),
          ["db down", "db down"]
        )
        assert.strictEqual(store.calls.set, 0)
        // The next call loads again.
        assert.strictEqual(yield* Cache.getOrLoad("k", Effect.succeed("back")), "back")
      })
    )
  )

  it.scoped("maxConcurrentLoads is never exceeded under 1,000 concurrent misses on distinct keys", () =>
    withCache({ maxConcurrentLoads: 8 }, () =>
      Effect.gen(function* () {
        const { load, state } = counter("yields")
        const values = yield* Effect.forEach(
          Array.from({ length: 1_000 }, (_, i) => `k${i}`),
          (key) => Cache.getOrLoad(key, load(key)),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(values[999], "k999")
        assert.strictEqual(state.runs, 1_000)
        assert.strictEqual(state.peak, 8)
      })
    )
  )

  it.scoped("without a cap, the same misses all load at once (what the cap prevents)", () =>
    withCache({}, () =>
      Effect.gen(function* () {
        const { load, state } = counter("yields")
        yield* Effect.forEach(
          Array.from({ length: 100 }, (_, i) => `k${i}`),
          (key) => Cache.getOrLoad(key, load(key)),
          { concurrency: "unbounded" }
        )
        assert.isAbove(state.peak, 8)
      })
    )
  )

  it.scoped("interrupting a caller waiting for its turn leaves the others unharmed", () =>
    withCache({ maxConcurrentLoads: 1 }, (store) =>
      Effect.gen(function* () {
        const { load, state } = counter(1_000)
        const a = yield* Edition.forkChild(Cache.getOrLoad("a", load("A")))
        yield* TestClock.adjust("10 millis") // a holds the only permit
        const b = yield* Edition.forkChild(Cache.getOrLoad("b", load("B")))
        const c = yield* Edition.forkChild(Cache.getOrLoad("c", load("C")))
        yield* TestClock.adjust("10 millis")
        yield* Fiber.interrupt(b)
        yield* TestClock.adjust("2 seconds")
        assert.strictEqual(yield* Fiber.join(a), "A")
        assert.strictEqual(yield* Fiber.join(c), "C")
        assert.strictEqual(state.runs, 2) // b never loaded
        assertEqual(yield* store.inner.get("b"), Option.none())
        // b's key is free again: a new caller loads it.
        const again = yield* Edition.forkChild(Cache.getOrLoad("b", load("B2")))
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* Fiber.join(again), "B2")
      })
    )
  )

  it.scoped("interrupting the caller that is loading hands the load to one that waits on the same key", () =>
    withCache({}, () =>
      Effect.gen(function* () {
        const { load, state } = counter(1_000)
        const leader = yield* Edition.forkChild(Cache.getOrLoad("k", load("first")))
        yield* TestClock.adjust("10 millis")
        const followers = yield* Edition.forkChild(
          Effect.all([Cache.getOrLoad("k", load("second")), Cache.getOrLoad("k", load("second"))], {
            concurrency: "unbounded"
          })
        )
        yield* TestClock.adjust("10 millis")
        // Effect 4's Fiber.interrupt returns nothing: the fiber's exit is awaited after it.
        yield* Fiber.interrupt(leader)
        const exit = yield* Fiber.await(leader)
        assert.isTrue(Exit.isFailure(exit) && Edition.hasInterrupts(exit.cause))
        yield* TestClock.adjust("1 second")
        assert.deepStrictEqual(yield* Fiber.join(followers), ["second", "second"])
        assert.strictEqual(state.runs, 2) // the interrupted load, and one more for both followers
      })
    )
  )

  it.scoped("an interrupted follower does not disturb the load or the other callers", () =>
    withCache({}, () =>
      Effect.gen(function* () {
        const { load, state } = counter(1_000)
        const leader = yield* Edition.forkChild(Cache.getOrLoad("k", load("v")))
        yield* TestClock.adjust("10 millis")
        const follower = yield* Edition.forkChild(Cache.getOrLoad("k", load("v")))
        const other = yield* Edition.forkChild(Cache.getOrLoad("k", load("v")))
        yield* TestClock.adjust("10 millis")
        yield* Fiber.interrupt(follower)
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* Fiber.join(leader), "v")
        assert.strictEqual(yield* Fiber.join(other), "v")
        assert.strictEqual(state.runs, 1)
      })
    )
  )

  it.scoped("a read shed by an open circuit loads, and the repair while open lands", () =>
    withCache({ breaker: { policy: Policy.consecutiveFailures(1), openFor: "30 seconds" } }, (store) =>
      Effect.gen(function* () {
        const breaker = yield* Cache.CacheBreaker
        store.failing = true
        yield* Effect.flatMap(Cache.Cache, (cache) => cache.get("trip"))
        assert.strictEqual((yield* breaker.state)._tag, "Open")
        store.failing = false // the cache is healthy again; the circuit is still open
        yield* store.inner.set("k", "old")
        const value = yield* Cache.getOrLoad("k", Effect.succeed("fresh"))
        assert.strictEqual(value, "fresh") // the read was shed: loaded from the source of truth
        assert.strictEqual(store.calls.get, 1) // only the tripping read reached the store
        assertEqual(yield* store.inner.get("k"), Option.some("fresh"))
        assert.strictEqual((yield* breaker.state)._tag, "Open")
      })
    )
  )

  it.scoped("the write-back finishes before the flight ends: a caller meanwhile joins, not reloads", () =>
    withCache({}, (store) =>
      Effect.gen(function* () {
        store.delay.set = "1 second"
        const { load, state } = counter(0)
        const first = yield* Edition.forkChild(Cache.getOrLoad("k", load("v")))
        yield* TestClock.adjust("10 millis") // loaded; the write-back is on its way
        assert.strictEqual(yield* Cache.getOrLoad("k", load("v")), "v")
        assert.strictEqual(state.runs, 1)
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* Fiber.join(first), "v")
      })
    )
  )
})

describe("Cache.layer", () => {
  it.scoped("with l1: memory over the guarded store, and the breaker under CacheBreaker", () =>
    withCache({ l1: { capacity: 10 }, breaker: { name: "redis-cache" } }, (store) =>
      Effect.gen(function* () {
        const cache = yield* Cache.Cache
        const breaker = yield* Cache.CacheBreaker
        assert.strictEqual(breaker.name, "redis-cache")
        yield* cache.set("k", "v")
        assertEqual(yield* store.inner.get("k"), Option.some("v"))
        assertEqual(yield* cache.get("k"), Option.some("v"))
        assert.strictEqual(store.calls.get + store.calls.getEntry, 0) // an L1 hit
        assert.strictEqual(yield* cache.size, 1)
        assert.strictEqual(store.calls.size, 0) // L1 only
      })
    )
  )

  it.scoped("the default breaker is named cache", () =>
    withCache({}, () =>
      Effect.gen(function* () {
        assert.strictEqual((yield* Cache.CacheBreaker).name, "cache")
      })
    )
  )

  it.effect("bad options are typed errors that say what is wrong", () =>
    Effect.gen(function* () {
      const build = (options: Cache.LayerOptions) =>
        Effect.flip(Layer.build(Cache.layer(options).pipe(Layer.provide(MemoryStore.layer())))).pipe(Effect.scoped)
      const loads = yield* build({ maxConcurrentLoads: 0 })
      assert.strictEqual(loads._tag, "InvalidCacheOptions")
      assert.include(loads.message, "maxConcurrentLoads must be a whole number >= 1")
      const writes = yield* build({ l1: {}, l2Writes: "later" as never })
      assert.include(writes.message, "l2Writes")
      const breaker = yield* build({ breaker: { halfOpen: { permits: 0 } } })
      assert.strictEqual(breaker._tag, "InvalidBreakerOptions")
      const capacity = yield* build({ l1: { capacity: -1 } })
      assert.include(capacity.message, "capacity")
    })
  )

  it.effect("Cache.make validates maxConcurrentLoads", () =>
    Effect.gen(function* () {
      const store = yield* MemoryStore.make()
      const error = yield* Effect.flip(Cache.make(store, { maxConcurrentLoads: 1.5 }))
      assert.strictEqual(error._tag, "InvalidCacheOptions")
    })
  )

  it.scoped("a Cache made of any store and provided by hand gets single flight", () =>
    Effect.gen(function* () {
      const store = yield* MemoryStore.make()
      const gate = yield* Deferred.make<void>()
      let runs = 0
      const load = Effect.andThen(
        Effect.sync(() => runs++),
        Effect.as(Deferred.await(gate), "v")
      )
      const fiber = yield* Edition.forkChild(
        Effect.all([Cache.getOrLoad("k", load), Cache.getOrLoad("k", load)], { concurrency: "unbounded" }).pipe(
          Effect.provideService(Cache.Cache, yield* Cache.make(store))
        )
      )
      yield* yieldNow
      yield* Deferred.succeed(gate, undefined)
      assert.deepStrictEqual(yield* Fiber.join(fiber), ["v", "v"])
      assert.strictEqual(runs, 1)
    })
  )
})
