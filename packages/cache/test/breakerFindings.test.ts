/**
 * Breaker behaviour this package depends on, pinned from the cache's side, and one finding.
 */
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { Cache } from "@circuitry/cache"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, TestClock } from "effect"
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
      const writes = yield* Effect.fork(Effect.forEach([1, 2, 3, 4, 5], (i) => cache.set(`k${i}`, "v")))
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(writes)
      assert.strictEqual(store.calls.set, 1)
    })
  )

  // FINDING (breaker, internal/machine.ts `admit`): while Open, every repair that arrives before
  // the first one has failed is admitted, so concurrent writes to a hung cache each pay the full
  // deadline: the "one extra timeout per open episode" bound of seeds/repair-while-open.txt holds
  // only for sequential traffic. It is the half-open burst trap of seeds/layered-cache-breaker.txt,
  // on the repair path. Expected: while the episode's first repair is in flight (health unknown),
  // other repairs are refused; once one repair succeeded, repairs run freely until one fails.
  // `it.scoped.fails` keeps the suite green while the breaker admits all five; when the breaker is
  // fixed this starts failing: then turn it into a plain `it.scoped`.
  it.scoped.fails("concurrent repairs against a dead cache: one call per open episode", () =>
    Effect.gen(function* () {
      const { cache, store } = yield* openWithSlowDeadStore
      const writes = yield* Effect.fork(
        Effect.forEach([1, 2, 3, 4, 5], (i) => cache.set(`k${i}`, "v"), { concurrency: "unbounded" })
      )
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(writes)
      assert.strictEqual(store.calls.set, 1) // actual today: 5
    })
  )
})
