import { BreakerStoreKit } from "@circuitry/breaker"
import { assert, describe, it } from "@circuitry/testkit"
import { Effect, Exit, Option, Scope } from "effect"

describe("BreakerStoreKit", () => {
  it("lease strings round-trip, and anything else is not a lease", () => {
    const token = BreakerStoreKit.makeToken()
    assert.notStrictEqual(token, BreakerStoreKit.makeToken())
    const lease = BreakerStoreKit.encodeLease({ slot: 3, token })
    assert.strictEqual(lease, `3:${token}`)
    assert.deepStrictEqual(BreakerStoreKit.decodeLease(lease), Option.some({ slot: 3, token }))
    // a token may hold colons of its own
    assert.deepStrictEqual(BreakerStoreKit.decodeLease("0:a:b"), Option.some({ slot: 0, token: "a:b" }))
    for (const bad of ["", "nonsense", ":token", "1:", "-1:t", "1.5:t", "x1:t", "99999999999999999999:t"]) {
      assert.isTrue(Option.isNone(BreakerStoreKit.decodeLease(bad)), bad)
    }
  })

  it("reads a stored verdict from what a store gives back, or refuses it", () => {
    assert.deepStrictEqual(BreakerStoreKit.storedOf({ state: "Open", until: "5000", at: 1000n, origin: "a" }), {
      state: "Open",
      until: 5_000,
      at: 1_000,
      origin: "a"
    })
    // until of a verdict that is not Open reads as 0; a by is kept when it is a non-empty string
    assert.deepStrictEqual(
      BreakerStoreKit.storedOf({ state: "Isolated", until: 7, at: "2.5", origin: "", by: "ops" }),
      { state: "Isolated", until: 0, at: 2.5, origin: "", by: "ops" }
    )
    for (const by of [null, undefined, "", 7]) {
      assert.deepStrictEqual(BreakerStoreKit.storedOf({ state: "Closed", until: 0, at: 1, origin: "a", by }), {
        state: "Closed",
        until: 0,
        at: 1,
        origin: "a"
      })
    }
    for (const bad of [
      { state: "HalfOpen", until: 0, at: 0, origin: "a" },
      { state: "open", until: 0, at: 0, origin: "a" },
      { state: "Open", until: "soon", at: 0, origin: "a" },
      { state: "Open", until: 0, at: Number.NaN, origin: "a" },
      { state: "Open", until: 0, at: null, origin: "a" },
      { state: "Open", until: 0, at: 0, origin: 7 }
    ]) {
      assert.isUndefined(BreakerStoreKit.storedOf(bad), JSON.stringify(bad))
      assert.isUndefined(BreakerStoreKit.verdictOf(bad, 0), JSON.stringify(bad))
    }
    // a store's now that is not epoch milliseconds makes no verdict
    assert.isUndefined(BreakerStoreKit.verdictOf({ state: "Closed", until: 0, at: 0, origin: "a" }, "later"))
    assert.strictEqual(BreakerStoreKit.millisOf("-12"), -12)
    assert.isUndefined(BreakerStoreKit.millisOf("1e3"))
    assert.isUndefined(BreakerStoreKit.millisOf(Number.POSITIVE_INFINITY))
  })

  it("a verdict is dated on the store's clock and handed out as durations from the store's now", () => {
    const stored = BreakerStoreKit.toStored(
      { state: "Open", remainingMillis: 30_000, ageMillis: 5, origin: "a", by: "ops" },
      1_000_000
    )
    assert.deepStrictEqual(stored, { state: "Open", until: 1_030_000, at: 999_995, origin: "a", by: "ops" })
    // 10 s later by the store's clock: 20 s left, made 10.005 s ago
    assert.deepStrictEqual(BreakerStoreKit.toVerdict(stored, 1_010_000), {
      state: "Open",
      remainingMillis: 20_000,
      ageMillis: 10_005,
      origin: "a",
      by: "ops"
    })
    // past its open time: none left; read before it was made (a clock stepped back): age 0
    assert.strictEqual(BreakerStoreKit.toVerdict(stored, 2_000_000).remainingMillis, 0)
    assert.strictEqual(BreakerStoreKit.toVerdict(stored, 0).ageMillis, 0)
    // a closed verdict has no open time; bad durations count as 0
    assert.deepStrictEqual(
      BreakerStoreKit.toStored({ state: "Closed", remainingMillis: 99, ageMillis: -3, origin: "b" }, 500),
      { state: "Closed", until: 0, at: 500, origin: "b" }
    )
    assert.strictEqual(
      BreakerStoreKit.toStored({ state: "Open", remainingMillis: Number.NaN, ageMillis: 0, origin: "b" }, 500).until,
      500
    )
    assert.deepStrictEqual(
      BreakerStoreKit.verdictOf({ state: "Open", until: "5000", at: "1000", origin: "a" }, "2000"),
      { state: "Open", remainingMillis: 3_000, ageMillis: 1_000, origin: "a" }
    )
  })

  it.effect("members join for as long as their scope, and the last to leave empties the name", () =>
    Effect.gen(function* () {
      const emptied: Array<string> = []
      const members = BreakerStoreKit.makeMembers<number>({ onEmpty: (name) => emptied.push(name) })
      const one = yield* Scope.make()
      const two = yield* Scope.make()
      yield* Effect.provideService(members.join("a", 1), Scope.Scope, one)
      yield* Effect.provideService(members.join("a", 2), Scope.Scope, two)
      yield* Effect.provideService(members.join("b", 3), Scope.Scope, two)
      assert.deepStrictEqual([...members.of("a")], [1, 2])
      assert.deepStrictEqual(members.names(), ["a", "b"])
      assert.deepStrictEqual([...members.all()], [1, 2, 3])
      yield* Scope.close(one, Exit.void)
      assert.deepStrictEqual([...members.of("a")], [2])
      assert.deepStrictEqual(emptied, [])
      yield* Scope.close(two, Exit.void)
      assert.strictEqual(members.of("a").size, 0)
      assert.deepStrictEqual(members.names(), [])
      assert.deepStrictEqual(emptied.sort(), ["a", "b"])
    })
  )
})
