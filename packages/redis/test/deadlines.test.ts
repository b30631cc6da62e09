import { LoopStall } from "@circuitry/breaker"
import { assert, describe, it, TestClock, withAttributes } from "@circuitry/testkit"
import { Effect, Metric } from "effect"
import { Deadlines } from "../src/internal/deadlines.js"

// The one sweeper behind every call's deadline, on the TestClock.

describe("Deadlines", () => {
  it.scoped("only the calls still pending at their deadline expire, in the order they started", () =>
    Effect.gen(function* () {
      const deadlines = yield* Deadlines.make(100)
      const expired: Array<string> = []
      const cancelA = deadlines.start(() => expired.push("a"))
      deadlines.start(() => expired.push("b"))
      const cancelC = deadlines.start(() => expired.push("c"))
      deadlines.start(() => expired.push("d"))
      cancelA()
      cancelC()
      yield* TestClock.adjust("99 millis")
      assert.deepStrictEqual(expired, [])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(expired, ["b", "d"])
    })
  )

  it.scoped("finished calls are dropped as new ones start, and a later deadline still holds", () =>
    Effect.gen(function* () {
      const deadlines = yield* Deadlines.make(100)
      const expired: Array<number> = []
      // many calls that finish at once, as on a busy connection, then one that never answers
      for (let i = 0; i < 5_000; i++) deadlines.start(() => expired.push(i))()
      yield* TestClock.adjust("50 millis")
      const late = 5_000
      deadlines.start(() => expired.push(late))
      for (let i = 0; i < 3_000; i++) deadlines.start(() => expired.push(late + 1 + i))()
      yield* TestClock.adjust("50 millis")
      assert.deepStrictEqual(expired, [])
      yield* TestClock.adjust("50 millis")
      assert.deepStrictEqual(expired, [late])
      // an idle sweeper wakes for the next call
      deadlines.start(() => expired.push(-1))
      yield* TestClock.adjust("100 millis")
      assert.deepStrictEqual(expired, [late, -1])
    })
  )

  it.scoped("a deadline the loop spent stalled is carried on for the time the stall took, and no longer", () =>
    Effect.gen(function* () {
      const extended = Metric.value(withAttributes(LoopStall.deadlineExtensions, { deadline: "redis_deadline" }))
      const before = (yield* extended).count
      const deadlines = yield* Deadlines.make(100)
      const expired: Array<string> = []
      // The loop is stalled from 20 to 80 ms.
      deadlines.start(() => expired.push("a")) // at 0: 60 ms of its span lost, so due at 160
      yield* TestClock.adjust("60 millis")
      deadlines.start(() => expired.push("b")) // at 60: 20 ms lost, so due at 180
      yield* TestClock.adjust("99 millis")
      assert.deepStrictEqual(expired, [])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(expired, ["a"])
      yield* TestClock.adjust("19 millis")
      assert.deepStrictEqual(expired, ["a"])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(expired, ["a", "b"])
      assert.strictEqual((yield* extended).count - before, 2)
      // After the stall, deadlines are the Clock's again.
      deadlines.start(() => expired.push("c"))
      yield* TestClock.adjust("100 millis")
      assert.deepStrictEqual(expired, ["a", "b", "c"])
    }).pipe(Effect.provideService(LoopStall.LoopStall, LoopStall.scripted([[20, 80]])))
  )
})
