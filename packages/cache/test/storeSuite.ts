/**
 * The `CacheStore` contract as a reusable suite: run it against any store.
 *
 * ```ts
 * import { storeSuite } from "../../cache/test/storeSuite.js"
 * storeSuite("RedisStore", RedisStore.make({ prefix: `test:${id}:` }), { clock: "live", clear: ... })
 * ```
 */
import type { CacheStore } from "@circuitry/cache"
import type * as Edition from "@circuitry/core/Edition"
import { assert, describe, hasDies, it, TestClock } from "@circuitry/testkit"
import { assertEqual } from "./equal.js"
import { Effect, Exit, Option } from "effect"
import * as Duration from "effect/Duration"
import type * as Scope from "effect/Scope"

/**
 * @since 0.1.0
 */
export interface StoreSuiteOptions<E> {
  /**
   * How the store reads time. `"test"`: from the Effect Clock, so the tests run under `TestClock`
   * and expire entries by adjusting it. `"live"`: from somewhere else (a server), so the tests run
   * with the live clock and expire entries by waiting out a short TTL for real.
   */
  readonly clock: "test" | "live"
  /** Empties the store before each test (for a store whose data outlives `make`, e.g. Redis). */
  readonly clear?: ((store: CacheStore.CacheStore<E>) => Effect.Effect<void, unknown>) | undefined
  /** The TTL used by expiry tests with the live clock. Default 200 ms (and a wait of 3 times it). */
  readonly liveTtlMillis?: number | undefined
}

/**
 * Registers the contract tests for a store. `make` builds a fresh store for each test, in that
 * test's scope.
 *
 * @since 0.1.0
 */
export const storeSuite = <E, R extends Scope.Scope = never>(
  name: string,
  make: Effect.Effect<CacheStore.CacheStore<E>, unknown, R>,
  options: StoreSuiteOptions<E>
): void => {
  const live = options.clock === "live"
  const ttlMillis = options.liveTtlMillis ?? 200
  const runner = live ? it.scopedLive : it.scoped
  const fresh = Effect.gen(function* () {
    const store = yield* make
    if (options.clear !== undefined) yield* options.clear(store)
    return store
  })
  /** Lets an entry with `ttl` expire: the TestClock, or a real wait. */
  const expire = (ttl: Edition.DurationInput): Effect.Effect<void> =>
    live ? Effect.sleep(ttlMillis * 3) : TestClock.adjust(ttl)
  /** A TTL that `expire` outlives. */
  const shortTtl: Edition.DurationInput = live ? ttlMillis : "10 seconds"
  const test = (title: string, body: (store: CacheStore.CacheStore<E>) => Effect.Effect<void, unknown, Scope.Scope>) =>
    runner(title, () => Effect.flatMap(fresh, body) as Effect.Effect<void, unknown, Scope.Scope>)

  describe(`CacheStore contract: ${name}`, () => {
    test("get of a missing key is None", (store) =>
      Effect.gen(function* () {
        assertEqual(yield* store.get("missing"), Option.none())
      }))

    test("set then get returns the value written", (store) =>
      Effect.gen(function* () {
        assert.isTrue(yield* store.set("a", "1"))
        assertEqual(yield* store.get("a"), Option.some("1"))
      }))

    test("set replaces the value", (store) =>
      Effect.gen(function* () {
        yield* store.set("a", "1")
        assert.isTrue(yield* store.set("a", "2"))
        assertEqual(yield* store.get("a"), Option.some("2"))
        assert.strictEqual(yield* store.size, 1)
      }))

    test("values are kept as written (empty, unicode, large)", (store) =>
      Effect.gen(function* () {
        const large = "x".repeat(100_000)
        yield* store.set("empty", "")
        yield* store.set("unicode", "héllo ✓ 日本")
        yield* store.set("large", large)
        assertEqual(yield* store.get("empty"), Option.some(""))
        assertEqual(yield* store.get("unicode"), Option.some("héllo ✓ 日本"))
        assertEqual(yield* store.get("large"), Option.some(large))
      }))

    test("delete is true when a key was removed, false otherwise", (store) =>
      Effect.gen(function* () {
        yield* store.set("a", "1")
        assert.isTrue(yield* store.delete("a"))
        assertEqual(yield* store.get("a"), Option.none())
        assert.isFalse(yield* store.delete("a"))
        assert.isFalse(yield* store.delete("never"))
      }))

    test("keys lists every key, or those under a prefix", (store) =>
      Effect.gen(function* () {
        yield* store.set("user:1", "a")
        yield* store.set("user:2", "b")
        yield* store.set("order:1", "c")
        assertEqual([...(yield* store.keys())].sort(), ["order:1", "user:1", "user:2"])
        assertEqual([...(yield* store.keys("user:"))].sort(), ["user:1", "user:2"])
        assertEqual(yield* store.keys("none:"), [])
      }))

    test("size counts the entries", (store) =>
      Effect.gen(function* () {
        assert.strictEqual(yield* store.size, 0)
        yield* store.set("a", "1")
        yield* store.set("b", "2")
        assert.strictEqual(yield* store.size, 2)
        yield* store.delete("a")
        assert.strictEqual(yield* store.size, 1)
      }))

    test("ping answers true", (store) =>
      Effect.gen(function* () {
        assert.isTrue(yield* store.ping)
      }))

    test("an entry expires after its ttl", (store) =>
      Effect.gen(function* () {
        yield* store.set("short", "1", { ttl: shortTtl })
        yield* store.set("forever", "2")
        assertEqual(yield* store.get("short"), Option.some("1"))
        yield* expire(shortTtl)
        assertEqual(yield* store.get("short"), Option.none())
        assertEqual(yield* store.get("forever"), Option.some("2"))
      }))

    test("expired entries are not listed, counted or deleted", (store) =>
      Effect.gen(function* () {
        yield* store.set("short", "1", { ttl: shortTtl })
        yield* store.set("forever", "2")
        yield* expire(shortTtl)
        assertEqual(yield* store.keys(), ["forever"])
        assert.strictEqual(yield* store.size, 1)
        assert.isFalse(yield* store.delete("short"))
      }))

    test("set without a ttl removes an earlier ttl", (store) =>
      Effect.gen(function* () {
        yield* store.set("a", "1", { ttl: shortTtl })
        yield* store.set("a", "2")
        yield* expire(shortTtl)
        assertEqual(yield* store.get("a"), Option.some("2"))
      }))

    test("touch is false for a missing key and does not create it", (store) =>
      Effect.gen(function* () {
        assert.isFalse(yield* store.touch("missing", { ttl: "1 minute" }))
        assertEqual(yield* store.get("missing"), Option.none())
      }))

    test("touch renews the expiry of an existing key", (store) =>
      Effect.gen(function* () {
        yield* store.set("a", "1", { ttl: shortTtl })
        assert.isTrue(yield* store.touch("a", { ttl: "1 hour" }))
        yield* expire(shortTtl)
        assertEqual(yield* store.get("a"), Option.some("1"))
      }))

    test("touch without a ttl makes the entry live until deleted", (store) =>
      Effect.gen(function* () {
        yield* store.set("a", "1", { ttl: shortTtl })
        assert.isTrue(yield* store.touch("a"))
        yield* expire(shortTtl)
        assertEqual(yield* store.get("a"), Option.some("1"))
      }))

    test("touch is false for an expired key", (store) =>
      Effect.gen(function* () {
        yield* store.set("a", "1", { ttl: shortTtl })
        yield* expire(shortTtl)
        assert.isFalse(yield* store.touch("a", { ttl: "1 hour" }))
        assertEqual(yield* store.get("a"), Option.none())
      }))

    test("getEntry, when offered, returns the value and the ttl left", (store) =>
      Effect.gen(function* () {
        const getEntry = store.getEntry
        if (getEntry === undefined) return
        yield* store.set("short", "1", { ttl: "1 hour" })
        yield* store.set("forever", "2")
        const short = yield* getEntry("short")
        const left = Option.flatMap(short, (entry) => Option.map(entry.ttl, Duration.toMillis))
        assertEqual(
          Option.map(short, (entry) => entry.value),
          Option.some("1")
        )
        // The ttl left is at most what was set, and no real wait has passed that could eat an hour.
        assert.isTrue(Option.isSome(left) && left.value > 3_500_000 && left.value <= 3_600_000, `ttl left: ${left}`)
        const forever = yield* getEntry("forever")
        assertEqual(
          Option.map(forever, (e) => [e.value, Option.isNone(e.ttl)]),
          Option.some(["2", true] as [string, boolean])
        )
        assertEqual(yield* getEntry("missing"), Option.none())
      }))

    // The one TTL rule of every store (CacheStore.WriteOptions).
    test("a ttl of zero or less is already expired: nothing is stored and the old value is gone", (store) =>
      Effect.gen(function* () {
        for (const ttl of [0, -5, "0 millis", Duration.zero] as const) {
          yield* store.set("a", "old")
          assert.isFalse(yield* store.set("a", "new", { ttl }), `set with ttl ${String(ttl)}`)
          assertEqual(yield* store.get("a"), Option.none())
          assert.isFalse(yield* store.set("b", "new", { ttl }))
          assertEqual(yield* store.get("b"), Option.none())
        }
        assert.strictEqual(yield* store.size, 0)
      }))

    test("touch with a ttl of zero or less removes an entry that existed", (store) =>
      Effect.gen(function* () {
        yield* store.set("a", "1")
        assert.isTrue(yield* store.touch("a", { ttl: 0 }))
        assertEqual(yield* store.get("a"), Option.none())
        assert.isFalse(yield* store.touch("a", { ttl: -1 }))
        assert.isFalse(yield* store.touch("missing", { ttl: 0 }))
      }))

    test("an infinite ttl is no expiry", (store) =>
      Effect.gen(function* () {
        assert.isTrue(yield* store.set("a", "1", { ttl: Duration.infinity }))
        yield* store.set("b", "2", { ttl: shortTtl })
        assert.isTrue(yield* store.touch("b", { ttl: Number.POSITIVE_INFINITY }))
        yield* expire(shortTtl)
        assertEqual(yield* store.get("a"), Option.some("1"))
        assertEqual(yield* store.get("b"), Option.some("2"))
      }))

    test("a ttl that is not a duration is a defect naming the rule, and writes nothing", (store) =>
      Effect.gen(function* () {
        const set = yield* Effect.exit(store.set("a", "1", { ttl: "soon" as never }))
        assert.isTrue(Exit.isFailure(set) && hasDies(set.cause), String(set))
        assert.include(String(set), "ttl must be a duration")
        assertEqual(yield* store.get("a"), Option.none())
        yield* store.set("b", "1")
        const touch = yield* Effect.exit(store.touch("b", { ttl: "soon" as never }))
        assert.isTrue(Exit.isFailure(touch) && hasDies(touch.cause), String(touch))
        assertEqual(yield* store.get("b"), Option.some("1"))
      }))

    test("concurrent writes to distinct keys all land", (store) =>
      Effect.gen(function* () {
        const keys = Array.from({ length: 50 }, (_, i) => `k${i}`)
        const results = yield* Effect.forEach(keys, (key) => store.set(key, key), { concurrency: "unbounded" })
        assert.isTrue(results.every((stored) => stored))
        assert.strictEqual(yield* store.size, 50)
        for (const key of keys) assertEqual(yield* store.get(key), Option.some(key))
      }))
  })
}
