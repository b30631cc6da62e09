/**
 * The cache's metrics move when they should and not otherwise: each step is run between two reads
 * of every `circuitry_cache_` series, and the test states the whole difference (a series that
 * moved and is not stated fails it, as does one stated that did not move).
 */
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { Cache, CacheStore, LayeredStore, MemoryStore } from "@circuitry/cache"
import * as Edition from "@circuitry/core/Edition"
import { assert, counterCount, describe, it, metricSeries, TestClock, yieldNow } from "@circuitry/testkit"
import { Deferred, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { makeTestStore } from "./testStore.js"

/** A series as a short name: `operations{operation=get,outcome=hit}`. */
const label = (series: { readonly name: string; readonly attributes: Readonly<Record<string, string>> }): string => {
  const attributes = Object.entries(series.attributes)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, value]) => `${key}=${value}`)
  return `${series.name.replace(/^circuitry_cache_(.*)_total$/, "$1")}{${attributes.join(",")}}`
}

const counts = Effect.map(
  metricSeries,
  (all) =>
    new Map(
      all
        .filter((series) => series.name.startsWith("circuitry_cache_"))
        .map((series) => [label(series), (series.state as { readonly count: number }).count])
    )
)

/** Runs `effect` and asserts what it added to the cache's series, exactly. */
const moves = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  expected: Record<string, number>,
  what = "the step"
): Effect.Effect<A, E, R> =>
  Effect.gen(function* () {
    const before = yield* counts
    const value = yield* effect
    const after = yield* counts
    const delta: Record<string, number> = {}
    for (const [key, count] of after) {
      const added = count - (before.get(key) ?? 0)
      if (added !== 0) delta[key] = added
    }
    assert.deepStrictEqual(delta, expected, what)
    return value
  })

const settle = Effect.forEach(Array.from({ length: 20 }), () => yieldNow, { discard: true })

const op = (operation: string, outcome: string) => `operations{operation=${operation},outcome=${outcome}}`
const lookup = (outcome: string) => `lookups{outcome=${outcome}}`
const load = (outcome: string) => `loads{outcome=${outcome}}`
const rejected = (reason: string) => `loads{outcome=rejected,reason=${reason}}`

const guarded = Effect.gen(function* () {
  const store = yield* makeTestStore()
  const breaker = yield* CircuitBreaker.make({
    name: "metrics-guard",
    policy: Policy.consecutiveFailures(1),
    openFor: "30 seconds"
  })
  return { store, breaker, cache: Cache.guard(store, breaker, { onError: () => Effect.void }) }
})

describe("metrics: circuitry_cache_operations_total, the guard's operations", () => {
  it.scoped("a healthy store: get by hit or miss (getEntry too), every other operation a success", () =>
    Effect.gen(function* () {
      const { cache, store } = yield* guarded
      yield* store.inner.set("k", "v")
      yield* moves(cache.get("k"), { [op("get", "hit")]: 1 })
      yield* moves(cache.get("absent"), { [op("get", "miss")]: 1 })
      yield* moves(cache.getEntry!("k"), { [op("get", "hit")]: 1 })
      yield* moves(cache.getEntry!("absent"), { [op("get", "miss")]: 1 })
      // a write the store declines (an expired TTL stores nothing) is still an answer
      yield* moves(cache.set("k", "w", { ttl: 0 }), { [op("set", "success")]: 1 })
      yield* moves(cache.set("k", "w"), { [op("set", "success")]: 1 })
      yield* moves(cache.touch("k"), { [op("touch", "success")]: 1 })
      yield* moves(cache.delete("k"), { [op("delete", "success")]: 1 })
      yield* moves(cache.keys(), { [op("keys", "success")]: 1 })
      yield* moves(cache.size, { [op("size", "success")]: 1 })
      yield* moves(cache.ping, { [op("ping", "success")]: 1 })
    })
  )

  it.scoped("a failing store: an error each; then the open circuit sheds reads, and writes after a failed repair", () =>
    Effect.gen(function* () {
      const { breaker, cache, store } = yield* guarded
      store.failing = true
      yield* moves(cache.get("k"), { [op("get", "error")]: 1 }) // opens the circuit
      assert.strictEqual((yield* breaker.state)._tag, "Open")
      const calls = store.total()
      yield* moves(cache.get("k"), { [op("get", "shed")]: 1 })
      yield* moves(cache.getEntry!("k"), { [op("get", "shed")]: 1 })
      yield* moves(cache.keys(), { [op("keys", "shed")]: 1 })
      yield* moves(cache.size, { [op("size", "shed")]: 1 })
      yield* moves(cache.ping, { [op("ping", "shed")]: 1 })
      assert.strictEqual(store.total(), calls, "shed reads never reached the store")
      // the episode's repair reaches the store and fails; the writes after it are shed
      yield* moves(cache.set("k", "v"), { [op("set", "error")]: 1 })
      yield* moves(cache.set("k", "v"), { [op("set", "shed")]: 1 })
      yield* moves(cache.touch("k"), { [op("touch", "shed")]: 1 })
      yield* moves(cache.delete("k"), { [op("delete", "shed")]: 1 })
      assert.strictEqual(store.total(), calls + 1)
    })
  )

  it.scoped("a repair that reaches a healthy store while the circuit is open is a success", () =>
    Effect.gen(function* () {
      const { breaker, cache, store } = yield* guarded
      store.failNext = 1
      yield* moves(cache.ping, { [op("ping", "error")]: 1 })
      assert.strictEqual((yield* breaker.state)._tag, "Open")
      yield* moves(cache.set("k", "v"), { [op("set", "success")]: 1 })
      yield* moves(cache.delete("k"), { [op("delete", "success")]: 1 })
      yield* moves(cache.get("k"), { [op("get", "shed")]: 1 })
    })
  )

  it.scoped("an interrupted operation counts nothing", () =>
    Effect.gen(function* () {
      const { cache, store } = yield* guarded
      store.delay.get = "1 second"
      store.delay.set = "1 second"
      yield* moves(
        Effect.gen(function* () {
          const read = yield* Edition.forkChild(cache.get("k"))
          const write = yield* Edition.forkChild(cache.set("k", "v"))
          yield* settle
          yield* Fiber.interrupt(read)
          yield* Fiber.interrupt(write)
        }),
        {}
      )
      assert.strictEqual(store.interrupted, 2)
      // a store call that interrupts itself interrupts its caller, and counts nothing either
      const interrupting = Cache.guard({ ...store, get: () => Effect.interrupt }, yield* CircuitBreaker.make())
      const exit = yield* moves(Effect.exit(interrupting.get("k")), {})
      assert.isTrue(Exit.isFailure(exit) && Edition.hasInterruptsOnly(exit.cause))
    })
  )
})

describe("metrics: circuitry_cache_lookups_total and circuitry_cache_loads_total, getOrLoad", () => {
  it.effect("a miss loads and a hit does not; a failed load (or a defect) is a failure", () =>
    Effect.gen(function* () {
      const cache = yield* Cache.make(yield* MemoryStore.make())
      yield* moves(cache.getOrLoad("k", Effect.succeed("v")), { [lookup("load")]: 1, [load("success")]: 1 })
      yield* moves(cache.getOrLoad("k", Effect.succeed("other")), { [lookup("hit")]: 1 })
      yield* moves(Effect.exit(cache.getOrLoad("bad", Effect.fail("boom"))), {
        [lookup("load")]: 1,
        [load("failure")]: 1
      })
      yield* moves(Effect.exit(cache.getOrLoad("bad", Effect.die("bug"))), {
        [lookup("load")]: 1,
        [load("failure")]: 1
      })
    })
  )

  it.effect("fibers that ask for a key while it loads are coalesced onto that one load", () =>
    Effect.gen(function* () {
      const cache = yield* Cache.make(yield* MemoryStore.make())
      const gate = yield* Deferred.make<void>()
      const slow = Effect.as(Deferred.await(gate), "v")
      yield* moves(
        Effect.gen(function* () {
          const fibers = yield* Effect.forEach([0, 1, 2, 3], () => Edition.forkChild(cache.getOrLoad("k", slow)))
          yield* settle
          yield* Deferred.succeed(gate, undefined)
          for (const fiber of fibers) assert.strictEqual(yield* Fiber.join(fiber), "v")
        }),
        { [lookup("load")]: 1, [lookup("coalesced")]: 3, [load("success")]: 1 }
      )
    })
  )

  it.effect("a load the cap's full line turns away is rejected (queue-full), typed or not, never a failure", () =>
    Effect.gen(function* () {
      const cache = yield* Cache.make(yield* MemoryStore.make(), { maxConcurrentLoads: 1, maxQueuedLoads: 0 })
      const gate = yield* Deferred.make<void>()
      const holder = yield* Edition.forkChild(cache.getOrLoad("held", Effect.as(Deferred.await(gate), "h")))
      yield* settle
      const typed = yield* moves(Effect.exit(cache.getOrLoad("a", Effect.succeed("a"), { onRejected: (r) => r })), {
        [lookup("load")]: 1,
        [rejected("queue-full")]: 1
      })
      assert.isTrue(Exit.isFailure(typed))
      const defect = yield* moves(Effect.exit(cache.getOrLoad("b", Effect.succeed("b"))), {
        [lookup("load")]: 1,
        [rejected("queue-full")]: 1
      })
      assert.isTrue(Exit.isFailure(defect))
      yield* moves(
        Effect.andThen(Deferred.succeed(gate, undefined), Fiber.join(holder)),
        { [load("success")]: 1 },
        "the held load ends"
      )
    })
  )

  it.effect("a load that waits past maxLoadWait is rejected (wait-exceeded), once for the callers joined on it", () =>
    Effect.gen(function* () {
      const cache = yield* Cache.make(yield* MemoryStore.make(), { maxConcurrentLoads: 1, maxLoadWait: "500 millis" })
      const holder = yield* Edition.forkChild(cache.getOrLoad("held", Effect.as(Effect.sleep("2 seconds"), "h")))
      yield* settle
      yield* moves(
        Effect.gen(function* () {
          const waiters = yield* Effect.forEach([0, 1], () =>
            Edition.forkChild(Effect.exit(cache.getOrLoad("w", Effect.succeed("w"), { onRejected: (r) => r })))
          )
          yield* settle
          yield* TestClock.adjust("500 millis")
          for (const waiter of waiters) assert.isTrue(Exit.isFailure(yield* Fiber.join(waiter)))
        }),
        { [lookup("load")]: 1, [lookup("coalesced")]: 1, [rejected("wait-exceeded")]: 1 }
      )
      yield* moves(
        Effect.andThen(TestClock.adjust("2 seconds"), Fiber.join(holder)),
        { [load("success")]: 1 },
        "the held load ends"
      )
    })
  )

  it.effect("an interrupted load is counted as such, and the caller that takes it over looks up again", () =>
    Effect.gen(function* () {
      const cache = yield* Cache.make(yield* MemoryStore.make())
      const gate = yield* Deferred.make<void>()
      const slow = Effect.as(Deferred.await(gate), "v")
      yield* moves(
        Effect.gen(function* () {
          const leader = yield* Edition.forkChild(cache.getOrLoad("k", slow))
          yield* settle
          const follower = yield* Edition.forkChild(cache.getOrLoad("k", slow))
          yield* settle
          yield* Fiber.interrupt(leader)
          yield* settle
          yield* Deferred.succeed(gate, undefined)
          assert.strictEqual(yield* Fiber.join(follower), "v")
        }),
        { [lookup("load")]: 2, [lookup("coalesced")]: 1, [load("interrupted")]: 1, [load("success")]: 1 }
      )
    })
  )

  it.effect("through Cache.layer, a load's write-back is a guarded set; a shed read loads and repairs", () =>
    Effect.gen(function* () {
      const store = yield* makeTestStore()
      const layer = Cache.layer({ breaker: { name: "metrics-layer", policy: Policy.consecutiveFailures(1) } }).pipe(
        Layer.provide(Layer.succeed(CacheStore.Store, store))
      )
      yield* Effect.gen(function* () {
        yield* moves(Cache.getOrLoad("k", Effect.succeed("v")), {
          [op("get", "miss")]: 1,
          [lookup("load")]: 1,
          [load("success")]: 1,
          [op("set", "success")]: 1
        })
        yield* moves(Cache.getOrLoad("k", Effect.succeed("v")), { [op("get", "hit")]: 1, [lookup("hit")]: 1 })
        store.failNext = 1
        yield* moves(Cache.getOrLoad("k", Effect.succeed("v")), {
          [op("get", "error")]: 1,
          [lookup("load")]: 1,
          [load("success")]: 1,
          [op("set", "success")]: 1
        })
        // open now: the read is shed, the load's write-back is the episode's repair
        yield* moves(Cache.getOrLoad("k", Effect.succeed("v")), {
          [op("get", "shed")]: 1,
          [lookup("load")]: 1,
          [load("success")]: 1,
          [op("set", "success")]: 1
        })
      }).pipe(Effect.provide(layer))
    })
  )
})

describe("metrics: circuitry_cache_l2_write_failures_total, a layered store's background writes", () => {
  const layered = (l2Writes: "await" | "background") =>
    Effect.gen(function* () {
      const l2 = yield* makeTestStore()
      const store = yield* LayeredStore.make(yield* MemoryStore.make(), l2, { l2Writes })
      return { l2, store }
    })

  it.scoped("a failed background write counts by operation; a successful one does not", () =>
    Effect.gen(function* () {
      const { l2, store } = yield* layered("background")
      yield* moves(Effect.andThen(store.set("k", "v"), settle), {})
      l2.failing = true
      yield* moves(Effect.andThen(store.set("k", "v"), settle), { "l2_write_failures{operation=set}": 1 })
      yield* moves(Effect.andThen(store.touch("k"), settle), { "l2_write_failures{operation=touch}": 1 })
      yield* moves(Effect.andThen(store.delete("k"), settle), { "l2_write_failures{operation=delete}": 1 })
    })
  )

  it.scoped("an awaited L2 write that fails is its caller's failure, not counted", () =>
    Effect.gen(function* () {
      const { l2, store } = yield* layered("await")
      l2.failing = true
      const exit = yield* moves(Effect.exit(store.set("k", "v")), {})
      assert.isTrue(Exit.isFailure(exit))
    })
  )

  it.effect("a background write interrupted by the store's shutdown is not a failure", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const { l2, store } = yield* Effect.provideService(layered("background"), Scope.Scope, scope)
      l2.delay.set = "1 second"
      yield* moves(
        Effect.gen(function* () {
          yield* store.set("k", "v")
          yield* settle
          yield* Scope.close(scope, Exit.void)
        }),
        {}
      )
      assert.strictEqual(l2.interrupted, 1)
    })
  )

  it.scoped("a background write that interrupts itself is not a failure", () =>
    Effect.gen(function* () {
      const l2 = yield* makeTestStore()
      const interrupting: CacheStore.CacheStore<CacheStore.CacheError> = { ...l2, set: () => Effect.interrupt }
      const store = yield* LayeredStore.make(yield* MemoryStore.make(), interrupting, { l2Writes: "background" })
      yield* moves(Effect.andThen(store.set("k", "v"), settle), {})
    })
  )
})

describe("metrics: the public counters", () => {
  it.scoped("read the series the cache updates, by their labels", () =>
    Effect.gen(function* () {
      const { cache, store } = yield* guarded
      const loading = yield* Cache.make(cache, { maxConcurrentLoads: 1, maxQueuedLoads: 0 })
      const l2 = yield* makeTestStore()
      const layered = yield* LayeredStore.make(yield* MemoryStore.make(), l2, { l2Writes: "background" })
      l2.failing = true
      const read = Effect.all([
        counterCount(Cache.operationsTotal, { operation: "get", outcome: "miss" }),
        counterCount(Cache.operationsTotal, { operation: "set", outcome: "success" }),
        counterCount(Cache.lookupsTotal, { outcome: "load" }),
        counterCount(Cache.lookupsTotal, { outcome: "hit" }),
        counterCount(Cache.loadsTotal, { outcome: "success" }),
        counterCount(Cache.loadsTotal, { outcome: "rejected", reason: "queue-full" }),
        counterCount(LayeredStore.l2WriteFailuresTotal, { operation: "delete" })
      ])
      const before = yield* read
      // three guarded misses and loads (k, held, turned-away), two write-backs, one rejection
      yield* loading.getOrLoad("k", Effect.succeed("v"))
      yield* loading.getOrLoad("k", Effect.succeed("v")) // a hit
      const gate = yield* Deferred.make<void>()
      const held = yield* Edition.forkChild(loading.getOrLoad("held", Effect.as(Deferred.await(gate), "h")))
      yield* settle
      yield* Effect.exit(loading.getOrLoad("turned-away", Effect.succeed("x")))
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(held)
      yield* Effect.andThen(layered.delete("k"), settle)
      const after = yield* read
      assert.deepStrictEqual(
        after.map((n, i) => n - before[i]!),
        [3, 2, 3, 1, 2, 1, 1]
      )
      assert.strictEqual(store.calls.set, 2)
    })
  )
})
