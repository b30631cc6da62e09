import { Rejection } from "@circuitry/core"
import * as Edition from "@circuitry/core/Edition"
import { Hedging, RetryBudget } from "@circuitry/retry"
import { assert, counterCount, describe, it, TestClock } from "@circuitry/testkit"
import { Clock, Duration, Effect, Exit, Fiber, Option } from "effect"

/** A dependency whose n-th attempt takes `latencies[n]` ms and then answers `outcomes[n]`. */
const dependency = (latencies: ReadonlyArray<number>, fail: (n: number) => unknown = () => undefined) => {
  const stats = { calls: 0, interrupted: 0, finalized: 0 }
  const effect = Effect.suspend(() => {
    const n = stats.calls++
    const error = fail(n)
    return Effect.sleep(Duration.millis(latencies[n] ?? latencies[latencies.length - 1]!)).pipe(
      Effect.andThen(error === undefined ? Effect.succeed(n) : Effect.fail(error)),
      Effect.onInterrupt(() => Effect.sync(() => stats.interrupted++)),
      Effect.ensuring(Effect.sync(() => stats.finalized++))
    )
  })
  return { stats, effect }
}

class LimiterRejected {
  readonly [Rejection.TypeId] = Rejection.TypeId
  readonly _tag = "LimiterRejectedError"
  readonly retryAfterMillis = 100
}

const hedges = (name: string, outcome: string) => counterCount(Hedging.hedgesTotal, { hedging: name, outcome })

/** Forks `effect`, moves the clock by `millis`, and returns how long it took and its exit. */
const timed = <A, E>(effect: Effect.Effect<A, E>, millis: number) =>
  Effect.gen(function* () {
    const fiber = yield* Edition.forkChild(
      Effect.gen(function* () {
        const start = yield* Clock.currentTimeMillis
        const exit = yield* Effect.exit(effect)
        return { exit, took: (yield* Clock.currentTimeMillis) - start }
      })
    )
    for (let t = 0; t < millis; t += 10) yield* TestClock.adjust("10 millis")
    return yield* Fiber.join(fiber)
  })

describe("Hedging", () => {
  it.scoped(
    "a call with no result after the delay gets a hedge; the first success wins, the loser is interrupted",
    () =>
      Effect.gen(function* () {
        const name = "fixed"
        const hedging = yield* Hedging.make({ name, delay: "100 millis" })
        const dep = dependency([1000, 10])
        const { exit, took } = yield* timed(dep.effect.pipe(Hedging.withHedging(hedging)), 1500)
        assert.deepStrictEqual(exit, Exit.succeed(1))
        assert.strictEqual(took, 110)
        assert.deepStrictEqual(dep.stats, { calls: 2, interrupted: 1, finalized: 2 })
        assert.strictEqual(yield* hedges(name, "started"), 1)
        assert.strictEqual(yield* hedges(name, "won"), 1)
      })
  )

  it.scoped("a fast success starts no hedge, and leaves no timer behind", () =>
    Effect.gen(function* () {
      const hedging = yield* Hedging.make({ delay: "100 millis" })
      const dep = dependency([5])
      const { exit, took } = yield* timed(dep.effect.pipe(Hedging.withHedging(hedging)), 10)
      assert.deepStrictEqual(exit, Exit.succeed(0))
      assert.strictEqual(took, 5)
      assert.deepStrictEqual(dep.stats, { calls: 1, interrupted: 0, finalized: 1 })
      yield* TestClock.adjust("1 second")
      assert.strictEqual(dep.stats.calls, 1)
    })
  )

  it.scoped("up to maxHedges copies, one delay apart; every loser's finalizer has run when the call returns", () =>
    Effect.gen(function* () {
      const hedging = yield* Hedging.make({ delay: "100 millis", maxHedges: 3 })
      const dep = dependency([1000, 1000, 30, 1000])
      const { exit, took } = yield* timed(dep.effect.pipe(Hedging.withHedging(hedging)), 1500)
      assert.deepStrictEqual(exit, Exit.succeed(2))
      assert.strictEqual(took, 230)
      // The third hedge was due at 300 ms: the call had ended.
      assert.deepStrictEqual(dep.stats, { calls: 3, interrupted: 2, finalized: 3 })
    })
  )

  it.scoped("a rejection from a limiter (or a breaker) stops hedging for that call", () =>
    Effect.gen(function* () {
      const hedging = yield* Hedging.make({ delay: "100 millis", maxHedges: 3 })
      const dep = dependency([1000, 0], (n) => (n === 1 ? new LimiterRejected() : undefined))
      const { exit, took } = yield* timed(dep.effect.pipe(Hedging.withHedging(hedging)), 1500)
      assert.deepStrictEqual(exit, Exit.succeed(0))
      assert.strictEqual(took, 1000)
      assert.strictEqual(dep.stats.calls, 2)
    })
  )

  it.scoped("with a budget, each hedge spends a token, and no token means no hedge", () =>
    Effect.gen(function* () {
      const name = "budgeted"
      const budget = yield* RetryBudget.make({ ratio: 0, minPerSecond: 1 })
      const hedging = yield* Hedging.make({ name, delay: "100 millis", budget })
      const first = dependency([1000, 10])
      assert.strictEqual((yield* timed(first.effect.pipe(Hedging.withHedging(hedging)), 200)).took, 110)
      const second = dependency([1000, 10])
      const { exit, took } = yield* timed(second.effect.pipe(Hedging.withHedging(hedging)), 1100)
      assert.deepStrictEqual(exit, Exit.succeed(0))
      assert.strictEqual(took, 1000) // not hedged: the floor's one token was spent by the first call
      assert.strictEqual(second.stats.calls, 1)
      assert.strictEqual(yield* hedges(name, "denied"), 1)
    })
  )

  it.scoped("a budget of another kind (e.g. the fleet's, through Redis) is asked through its effects", () =>
    Effect.gen(function* () {
      const local = yield* RetryBudget.make({ ratio: 1, minPerSecond: 0 })
      let asked = 0
      const budget: RetryBudget.RetryBudget = {
        [RetryBudget.TypeId]: RetryBudget.TypeId,
        name: "wrapped",
        available: local.available,
        deposit: local.deposit,
        tryWithdraw: Effect.suspend(() => {
          asked++
          return local.tryWithdraw
        })
      }
      const hedging = yield* Hedging.make({ delay: "100 millis", budget })
      const first = dependency([1000, 10])
      assert.strictEqual((yield* timed(first.effect.pipe(Hedging.withHedging(hedging)), 200)).took, 110)
      // The first call's deposit paid for its hedge; the second call's deposit pays for one more.
      const second = dependency([1000, 10])
      assert.strictEqual((yield* timed(second.effect.pipe(Hedging.withHedging(hedging)), 200)).took, 110)
      assert.strictEqual(asked, 2)
      assert.strictEqual(yield* local.available, 0)
    })
  )

  it.scoped("when every copy fails, the call fails with the last failure; a lone failure fails at once", () =>
    Effect.gen(function* () {
      const hedging = yield* Hedging.make({ delay: "100 millis" })
      const both = dependency([150, 60], (n) => `failure ${n}`)
      const all = yield* timed(both.effect.pipe(Hedging.withHedging(hedging)), 300)
      assert.deepStrictEqual(all.exit, Exit.fail("failure 1"))
      assert.strictEqual(all.took, 160)
      const alone = dependency([50], () => "fast failure")
      const one = yield* timed(alone.effect.pipe(Hedging.withHedging(hedging)), 300)
      assert.deepStrictEqual(one.exit, Exit.fail("fast failure"))
      assert.strictEqual(one.took, 50)
      assert.strictEqual(alone.stats.calls, 1)
    })
  )

  it.scoped("a caller in an uninterruptible region still gets the first success; the loser is interrupted", () =>
    Effect.gen(function* () {
      const hedging = yield* Hedging.make({ delay: "100 millis" })
      const dep = dependency([1000, 10])
      const { exit, took } = yield* timed(Effect.uninterruptible(dep.effect.pipe(Hedging.withHedging(hedging))), 300)
      assert.deepStrictEqual(exit, Exit.succeed(1))
      assert.strictEqual(took, 110)
      assert.deepStrictEqual(dep.stats, { calls: 2, interrupted: 1, finalized: 2 })
    })
  )

  it.scoped("interrupting the caller interrupts every copy", () =>
    Effect.gen(function* () {
      const hedging = yield* Hedging.make({ delay: "100 millis", maxHedges: 2 })
      const dep = dependency([1000])
      const fiber = yield* Edition.forkChild(dep.effect.pipe(Hedging.withHedging(hedging)))
      // In steps: Effect 4's TestClock.adjust runs only the sleeps registered one scheduler turn
      // after it starts, and the hedge timer's sweeper arms its sleep a turn after the call starts.
      for (let t = 0; t < 250; t += 10) yield* TestClock.adjust("10 millis")
      assert.strictEqual(dep.stats.calls, 3)
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(dep.stats, { calls: 3, interrupted: 3, finalized: 3 })
    })
  )

  it.effect("once its scope is closed, a Hedging runs calls alone (no timer is left to fire)", () =>
    Effect.gen(function* () {
      const hedging = yield* Effect.scoped(Hedging.make({ delay: "100 millis" }))
      const dep = dependency([1000, 10])
      const { exit, took } = yield* timed(dep.effect.pipe(Hedging.withHedging(hedging)), 1100)
      assert.deepStrictEqual(exit, Exit.succeed(0))
      assert.strictEqual(took, 1000)
      assert.strictEqual(dep.stats.calls, 1)
    })
  )

  it.scoped("a percentile delay: `max` until 32 calls are seen, then the percentile within min and max", () =>
    Effect.gen(function* () {
      const hedging = yield* Hedging.make({ delay: { percentile: 90, min: "5 millis", max: "500 millis" } })
      assert.deepStrictEqual(yield* hedging.delay, Option.some(Duration.millis(500)))
      // 32 calls: latencies 10, 20, ..., 320 ms
      for (let i = 1; i <= 32; i++) {
        const dep = dependency([10 * i])
        yield* timed(dep.effect.pipe(Hedging.withHedging(hedging)), 10 * i)
      }
      assert.strictEqual(yield* hedging.samples, 32)
      // nearest rank: the 29th of 32 (ceil(0.9 * 32))
      assert.deepStrictEqual(yield* hedging.delay, Option.some(Duration.millis(290)))
      const noMax = yield* Hedging.make({ delay: { percentile: 95 } })
      assert.isTrue(Option.isNone(yield* noMax.delay))
    })
  )

  it.effect("bad options fail with InvalidRetryOptions naming the option", () =>
    Effect.gen(function* () {
      const bad: ReadonlyArray<[unknown, string]> = [
        [{ delay: "-1 seconds" }, "delay must be a finite duration >= 0 or { percentile }"],
        // A negative duration in Effect 4's object form (Effect 3 has no object form: it fails too).
        [{ delay: { milliseconds: -5 } }, "delay must be a finite duration >= 0 or { percentile }"],
        [{ delay: { percentile: 95, min: { seconds: -1 } } }, "delay.min must be a finite duration >= 0"],
        [{ delay: { percentile: 0.95 } }, "delay.percentile must be a number in [1, 100)"],
        [{ delay: { percentile: 100 } }, "delay.percentile must be a number in [1, 100)"],
        [
          { delay: { percentile: 95, min: "1 second", max: "10 millis" } },
          "delay.max must be a finite duration >= delay.min"
        ],
        [{ delay: "1 second", maxHedges: 0 }, "maxHedges must be a whole number >= 1"],
        [{ delay: "1 second", maxHedges: 1.5 }, "maxHedges must be a whole number >= 1"],
        [{ delay: "1 second", budget: {} }, "budget must be a RetryBudget"],
        [{ delay: "1 second", name: "" }, "name must be a non-empty string"]
      ]
      for (const [options, message] of bad) {
        const error = yield* Effect.flip(Effect.scoped(Hedging.make(options as Hedging.Options)))
        assert.instanceOf(error, Hedging.InvalidRetryOptions, JSON.stringify(options))
        assert.include(error.message, message)
      }
    })
  )

  it.effect("a bad option's message in full: the owner, the option, the rule, the value as given, the hedging", () =>
    Effect.gen(function* () {
      const bad: ReadonlyArray<[unknown, string]> = [
        [3, "Hedging options must be an object, got 3"],
        [undefined, "Hedging delay must be a finite duration >= 0 or { percentile }, got undefined"],
        [{}, 'Hedging delay must be a finite duration >= 0 or { percentile }, got undefined (hedging "default")'],
        [
          { name: "search", delay: "soon" },
          'Hedging delay must be a finite duration >= 0 or { percentile }, got "soon" (hedging "search")'
        ],
        [
          { delay: { percentile: 95, min: { seconds: -1 } } },
          'Hedging delay.min must be a finite duration >= 0, got {"seconds":-1} (hedging "default")'
        ],
        [
          { delay: { percentile: 95, max: "soon" } },
          'Hedging delay.max must be a finite duration >= delay.min, got "soon" (hedging "default")'
        ],
        [
          { delay: { percentile: 95, min: "1 second", max: "10 millis" } },
          'Hedging delay.max must be a finite duration >= delay.min, got "10 millis" (hedging "default")'
        ],
        [
          { delay: { percentile: "95" } },
          'Hedging delay.percentile must be a number in [1, 100) (95 for p95), got "95" (hedging "default")'
        ],
        [
          { name: "search", delay: "1 second", budget: {} },
          'Hedging budget must be a RetryBudget, got {} (hedging "search")'
        ],
        [
          { delay: "1 second", maxHedges: "2" },
          'Hedging maxHedges must be a whole number >= 1, got "2" (hedging "default")'
        ],
        // A message about the name has no hedging to name.
        [{ name: "", delay: "soon" }, 'Hedging name must be a non-empty string, got ""']
      ]
      for (const [options, message] of bad) {
        const error = yield* Effect.flip(Effect.scoped(Hedging.make(options as Hedging.Options)))
        assert.strictEqual(error.message, message, JSON.stringify(options))
      }
    })
  )

  it.scoped("a percentile delay's max may equal its min; the percentile form is read from `percentile`", () =>
    Effect.gen(function* () {
      const hedging = yield* Hedging.make({ delay: { percentile: 95, min: "20 millis", max: "20 millis" } })
      // Until 32 samples, a percentile delay is its max.
      assert.deepStrictEqual(yield* hedging.delay, Option.some(Duration.millis(20)))
      const fixed = yield* Hedging.make({ delay: "30 millis" })
      assert.deepStrictEqual(yield* fixed.delay, Option.some(Duration.millis(30)))
      assert.strictEqual(yield* fixed.samples, 0)
    })
  )

  it.effect("a tag works, and the types infer without casts", () =>
    Effect.gen(function* () {
      class Search extends Edition.KeyClass<Search, Hedging.Hedging>()("Search") {}
      const search: Effect.Effect<number, "nope"> = Effect.succeed(1)
      const call: Effect.Effect<number, "nope", Search> = search.pipe(Hedging.withHedging(Search))
      const result = yield* call.pipe(Effect.provide(Hedging.layer(Search, { delay: "10 millis" })))
      assert.strictEqual(result, 1)
      assert.isTrue(Hedging.isHedging(yield* Effect.scoped(Hedging.make({ delay: 1 }))))
    })
  )
})
