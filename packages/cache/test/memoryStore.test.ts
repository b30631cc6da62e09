import { MemoryStore } from "@circuitry/cache"
import { assert, describe, it, TestClock } from "@circuitry/testkit"
import { assertEqual } from "./equal.js"
import { Duration, Effect, Exit, Option } from "effect"
import { storeSuite } from "./storeSuite.js"

storeSuite("MemoryStore", MemoryStore.make(), { clock: "test" })
storeSuite("MemoryStore with a capacity", MemoryStore.make({ capacity: 1_000 }), { clock: "test" })

describe("MemoryStore", () => {
  it.effect("evicts the least recently used entry beyond its capacity", () =>
    Effect.gen(function* () {
      const store = yield* MemoryStore.make({ capacity: 2 })
      yield* store.set("a", "1")
      yield* store.set("b", "2")
      yield* store.get("a") // a is now more recently used than b
      yield* store.set("c", "3")
      assertEqual(yield* store.get("b"), Option.none())
      assertEqual(yield* store.get("a"), Option.some("1"))
      assertEqual(yield* store.get("c"), Option.some("3"))
      assert.strictEqual(yield* store.size, 2)
    })
  )

  it.effect("a touch counts as a use, a rewrite of a key evicts nothing", () =>
    Effect.gen(function* () {
      const store = yield* MemoryStore.make({ capacity: 2 })
      yield* store.set("a", "1")
      yield* store.set("b", "2")
      yield* store.set("b", "2b") // same key: no eviction
      assertEqual([...(yield* store.keys())].sort(), ["a", "b"])
      yield* store.touch("a", { ttl: "1 minute" })
      yield* store.set("c", "3")
      assertEqual([...(yield* store.keys())].sort(), ["a", "c"])
    })
  )

  it.effect("expiry follows the Effect Clock to the millisecond", () =>
    Effect.gen(function* () {
      const store = yield* MemoryStore.make()
      yield* store.set("a", "1", { ttl: 1_000 })
      yield* TestClock.adjust("999 millis")
      assertEqual(yield* store.get("a"), Option.some("1"))
      const entry = yield* store.getEntry!("a")
      assertEqual(
        Option.flatMap(entry, (e) => Option.map(e.ttl, Duration.toMillis)),
        Option.some(1)
      )
      yield* TestClock.adjust("1 millis")
      assertEqual(yield* store.get("a"), Option.none())
    })
  )

  it.effect("a zero ttl stores nothing and replaces what was there", () =>
    Effect.gen(function* () {
      const store = yield* MemoryStore.make()
      yield* store.set("a", "1")
      assert.isFalse(yield* store.set("a", "2", { ttl: 0 }))
      assertEqual(yield* store.get("a"), Option.none())
    })
  )

  it.effect("a capacity that is not a whole number >= 1 is a typed error", () =>
    Effect.gen(function* () {
      for (const capacity of [0, -1, 1.5, Number.NaN]) {
        const result = yield* Effect.flip(MemoryStore.make({ capacity }))
        assert.strictEqual(result._tag, "InvalidCacheOptions")
        assert.include(result.message, "capacity must be a whole number >= 1")
      }
    })
  )

  it.effect("a ttl that is not a duration is a defect naming the option", () =>
    Effect.gen(function* () {
      const store = yield* MemoryStore.make()
      const exit = yield* Effect.exit(store.set("a", "1", { ttl: "soon" as never }))
      assert.isTrue(Exit.isFailure(exit) && String(exit.cause).includes("ttl must be a duration"))
      assertEqual(yield* store.get("a"), Option.none())
    })
  )
})
