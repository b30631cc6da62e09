/**
 * The public contract of ../shared/API.md ("@circuitry/cache"), written the way code outside this
 * repository uses it: signatures checked by the compiler, each value used once at run time.
 */
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { Cache, CacheStore, LayeredStore, MemoryStore } from "@circuitry/cache"
import type * as Edition from "@circuitry/core/Edition"
import { assert, describe, expect, it } from "@circuitry/testkit"
import type { Scope } from "effect"
import { Effect, Option } from "effect"

interface ContractStore<E = CacheStore.CacheError> {
  readonly get: (key: string) => Effect.Effect<Option.Option<string>, E>
  readonly set: (
    key: string,
    value: string,
    options?: { readonly ttl?: Edition.DurationInput }
  ) => Effect.Effect<boolean, E>
  readonly touch: (key: string, options?: { readonly ttl?: Edition.DurationInput }) => Effect.Effect<boolean, E>
  readonly delete: (key: string) => Effect.Effect<boolean, E>
  readonly keys: (prefix?: string) => Effect.Effect<ReadonlyArray<string>, E>
  readonly size: Effect.Effect<number, E>
  readonly ping: Effect.Effect<boolean, E>
}

describe("API.md contract: @circuitry/cache", () => {
  it.scoped("stores, guard, the Cache service and getOrLoad", () =>
    Effect.gen(function* () {
      const memory: ContractStore<never> = yield* MemoryStore.make({ capacity: 100 })
      const l1: ContractStore<never> = yield* MemoryStore.make()
      const layeredMake: <E1, E2>(
        l1: CacheStore.CacheStore<E1>,
        l2: CacheStore.CacheStore<E2>,
        options?: { l2Writes?: "await" | "background" }
      ) => Effect.Effect<CacheStore.CacheStore<E1 | E2>, never, Scope.Scope> = LayeredStore.make
      const layered: ContractStore<never> = yield* layeredMake(l1, memory, { l2Writes: "await" })
      const breaker = yield* CircuitBreaker.make({ name: "contract-cache", policy: Policy.consecutiveFailures(3) })
      const guard: <E>(
        store: CacheStore.CacheStore<E>,
        breaker: CircuitBreaker.CircuitBreaker
      ) => ContractStore<never> = Cache.guard
      const cache = guard(layered, breaker)
      assert.isTrue(yield* cache.set("k", "v", { ttl: "1 minute" }))
      expect(yield* cache.get("k")).toStrictEqual(Option.some("v"))
      expect(yield* memory.get("k")).toStrictEqual(Option.some("v"))
      assert.deepStrictEqual(yield* cache.keys(), ["k"])
      assert.strictEqual(yield* cache.size, 1)
      assert.isTrue(yield* cache.ping)
      assert.isTrue(yield* cache.touch("k"))
      assert.isTrue(yield* cache.delete("k"))
      // The service, provided the plainest way an application could: a cache made of the store.
      const getOrLoad: <E, R>(
        key: string,
        load: Effect.Effect<string, E, R>,
        options?: { ttl?: Edition.DurationInput }
      ) => Effect.Effect<string, E, R | Cache.Cache> = Cache.getOrLoad
      let loads = 0
      const load = Effect.sync(() => `loaded ${++loads}`)
      const both = yield* Effect.all([getOrLoad("user:1", load), getOrLoad("user:1", load)], {
        concurrency: "unbounded"
      }).pipe(Effect.provideService(Cache.Cache, yield* Cache.make(cache)))
      assert.deepStrictEqual(both, ["loaded 1", "loaded 1"])
      assert.strictEqual(loads, 1)
      expect(yield* memory.get("user:1")).toStrictEqual(Option.some("loaded 1"))
      const error = new CacheStore.CacheError({ operation: "get", message: "m" })
      assert.strictEqual(error._tag, "CacheError")
      assert.strictEqual(Cache.Cache.key, "@circuitry/cache/Cache")
    })
  )
})
