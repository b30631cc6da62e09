import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { Cache } from "@circuitry/cache"
import * as Edition from "@circuitry/core/Edition"
import { assert, describe, it, TestClock } from "@circuitry/testkit"
import { assertEqual } from "./equal.js"
import { Effect, Fiber, Option } from "effect"
import { makeTestStore } from "./testStore.js"

/** A guarded test store and its breaker (opens after `threshold` failures, for 30 seconds). */
const setup = (threshold = 1) =>
  Effect.gen(function* () {
    const store = yield* makeTestStore()
    const breaker = yield* CircuitBreaker.make({
      name: "cache",
      policy: Policy.consecutiveFailures(threshold),
      openFor: "30 seconds"
    })
    const reports: Array<Cache.ErrorReport> = []
    const cache = Cache.guard(store, breaker, {
      onError: (report) =>
        Effect.sync(() => {
          reports.push(report)
        })
    })
    /** Opens the circuit with failing reads, then leaves the store healthy (or not). */
    const open = (healthy: boolean) =>
      Effect.gen(function* () {
        store.failing = true
        for (let i = 0; i < threshold; i++) yield* cache.get("trip")
        assert.strictEqual((yield* breaker.state)._tag, "Open")
        store.failing = !healthy
      })
    return { store, breaker, cache, open, reports }
  })

describe("Cache.guard: repair while open", () => {
  it.scoped("an open circuit still writes through", () =>
    Effect.gen(function* () {
      const { cache, open, store } = yield* setup()
      yield* open(true)
      assert.isTrue(yield* cache.set("k", "v"))
      // Read back from the store directly: the write landed.
      assertEqual(yield* store.inner.get("k"), Option.some("v"))
    })
  )

  it.scoped("reads are still shed while open", () =>
    Effect.gen(function* () {
      const { cache, open, store } = yield* setup()
      yield* open(true)
      yield* store.inner.set("k", "v")
      const before = store.total()
      assertEqual(yield* cache.get("k"), Option.none())
      assertEqual(yield* cache.keys(), [])
      assert.strictEqual(yield* cache.size, 0)
      assert.isFalse(yield* cache.ping)
      assert.strictEqual(store.total(), before)
    })
  )

  it.scoped("touch counts as a write", () =>
    Effect.gen(function* () {
      const { cache, open, store } = yield* setup()
      yield* store.inner.set("k", "v", { ttl: "10 seconds" })
      yield* open(true)
      assert.isTrue(yield* cache.touch("k", { ttl: "1 hour" }))
      assert.strictEqual(store.calls.touch, 1)
      yield* TestClock.adjust("10 seconds")
      assertEqual(yield* store.inner.get("k"), Option.some("v"))
    })
  )

  it.scoped("an invalidation reaches the store while open", () =>
    Effect.gen(function* () {
      const { cache, open, store } = yield* setup()
      yield* store.inner.set("k", "stale")
      yield* open(true)
      assert.isTrue(yield* cache.delete("k"))
      assertEqual(yield* store.inner.get("k"), Option.none())
    })
  )

  it.scoped("a failing write returns the fallback", () =>
    Effect.gen(function* () {
      const { cache, open } = yield* setup()
      yield* open(false)
      assert.isFalse(yield* cache.set("k", "v"))
    })
  )

  it.scoped("one failed repair stops the rest of the episode", () =>
    Effect.gen(function* () {
      const { cache, open, store } = yield* setup()
      yield* open(false)
      for (let i = 0; i < 5; i++) assert.isFalse(yield* cache.set(`k${i}`, "v"))
      assert.strictEqual(store.calls.set, 1)
    })
  )

  it.scoped("a healthy cache keeps being repaired", () =>
    Effect.gen(function* () {
      const { cache, open, store } = yield* setup()
      yield* open(true)
      for (let i = 0; i < 5; i++) assert.isTrue(yield* cache.set(`k${i}`, `v${i}`))
      assert.strictEqual(store.calls.set, 5)
      for (let i = 0; i < 5; i++) assertEqual(yield* store.inner.get(`k${i}`), Option.some(`v${i}`))
    })
  )

  it.scoped("the guard clears when the circuit leaves open: the next episode tries again", () =>
    Effect.gen(function* () {
      const { breaker, cache, open, store } = yield* setup()
      yield* open(false)
      yield* cache.set("a", "1") // the failed repair of this episode
      yield* cache.set("b", "2") // refused
      assert.strictEqual(store.calls.set, 1)
      yield* TestClock.adjust("30 seconds")
      yield* cache.get("probe") // the half-open probe fails: a new open episode
      assert.strictEqual((yield* breaker.state)._tag, "Open")
      store.failing = false
      assert.isTrue(yield* cache.set("c", "3"))
      assert.strictEqual(store.calls.set, 2)
      assertEqual(yield* store.inner.get("c"), Option.some("3"))
    })
  )

  it.scoped("writes still report to a closed circuit and can open it", () =>
    Effect.gen(function* () {
      const { breaker, cache, store } = yield* setup(3)
      store.failing = true
      yield* cache.set("a", "1")
      yield* cache.delete("b")
      assert.strictEqual((yield* breaker.state)._tag, "Closed")
      yield* cache.touch("c")
      assert.strictEqual((yield* breaker.state)._tag, "Open")
    })
  )

  it.scoped("a closed circuit is unaffected", () =>
    Effect.gen(function* () {
      const { breaker, cache, store } = yield* setup()
      assert.isTrue(yield* cache.set("a", "1", { ttl: "1 minute" }))
      assertEqual(yield* cache.get("a"), Option.some("1"))
      assert.isTrue(yield* cache.touch("a"))
      assertEqual(yield* cache.keys(), ["a"])
      assert.strictEqual(yield* cache.size, 1)
      assert.isTrue(yield* cache.ping)
      assert.isTrue(yield* cache.delete("a"))
      assertEqual(yield* cache.get("a"), Option.none())
      assert.strictEqual(store.total(), 8)
      assert.strictEqual((yield* breaker.state)._tag, "Closed")
    })
  )

  it.scoped("every operation's fallback when the store fails", () =>
    Effect.gen(function* () {
      const { cache, store } = yield* setup(100)
      store.failing = true
      assertEqual(yield* cache.get("a"), Option.none())
      assertEqual(yield* cache.getEntry!("a"), Option.none())
      assert.isFalse(yield* cache.set("a", "1"))
      assert.isFalse(yield* cache.touch("a"))
      assert.isFalse(yield* cache.delete("a"))
      assertEqual(yield* cache.keys(), [])
      assert.strictEqual(yield* cache.size, 0)
      assert.isFalse(yield* cache.ping)
      // Each one did reach the store: these are the store's failures, not the breaker's.
      assert.strictEqual(store.total(), 8)
    })
  )

  it.scoped("the breaker short-circuits after a failure: one store call for two reads", () =>
    Effect.gen(function* () {
      const { cache, store } = yield* setup(1)
      store.failing = true
      yield* cache.get("a")
      yield* cache.get("a")
      assert.strictEqual(store.calls.get, 1)
    })
  )

  it.scoped("a write does not become a read's miss", () =>
    Effect.gen(function* () {
      const { cache, store } = yield* setup()
      yield* store.inner.set("k", "old")
      yield* cache.set("k", "new")
      assertEqual(yield* cache.get("k"), Option.some("new"))
    })
  )

  it.scoped("a defect in the store is a fallback, not a crash", () =>
    Effect.gen(function* () {
      const { breaker } = yield* setup()
      const store = yield* makeTestStore()
      const dying = { ...store, get: () => Effect.die(new Error("bug in the driver")) }
      const cache = Cache.guard(dying, breaker, { onError: () => Effect.void })
      assertEqual(yield* cache.get("k"), Option.none())
    })
  )

  it.scoped("an interrupted operation is interrupted, not answered with its fallback", () =>
    Effect.gen(function* () {
      const { cache, store } = yield* setup()
      store.delay.get = "1 second"
      const fiber = yield* Edition.forkChild(cache.get("k"))
      yield* TestClock.adjust("10 millis")
      // Effect 4's Fiber.interrupt returns nothing: the fiber's exit is awaited after it.
      yield* Fiber.interrupt(fiber)
      const exit = yield* Fiber.await(fiber)
      assert.isTrue(exit._tag === "Failure")
      assert.strictEqual(store.interrupted, 1)
    })
  )
})

describe("Cache.guard: error reports", () => {
  it.scoped("the first error of each kind, then one count of the suppressed ones when the cache recovers", () =>
    Effect.gen(function* () {
      const { breaker, cache, reports, store } = yield* setup(3)
      store.failing = true
      for (let i = 0; i < 3; i++) yield* cache.get(`k${i}`) // 3 failures: the circuit opens
      for (let i = 0; i < 10; i++) yield* cache.get(`k${i}`) // shed: not store errors
      for (let i = 0; i < 10; i++) yield* cache.set(`k${i}`, "v") // one repair fails, the rest refused
      assertEqual(
        reports.map((r) => [r._tag, r.kind]),
        [
          ["First", "get: CacheError"],
          ["First", "set: CacheError"]
        ]
      )
      store.failing = false
      yield* TestClock.adjust("30 seconds")
      yield* cache.get("probe") // the probe succeeds: Closed, the episode ends
      assert.strictEqual((yield* breaker.state)._tag, "Closed")
      assert.strictEqual(reports.length, 3)
      const last = reports[2]!
      assert.strictEqual(last._tag, "Suppressed")
      assert.strictEqual(last.kind, "get: CacheError")
      assert.strictEqual(last._tag === "Suppressed" ? last.count : -1, 2)
      assert.strictEqual(last.breaker, "cache")
    })
  )

  it.scoped("a new episode reports its first errors again", () =>
    Effect.gen(function* () {
      const { cache, reports, store } = yield* setup(5)
      store.failNext = 1
      yield* cache.get("a")
      yield* cache.get("a") // succeeds while Closed: the episode ends
      store.failNext = 1
      yield* cache.get("a")
      assertEqual(
        reports.map((r) => r._tag),
        ["First", "First"]
      )
    })
  )

  it.scoped("a failing error hook does not turn a fallback into a failure", () =>
    Effect.gen(function* () {
      const store = yield* makeTestStore()
      const breaker = yield* CircuitBreaker.make({ name: "cache" })
      const cache = Cache.guard(store, breaker, { onError: () => Effect.die("hook is broken") })
      store.failing = true
      assert.isFalse(yield* cache.set("a", "1"))
    })
  )
})
