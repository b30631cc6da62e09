/**
 * LimiterRejectedError and the Shedder's LoadShedError are rejections (`Rejection.TypeId` from @circuitry/core): recognised by
 * `isLimiterRejectedError`, `Rejection.isRejection` and the default `isDrop` whichever copy of the
 * packages made it, while it keeps its tag, fields and class; a look-alike with the same `_tag` is
 * not one.
 */
import { CircuitBreaker } from "@circuitry/breaker"
import { Rejection } from "@circuitry/core"
import * as Edition from "@circuitry/core/Edition"
import { Limit, Limiter, Shedder } from "@circuitry/limiter"
import { assert, describe, it, TestClock } from "@circuitry/testkit"
import { Cause, Deferred, Effect, Fiber, Schema } from "effect"
import { untilInFlight } from "./utils.js"

/** What another copy of the packages puts on its rejections: the same registered symbol. */
const otherCopyTypeId = Symbol.for("@circuitry/core/Rejection")

describe("LimiterRejectedError is a rejection", () => {
  it.scoped("a full limiter's rejection (built without a stack) and a constructed one are recognised", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({ name: "db", limit: Limit.fixed(1) })
      const gate = yield* Deferred.make<void>()
      const holder = yield* Edition.forkChild(Limiter.withLimiter(Deferred.await(gate), limiter))
      yield* untilInFlight(limiter, 1)
      const error = yield* Effect.flip(Limiter.withLimiter(Effect.void, limiter))
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(holder)
      const made = new Limiter.LimiterRejectedError({ limiter: "db", limit: 1, inFlight: 1, retryAfterMillis: 0 })
      for (const e of [error, made]) {
        assert.isTrue(Limiter.isLimiterRejectedError(e))
        assert.isTrue(Rejection.isRejection(e))
        assert.isTrue(e instanceof Limiter.LimiterRejectedError)
        assert.isTrue(Schema.is(Limiter.LimiterRejectedError)(e))
        assert.isFalse(CircuitBreaker.isBreakerOpenError(e))
      }
      assert.deepStrictEqual(JSON.parse(JSON.stringify(error)), {
        _tag: "LimiterRejectedError",
        limiter: "db",
        limit: 1,
        inFlight: 1,
        retryAfterMillis: 0
      })
    })
  )

  it("one from another copy is recognised, and is a drop; a look-alike without the TypeId is neither", () => {
    const fields = { _tag: "LimiterRejectedError", limiter: "db", limit: 1, inFlight: 1, retryAfterMillis: 5 } as const
    const fromAnotherCopy = { ...fields, [otherCopyTypeId]: otherCopyTypeId }
    assert.isTrue(Limiter.isLimiterRejectedError(fromAnotherCopy))
    assert.isTrue(Limiter.defaultIsDrop(Cause.fail(fromAnotherCopy)))
    assert.isFalse(Limiter.isLimiterRejectedError(fields))
    assert.isFalse(Limiter.defaultIsDrop(Cause.fail(fields)))
    const breakerLookAlike = { _tag: "BreakerOpenError", breaker: "x", state: "Open", retryAfterMillis: 0 }
    assert.isFalse(Limiter.defaultIsDrop(Cause.fail(breakerLookAlike)))
    assert.isTrue(Limiter.defaultIsDrop(Cause.fail({ ...breakerLookAlike, [otherCopyTypeId]: otherCopyTypeId })))
    assert.isFalse(Limiter.isLimiterRejectedError({ [otherCopyTypeId]: otherCopyTypeId, _tag: "BreakerOpenError" }))
  })
})

describe("LoadShedError is a rejection", () => {
  it.scoped("a shedder's shed (built without a stack) and a constructed one are recognised", () =>
    Effect.gen(function* () {
      const shedder = yield* Shedder.make({ name: "api", loop: false, interval: "500 millis" })
      yield* TestClock.adjust("500 millis")
      const shed = yield* Effect.flip(shedder.admit(100))
      const made = new Shedder.LoadShedError({
        shedder: "api",
        reason: "overdue",
        waitedMillis: 600,
        retryAfterMillis: 500
      })
      for (const e of [shed, made]) {
        assert.isTrue(Shedder.isLoadShedError(e))
        assert.isTrue(Rejection.isRejection(e))
        assert.strictEqual(e.retryAfterMillis, 500)
        assert.isTrue(e instanceof Shedder.LoadShedError)
        assert.isTrue(Schema.is(Shedder.LoadShedError)(e))
        assert.isTrue(Limiter.defaultIsDrop(Cause.fail(e)))
        assert.isFalse(Limiter.isLimiterRejectedError(e))
        assert.isFalse(CircuitBreaker.isBreakerOpenError(e))
      }
      assert.deepStrictEqual(JSON.parse(JSON.stringify(shed)), {
        _tag: "LoadShedError",
        shedder: "api",
        reason: "standing",
        waitedMillis: 100,
        retryAfterMillis: 500
      })
    })
  )

  it("one from another copy is recognised; a look-alike with the same _tag but no TypeId is not", () => {
    const fields = { _tag: "LoadShedError", shedder: "api", reason: "standing", waitedMillis: 1, retryAfterMillis: 5 }
    const fromAnotherCopy = { ...fields, [otherCopyTypeId]: otherCopyTypeId }
    assert.isTrue(Shedder.isLoadShedError(fromAnotherCopy))
    assert.isTrue(Limiter.defaultIsDrop(Cause.fail(fromAnotherCopy)))
    assert.isFalse(Shedder.isLoadShedError(fields))
    assert.isFalse(Rejection.isRejection(fields))
    assert.isFalse(Limiter.defaultIsDrop(Cause.fail(fields)))
    assert.isFalse(Shedder.isLoadShedError({ [otherCopyTypeId]: otherCopyTypeId, _tag: "LimiterRejectedError" }))
  })
})
