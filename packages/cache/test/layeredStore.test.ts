import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { Cache, LayeredStore, MemoryStore } from "@circuitry/cache"
import * as Edition from "@circuitry/core/Edition"
import { assert, describe, drain, it, poll, remaining, TestClock, yieldNow } from "@circuitry/testkit"
import { assertEqual } from "./equal.js"
import { Effect, Exit, Fiber, Option, Scope } from "effect"
import { storeSuite } from "./storeSuite.js"
import { makeTestStore } from "./testStore.js"

const memory = Effect.orDie(MemoryStore.make())

storeSuite(
  "LayeredStore (await)",
  Effect.flatMap(Effect.all([memory, memory]), ([l1, l2]) => LayeredStore.make(l1, l2)),
  { clock: "test" }
)
storeSuite(
  "LayeredStore (background)",
  Effect.flatMap(Effect.all([memory, memory]), ([l1, l2]) => LayeredStore.make(l1, l2, { l2Writes: "background" })),
  { clock: "test" }
)

/** L1 memory over a guarded test store; the breaker opens after `threshold` failures for 10 s. */
const guarded = (options: { threshold: number; l2Writes?: "await" | "background" }) =>
  Effect.gen(function* () {
    const l1 = yield* memory
    const l2 = yield* makeTestStore()
    const breaker = yield* CircuitBreaker.make({
      name: "l2",
      policy: Policy.consecutiveFailures(options.threshold),
      openFor: "10 seconds"
    })
    const cache = yield* LayeredStore.make(l1, Cache.guard(l2, breaker, { onError: () => Effect.void }), {
      l2Writes: options.l2Writes ?? "await"
    })
    return { l1, l2, breaker, cache }
  })

describe("LayeredStore", () => {
  it.scoped("an L1 miss reads L2 and fills L1", () =>
    Effect.gen(function* () {
      const l1 = yield* memory
      const l2 = yield* makeTestStore()
      const cache = yield* LayeredStore.make(l1, l2)
      yield* l2.inner.set("k", "v")
      assertEqual(yield* cache.get("k"), Option.some("v"))
      assertEqual(yield* l1.get("k"), Option.some("v"))
      assertEqual(yield* cache.get("k"), Option.some("v"))
      assert.strictEqual(l2.total(), 1)
    })
  )

  it.scoped("an L1 fill expires when the L2 entry does, never later", () =>
    Effect.gen(function* () {
      const l1 = yield* memory
      const l2 = yield* makeTestStore()
      const cache = yield* LayeredStore.make(l1, l2)
      yield* l2.inner.set("k", "v", { ttl: "10 seconds" })
      yield* TestClock.adjust("9 seconds")
      assertEqual(yield* cache.get("k"), Option.some("v"))
      yield* TestClock.adjust("1 second")
      assertEqual(yield* l1.get("k"), Option.none())
      assertEqual(yield* cache.get("k"), Option.none())
    })
  )

  it.scoped("an entry that expires while L2 answers is not put in L1", () =>
    Effect.gen(function* () {
      const l1 = yield* memory
      const l2 = yield* makeTestStore()
      l2.delayAfter.getEntry = "3 seconds" // L2 reads the entry with 2 s left, answers 3 s later
      const cache = yield* LayeredStore.make(l1, l2)
      yield* l2.inner.set("k", "v", { ttl: "2 seconds" })
      const fiber = yield* Edition.forkChild(cache.get("k"))
      yield* TestClock.adjust("3 seconds")
      assertEqual(yield* Fiber.join(fiber), Option.none())
      assertEqual(yield* l1.get("k"), Option.none())
      assert.strictEqual(l2.calls.getEntry, 1)
    })
  )

  it.scoped("without getEntry on L2, fillTtl bounds how long a fill lives", () =>
    Effect.gen(function* () {
      const l1 = yield* memory
      const l2 = yield* makeTestStore({ getEntry: false })
      const cache = yield* LayeredStore.make(l1, l2, { fillTtl: "5 seconds" })
      yield* l2.inner.set("k", "v")
      assertEqual(yield* cache.get("k"), Option.some("v"))
      assert.strictEqual(l2.calls.get, 1)
      yield* TestClock.adjust("5 seconds")
      assertEqual(yield* l1.get("k"), Option.none())
    })
  )

  it.scoped("a write during an L2 read wins over the read's fill", () =>
    Effect.gen(function* () {
      const l1 = yield* memory
      const l2 = yield* makeTestStore()
      l2.delay.getEntry = "1 second"
      l2.delay.set = "2 seconds"
      const cache = yield* LayeredStore.make(l1, l2)
      yield* l2.inner.set("k", "old")
      const read = yield* Edition.forkChild(cache.get("k"))
      yield* TestClock.adjust("10 millis")
      // The write puts "new" in L1 at once; L2 still answers the read with "old" a second later.
      const write = yield* Edition.forkChild(cache.set("k", "new"))
      yield* TestClock.adjust("1 second")
      assertEqual(yield* Fiber.join(read), Option.some("old"))
      yield* TestClock.adjust("1 second")
      assert.isTrue(yield* Fiber.join(write))
      assertEqual(yield* cache.get("k"), Option.some("new"))
      assertEqual(yield* l1.get("k"), Option.some("new"))
    })
  )

  it.scoped("keys and size are L1-only: zero L2 calls", () =>
    Effect.gen(function* () {
      const l1 = yield* memory
      const l2 = yield* makeTestStore()
      const cache = yield* LayeredStore.make(l1, l2)
      yield* l1.set("a", "1")
      yield* l2.inner.set("b", "2")
      assertEqual(yield* cache.keys(), ["a"])
      assertEqual(yield* cache.keys("a"), ["a"])
      assert.strictEqual(yield* cache.size, 1)
      assert.strictEqual(l2.total(), 0)
    })
  )

  it.scoped("L1-only operations make zero L2 calls, with the L2 circuit open or closed", () =>
    Effect.gen(function* () {
      const { breaker, cache, l2 } = yield* guarded({ threshold: 1 })
      yield* cache.set("a", "1")
      const before = l2.total()
      yield* cache.keys()
      yield* cache.size
      assert.strictEqual(l2.total(), before)
      l2.failing = true
      yield* cache.get("missing") // opens the circuit
      assert.strictEqual((yield* breaker.state)._tag, "Open")
      const atOpen = l2.total()
      assertEqual(yield* cache.keys(), ["a"])
      assert.strictEqual(yield* cache.size, 1)
      assertEqual(yield* cache.get("a"), Option.some("1")) // an L1 hit
      assert.strictEqual(l2.total(), atOpen)
    })
  )

  it.scoped("a dead L2 costs at most threshold + 1 calls for ten writes", () =>
    Effect.gen(function* () {
      const threshold = 2
      const { cache, l1, l2 } = yield* guarded({ threshold })
      l2.failing = true
      for (let i = 0; i < 10; i++) yield* cache.set(`k${i}`, `v${i}`)
      // threshold failures open the circuit; one repair fails in the open episode; then silence.
      assert.strictEqual(l2.total(), threshold + 1)
      // L1 kept every write.
      for (let i = 0; i < 10; i++) assertEqual(yield* l1.get(`k${i}`), Option.some(`v${i}`))
    })
  )

  it.scoped("a dead L2 behind background writes also costs threshold + 1 calls", () =>
    Effect.gen(function* () {
      const threshold = 2
      const { cache, l2 } = yield* guarded({ threshold, l2Writes: "background" })
      l2.failing = true
      for (let i = 0; i < 10; i++) yield* cache.set(`k${i}`, `v${i}`)
      yield* TestClock.adjust(0) // lets the background fibers run
      for (let i = 0; i < 20; i++) yield* yieldNow
      assert.strictEqual(l2.total(), threshold + 1)
    })
  )

  it.scoped("after the cooldown, a burst of five operations sends exactly one probe", () =>
    Effect.gen(function* () {
      const { breaker, cache, l2 } = yield* guarded({ threshold: 1 })
      l2.failing = true
      l2.delay = { get: "1 second", getEntry: "1 second", set: "1 second", delete: "1 second" }
      const trip = yield* Edition.forkChild(cache.set("a", "1"))
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(trip)
      assert.strictEqual((yield* breaker.state)._tag, "Open")
      yield* TestClock.adjust("10 seconds") // the cooldown elapses
      const before = l2.total()
      const burst = yield* Edition.forkChild(
        Effect.all([cache.set("b", "2"), cache.set("c", "3"), cache.set("d", "4"), cache.get("e"), cache.delete("f")], {
          concurrency: "unbounded"
        })
      )
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(burst)
      assert.strictEqual(l2.total() - before, 1)
      assert.strictEqual((yield* breaker.state)._tag, "Open") // the probe failed
    })
  )

  it.scoped("a failure below the threshold followed by a success announces no close", () =>
    Effect.gen(function* () {
      const { breaker, cache, l2 } = yield* guarded({ threshold: 5 })
      const transitions = yield* breaker.subscribe
      l2.failNext = 1
      assert.isFalse(yield* cache.set("a", "1"))
      assert.isTrue(yield* cache.set("b", "2"))
      assert.strictEqual(l2.calls.set, 2)
      assert.strictEqual(yield* remaining(transitions), 0)
      // The subscription does hear transitions: a real episode is announced, open then close.
      yield* breaker.isolate
      yield* breaker.reset
      assertEqual(
        (yield* drain(transitions)).map((t) => `${t.from}->${t.to}`),
        ["Closed->Isolated", "Isolated->Closed"]
      )
    })
  )

  it.scoped("background writes do not hold up the caller", () =>
    Effect.gen(function* () {
      const l1 = yield* memory
      const l2 = yield* makeTestStore()
      l2.delay.set = "5 seconds"
      const cache = yield* LayeredStore.make(l1, l2, { l2Writes: "background" })
      const write = yield* Edition.forkChild(cache.set("k", "v"))
      for (let i = 0; i < 10; i++) yield* yieldNow
      // Done without the clock moving, while L2 is still busy with the write.
      assertEqual(yield* poll(write), Option.some(Exit.succeed(true)))
      assert.strictEqual(l2.calls.set, 1)
      assertEqual(yield* l2.inner.get("k"), Option.none())
      assertEqual(yield* cache.get("k"), Option.some("v"))
      yield* TestClock.adjust("5 seconds")
      assertEqual(yield* l2.inner.get("k"), Option.some("v"))
    })
  )

  it.scoped("awaited writes wait for L2", () =>
    Effect.gen(function* () {
      const l1 = yield* memory
      const l2 = yield* makeTestStore()
      l2.delay.set = "5 seconds"
      const cache = yield* LayeredStore.make(l1, l2)
      const write = yield* Edition.forkChild(cache.set("k", "v"))
      for (let i = 0; i < 10; i++) yield* yieldNow
      assertEqual(yield* poll(write), Option.none())
      yield* TestClock.adjust("5 seconds")
      assert.isTrue(yield* Fiber.join(write))
      assertEqual(yield* l2.inner.get("k"), Option.some("v"))
    })
  )

  it.effect("closing the store's scope stops its background writes: nothing leaks", () =>
    Effect.gen(function* () {
      const l1 = yield* memory
      const l2 = yield* makeTestStore()
      l2.delay.set = "5 seconds"
      const scope = yield* Scope.make()
      const cache = yield* LayeredStore.make(l1, l2, { l2Writes: "background" }).pipe(
        Effect.provideService(Scope.Scope, scope)
      )
      yield* cache.set("a", "1")
      yield* cache.set("b", "2")
      for (let i = 0; i < 10; i++) yield* yieldNow
      assert.strictEqual(l2.calls.set, 2)
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual(l2.interrupted, 2)
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(yield* l2.inner.size, 0)
      // After shutdown, writes reach L1 only and start nothing in the background.
      yield* cache.set("c", "3")
      for (let i = 0; i < 10; i++) yield* yieldNow
      assert.strictEqual(l2.calls.set, 2)
    })
  )

  it.scoped("while a background delete is in flight, an L1 miss is a miss, not L2's stale value", () =>
    Effect.gen(function* () {
      const l1 = yield* memory
      const l2 = yield* makeTestStore()
      const cache = yield* LayeredStore.make(l1, l2, { l2Writes: "background" })
      yield* l2.inner.set("k", "stale")
      l2.delay.delete = "1 second"
      assert.isFalse(yield* cache.delete("k")) // L1 did not have it; L2's answer is not awaited
      assertEqual(yield* cache.get("k"), Option.none())
      yield* TestClock.adjust("1 second")
      for (let i = 0; i < 10; i++) yield* yieldNow
      assertEqual(yield* l2.inner.get("k"), Option.none())
      assertEqual(yield* cache.get("k"), Option.none())
    })
  )

  it.scoped("set is true when every awaited layer stored it; touch and delete when either had the key", () =>
    Effect.gen(function* () {
      const l1 = yield* memory
      const l2 = yield* makeTestStore()
      const cache = yield* LayeredStore.make(l1, l2)
      yield* l2.inner.set("only-l2", "v")
      assert.isTrue(yield* cache.touch("only-l2", { ttl: "1 minute" }))
      assert.isTrue(yield* cache.delete("only-l2"))
      l2.failing = true
      const failed = yield* Effect.flip(cache.set("k", "v"))
      assert.strictEqual(failed._tag, "CacheError")
      const entry = yield* l1.getEntry!("k")
      assertEqual(
        Option.map(entry, (e) => e.value),
        Option.some("v")
      )
    })
  )
})
