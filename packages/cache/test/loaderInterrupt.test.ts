import { Cache, MemoryStore } from "@circuitry/cache"
import * as Edition from "@circuitry/core/Edition"
import { assert, describe, it, Result, result, TestClock, yieldNow } from "@circuitry/testkit"
import { Effect, Exit, Fiber, Option } from "effect"
import { assertEqual } from "./equal.js"

describe("getOrLoad: interruption from inside", () => {
  it.scoped("a load that interrupts itself hands the key to a waiting fiber, which loads it", () =>
    Effect.gen(function* () {
      const store = yield* MemoryStore.make()
      const cache = yield* Cache.make(store)
      let runs = 0
      const interrupts = Effect.andThen(
        Effect.sleep("1 second"),
        Effect.suspend(() => {
          runs++
          return Effect.interrupt
        })
      )
      const loads = Effect.andThen(
        Effect.sleep("1 second"),
        Effect.sync(() => `v${++runs}`)
      )
      const leader = yield* Edition.forkChild(cache.getOrLoad("k", interrupts))
      yield* yieldNow
      const follower = yield* Edition.forkChild(cache.getOrLoad("k", loads))
      yield* yieldNow
      yield* TestClock.adjust("1 second")
      const led = yield* Fiber.await(leader)
      assert.isTrue(Exit.isFailure(led) && Edition.hasInterruptsOnly(led.cause))
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Fiber.join(follower), "v2")
      assert.strictEqual(runs, 2)
      assertEqual(yield* store.get("k"), Option.some("v2"))
      // nothing is left in flight: the next miss loads again
      yield* store.delete("k")
      const again = yield* Edition.forkChild(cache.getOrLoad("k", loads))
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Fiber.join(again), "v3")
    })
  )

  it.scoped("a failed load goes to every fiber waiting, and is not written back", () =>
    Effect.gen(function* () {
      const store = yield* MemoryStore.make()
      const cache = yield* Cache.make(store, { maxConcurrentLoads: 1 })
      const failing = Effect.andThen(Effect.sleep("1 second"), Effect.fail("down" as const))
      const fibers = yield* Effect.forEach([1, 2, 3], () => Edition.forkChild(result(cache.getOrLoad("k", failing))))
      yield* TestClock.adjust("1 second")
      for (const fiber of fibers) {
        const outcome = yield* Fiber.join(fiber)
        assert.isTrue(Result.isFailure(outcome) && Option.getOrUndefined(Result.getFailure(outcome)) === "down")
      }
      assertEqual(yield* store.get("k"), Option.none())
      // the cap's permit went back: another key loads at once
      const next = yield* Edition.forkChild(cache.getOrLoad("j", Effect.succeed("ok")))
      assert.strictEqual(yield* Fiber.join(next), "ok")
    })
  )
})
