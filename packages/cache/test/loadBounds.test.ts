/**
 * The line of `maxConcurrentLoads` is bounded in length (`maxQueuedLoads`) and in wait
 * (`maxLoadWait`, on the Effect Clock): a load turned away is a `LoadRejected`, that load's failure
 * for every caller joined on its key, and nothing reaches the cache.
 */
import { Cache, MemoryStore } from "@circuitry/cache"
import * as Edition from "@circuitry/core/Edition"
import { assert, defectOf, describe, expectTypeOf, it, poll, TestClock, yieldNow } from "@circuitry/testkit"
import { Deferred, Effect, Exit, Fiber, Layer, Option } from "effect"

class Busy {
  readonly _tag = "Busy"
  constructor(readonly reason: string) {}
}
const onRejected = (rejection: Cache.LoadRejected) => new Busy(rejection.reason)

const settle = Effect.forEach(Array.from({ length: 20 }), () => yieldNow, { discard: true })

describe("getOrLoad: the load cap's line is bounded", () => {
  it.effect("maxQueuedLoads: one more load than the line holds is rejected at once; the others run", () =>
    Effect.gen(function* () {
      const cache = yield* Cache.make(yield* MemoryStore.make(), { maxConcurrentLoads: 1, maxQueuedLoads: 1 })
      const gate = yield* Deferred.make<void>()
      const ran: Array<string> = []
      const load = (key: string) =>
        Effect.andThen(
          Effect.sync(() => ran.push(key)),
          Effect.as(Deferred.await(gate), key)
        )
      const first = yield* Edition.forkChild(cache.getOrLoad("a", load("a"), { onRejected }))
      const second = yield* Edition.forkChild(cache.getOrLoad("b", load("b"), { onRejected }))
      yield* settle
      // the line (1) is full: "c" is turned away without waiting, typed through onRejected
      const third = yield* Effect.exit(cache.getOrLoad("c", load("c"), { onRejected }))
      assert.deepStrictEqual(third, Exit.fail(new Busy("queue-full")))
      // without onRejected, the rejection is a defect carrying the LoadRejected
      const untyped = yield* Effect.exit(cache.getOrLoad("d", load("d")))
      assert.isTrue(Exit.isFailure(untyped))
      if (Exit.isFailure(untyped)) {
        const defect = defectOf(untyped.cause)
        assert.isTrue(Cache.isLoadRejected(defect))
        if (Cache.isLoadRejected(defect)) {
          assert.strictEqual(defect.reason, "queue-full")
          assert.strictEqual(defect.key, "d")
          assert.include(defect.message, "maxQueuedLoads")
        }
      }
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual(yield* Fiber.join(first), "a")
      assert.strictEqual(yield* Fiber.join(second), "b")
      assert.deepStrictEqual(ran, ["a", "b"])
      assert.isTrue(Option.isNone(yield* cache.get("c")))
      // the line is free again: the next load runs
      assert.strictEqual(yield* cache.getOrLoad("c", Effect.succeed("c")), "c")
    })
  )

  it.effect("maxLoadWait: a load that waits past it fails, for every caller joined on its key, and never runs", () =>
    Effect.gen(function* () {
      const cache = yield* Cache.make(yield* MemoryStore.make(), { maxConcurrentLoads: 1, maxLoadWait: "500 millis" })
      let runs = 0
      const slow = Effect.as(Effect.sleep("2 seconds"), "slow")
      const holder = yield* Edition.forkChild(cache.getOrLoad("held", slow))
      yield* settle
      const counted = Effect.sync(() => ++runs).pipe(Effect.as("w"))
      const waiters = yield* Effect.forEach([0, 1, 2], () =>
        Edition.forkChild(Effect.exit(cache.getOrLoad("w", counted, { onRejected })))
      )
      yield* TestClock.adjust("499 millis")
      for (const waiter of waiters) assert.isTrue(Option.isNone(yield* poll(waiter)))
      yield* TestClock.adjust("1 millis")
      for (const waiter of waiters) {
        assert.deepStrictEqual(yield* Fiber.join(waiter), Exit.fail(new Busy("wait-exceeded")))
      }
      assert.strictEqual(runs, 0)
      assert.isTrue(Option.isNone(yield* cache.get("w")))
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(yield* Fiber.join(holder), "slow")
      // a turn that comes within the wait is taken as before
      const quick = yield* Edition.forkChild(cache.getOrLoad("held2", Effect.as(Effect.sleep("300 millis"), "quick")))
      yield* settle
      const within = yield* Edition.forkChild(cache.getOrLoad("w", counted, { onRejected }))
      yield* TestClock.adjust("300 millis")
      assert.strictEqual(yield* Fiber.join(quick), "quick")
      assert.strictEqual(yield* Fiber.join(within), "w")
      assert.strictEqual(runs, 1)
    })
  )

  it.effect("onRejected: (r) => r makes the rejection a typed LoadRejected, next to the load's own error", () =>
    Effect.gen(function* () {
      class Db {
        readonly _tag = "Db"
      }
      const cache = yield* Cache.make(yield* MemoryStore.make(), { maxConcurrentLoads: 1, maxQueuedLoads: 0 })
      const gate = yield* Deferred.make<void>()
      const held: Effect.Effect<string, Db> = Effect.as(Deferred.await(gate), "held")
      const holder = yield* Edition.forkChild(cache.getOrLoad("held", held))
      yield* settle
      const typed = cache.getOrLoad("k", Effect.fail(new Db()) as Effect.Effect<string, Db>, {
        onRejected: (rejection) => rejection
      })
      expectTypeOf(typed).toEqualTypeOf<Effect.Effect<string, Db | Cache.LoadRejected>>()
      const recovered = typed.pipe(Effect.catchTag("LoadRejected", (rejection) => Effect.succeed(rejection.reason)))
      expectTypeOf(recovered).toEqualTypeOf<Effect.Effect<string, Db>>()
      assert.strictEqual(yield* recovered, "queue-full")
      // without onRejected the type is the load's own, as before
      expectTypeOf(cache.getOrLoad("k", held)).toEqualTypeOf<Effect.Effect<string, Db>>()
      expectTypeOf(Cache.getOrLoad("k", held, { ttl: "1 minute" })).toEqualTypeOf<
        Effect.Effect<string, Db, Cache.Cache>
      >()
      expectTypeOf(Cache.getOrLoad("k", held, { onRejected: (r) => r })).toEqualTypeOf<
        Effect.Effect<string, Db | Cache.LoadRejected, Cache.Cache>
      >()
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual(yield* Fiber.join(holder), "held")
    })
  )

  it.effect("the bounds are options of the cap, checked into InvalidCacheOptions", () =>
    Effect.gen(function* () {
      const store = yield* MemoryStore.make()
      for (const [options, message] of [
        [{ maxQueuedLoads: 10 }, "maxQueuedLoads must be given only with maxConcurrentLoads"],
        [{ maxLoadWait: "1 second" }, "maxLoadWait must be given only with maxConcurrentLoads"],
        [{ maxConcurrentLoads: 2, maxQueuedLoads: -1 }, "maxQueuedLoads must be a whole number >= 0"],
        [{ maxConcurrentLoads: 2, maxQueuedLoads: 1.5 }, "maxQueuedLoads must be a whole number >= 0"],
        [{ maxConcurrentLoads: 2, maxLoadWait: 0 }, "maxLoadWait must be a finite duration > 0"]
      ] as const) {
        const error = yield* Effect.flip(Cache.make(store, options))
        assert.strictEqual(error._tag, "InvalidCacheOptions")
        assert.include(error.message, message, JSON.stringify(options))
      }
      const layerError = yield* Effect.flip(
        Effect.scoped(Layer.build(Cache.layer({ maxQueuedLoads: 3 }).pipe(Layer.provide(MemoryStore.layer()))))
      )
      assert.strictEqual(layerError._tag, "InvalidCacheOptions")
      assert.include(layerError.message, "maxQueuedLoads must be given only with maxConcurrentLoads")
      // 0 is a valid line: no waiting at all
      assert.isTrue(Exit.isSuccess(yield* Effect.exit(Cache.make(store, { maxConcurrentLoads: 1, maxQueuedLoads: 0 }))))
    })
  )
})
