/**
 * Breaker behaviour this package depends on, pinned from the cache's side, and one finding.
 */
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { Cache } from "@circuitry/cache"
import * as Edition from "@circuitry/core/Edition"
import { assert, describe, it, TestClock } from "@circuitry/testkit"
import { Effect, Fiber } from "effect"
import { makeTestStore } from "./testStore.js"

const openWithSlowDeadStore = Effect.gen(function* () {
  const store = yield* makeTestStore()
  const breaker = yield* CircuitBreaker.make({ policy: Policy.consecutiveFailures(1), openFor: "30 seconds" })
  const cache = Cache.guard(store, breaker, { onError: () => Effect.void })
  store.failing = true
  yield* cache.get("trip")
  assert.strictEqual((yield* breaker.state)._tag, "Open")
  // A dead cache that answers only when its deadline runs out, as a hung Redis does.
  store.delay = { set: "1 second" }
  return { store, cache }
})

describe("breaker findings", () => {
  it.scoped("sequential repairs against a dead cache: one call per open episode", () =>
    Effect.gen(function* () {
      const { cache, store } = yield* openWithSlowDeadStore
      const writes = yield* Edition.forkChild(Effect.forEach([1, 2, 3, 4, 5], (i) => cache.set(`k${i}`, "v")))
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(writes)
      assert.strictEqual(store.calls.set, 1)
    })
  )

  // Found from the cache side: while Open, every repair that arrived before the first one failed
  // was admitted, so concurrent writes to a hung cache each paid the full deadline, and the "one
  // extra timeout per open episode" bound of seeds/repair-while-open.txt held only for sequential
  // traffic (the half-open burst trap of seeds/layered-cache-breaker.txt, on the repair path). The
  // breaker now runs an episode's repairs one at a time until one has succeeded.
  it.scoped("concurrent repairs against a dead cache: one call per open episode", () =>
    Effect.gen(function* () {
      const { cache, store } = yield* openWithSlowDeadStore
      const writes = yield* Edition.forkChild(
        Effect.forEach([1, 2, 3, 4, 5], (i) => cache.set(`k${i}`, "v"), { concurrency: "unbounded" })
      )
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(writes)
      assert.strictEqual(store.calls.set, 1)
    })
  )
})

describe("breaker findings: a healthy cache under concurrent repairs", () => {
  it.scoped("once a repair succeeded in the episode, concurrent repairs all land", () =>
    Effect.gen(function* () {
      const { cache, store } = yield* openWithSlowDeadStore
      store.failing = false
      const first = yield* Edition.forkChild(cache.set("first", "v"))
      yield* TestClock.adjust("1 second")
      assert.isTrue(yield* Fiber.join(first))
      const writes = yield* Edition.forkChild(
        Effect.forEach([1, 2, 3, 4, 5], (i) => cache.set(`k${i}`, "v"), { concurrency: "unbounded" })
      )
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* Fiber.join(writes), [true, true, true, true, true])
      assert.strictEqual(store.calls.set, 6)
    })
  )
})
