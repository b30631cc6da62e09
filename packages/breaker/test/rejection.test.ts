/**
 * BreakerOpenError is a rejection (`Rejection.TypeId` from @circuitry/core): recognised by
 * `isBreakerOpenError` and `Rejection.isRejection` whichever copy of the package made it, while it
 * keeps its tag, fields, class and serialised form; a look-alike with the same `_tag` is not one.
 */
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { Rejection } from "@circuitry/core"
import { assert, describe, it } from "@circuitry/testkit"
import { Effect, Schema } from "effect"
import { call, fail, rejectedWith, succeed } from "./utils.js"

/** What another copy of the packages puts on its rejections: the same registered symbol. */
const otherCopyTypeId = Symbol.for("@circuitry/core/Rejection")

describe("BreakerOpenError is a rejection", () => {
  it.scoped("an open breaker's rejection (built without a stack) and a constructed one are recognised", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({ name: "db", policy: Policy.consecutiveFailures(1) })
      yield* call(breaker, fail)
      const error = rejectedWith(yield* call(breaker, succeed))
      const made = new CircuitBreaker.BreakerOpenError({ breaker: "db", state: "Isolated", retryAfterMillis: 0 })
      for (const e of [error, made]) {
        assert.isTrue(CircuitBreaker.isBreakerOpenError(e))
        assert.isTrue(Rejection.isRejection(e))
        assert.strictEqual<symbol>(e[Rejection.TypeId], otherCopyTypeId)
        assert.strictEqual(e._tag, "BreakerOpenError")
        assert.isTrue(Schema.is(CircuitBreaker.BreakerOpenError)(e))
      }
      // Only added: the fields and the serialised form are what they were.
      assert.deepStrictEqual(JSON.parse(JSON.stringify(error)), {
        _tag: "BreakerOpenError",
        breaker: "db",
        state: "Open",
        retryAfterMillis: 30_000
      })
    })
  )

  it("one from another copy of the package is recognised; a look-alike without the TypeId is not", () => {
    const fields = { _tag: "BreakerOpenError", breaker: "db", state: "Open", retryAfterMillis: 5 } as const
    assert.isTrue(CircuitBreaker.isBreakerOpenError({ ...fields, [otherCopyTypeId]: otherCopyTypeId }))
    assert.isFalse(CircuitBreaker.isBreakerOpenError(fields))
    assert.isFalse(CircuitBreaker.isBreakerOpenError(new Error("BreakerOpenError")))
    assert.isFalse(
      CircuitBreaker.isBreakerOpenError({ [otherCopyTypeId]: otherCopyTypeId, _tag: "LimiterRejectedError" })
    )
    assert.isFalse(CircuitBreaker.isBreakerOpenError(undefined))
  })
})
