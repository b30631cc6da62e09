/**
 * The first load (`make` reads the stored verdict) on a store that does not answer it: `make`
 * returns at the store deadline (250 ms) without waiting for the load's cleanup, the breaker
 * decides locally, and the load is made again in the background until the store answers, when the
 * breaker adopts the verdict stored meanwhile. In virtual time; on a real blackholed Redis, see
 * packages/redis/test/firstLoad.test.ts.
 */
import * as Edition from "@circuitry/core/Edition"
import { BreakerStore, CircuitBreaker, Policy } from "@circuitry/breaker"
import { assert, describe, it, result, type ServiceOf, TestClock } from "@circuitry/testkit"
import { Effect, Fiber } from "effect"
import { tagOf } from "./utils.js"

const options = { name: "payments", policy: Policy.consecutiveFailures(1), openFor: "5 minutes" } as const

/**
 * The memory store, but its first `unanswered` loads never answer, and giving one up takes 5 s
 * (a driver's cancel).
 */
const stalling = (memory: ServiceOf<typeof BreakerStore.BreakerStore>, unanswered: number) => {
  let loads = 0
  const store: ServiceOf<typeof BreakerStore.BreakerStore> = {
    connect: (name) =>
      Effect.map(memory.connect(name), (circuit) => ({
        ...circuit,
        verdict: {
          ...circuit.verdict,
          load: Effect.suspend(() =>
            ++loads <= unanswered
              ? Effect.never.pipe(Effect.onInterrupt(() => Effect.sleep("5 seconds")))
              : circuit.verdict.load
          )
        }
      }))
  }
  return { store, loads: () => loads }
}

describe("the first load on a store that does not answer", () => {
  it.scoped(
    "make returns at 250 ms, the breaker works locally, and adopts the stored verdict once the store answers",
    () =>
      Effect.gen(function* () {
        const memory = yield* BreakerStore.makeMemory
        const b = yield* CircuitBreaker.make(options).pipe(Effect.provideService(BreakerStore.BreakerStore, memory))
        yield* result(CircuitBreaker.withBreaker(Effect.fail("boom"), b))
        assert.strictEqual(yield* tagOf(b), "Open")

        const { loads, store } = stalling(memory, 2)
        const making = yield* Edition.forkChild(
          CircuitBreaker.make(options).pipe(Effect.provideService(BreakerStore.BreakerStore, store))
        )
        yield* TestClock.adjust("249 millis")
        assert.isUndefined(Edition.pollUnsafe(making))
        yield* TestClock.adjust("1 millis")
        // at the deadline, though the load's cleanup takes 5 s more
        const a = yield* Fiber.join(making)
        assert.strictEqual(yield* tagOf(a), "Closed")
        assert.deepStrictEqual((yield* a.snapshot).store, { connected: false })
        assert.strictEqual(yield* CircuitBreaker.withBreaker(Effect.succeed("ok"), a), "ok")

        // made again after 1 s: still unanswered; after 2 s more, answered, and the verdict is adopted
        yield* TestClock.adjust("1 second")
        assert.strictEqual(loads(), 2)
        yield* TestClock.adjust("250 millis")
        assert.strictEqual(yield* tagOf(a), "Closed")
        yield* TestClock.adjust("2 seconds")
        assert.strictEqual(loads(), 3)
        assert.strictEqual(yield* tagOf(a), "Open")
        assert.deepStrictEqual(yield* a.state, yield* b.state)
        assert.deepStrictEqual((yield* a.snapshot).store, { connected: true })
        // answered: no more loads
        yield* TestClock.adjust("1 minute")
        assert.strictEqual(loads(), 3)
      })
  )
})
