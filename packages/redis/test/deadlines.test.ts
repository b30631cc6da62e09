import { assert, describe, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
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
})
