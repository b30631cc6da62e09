// The rejection TypeId, on whichever major this run is: recognised by its Symbol.for key, whichever
// copy of the packages made it; a look-alike with the same _tag is not a rejection.
import { Rejection } from "@circuitry/core"
import { assert, describe, it } from "@circuitry/testkit"

/** What another copy of @circuitry/core puts on its rejections: the same registered symbol. */
const otherCopyTypeId = Symbol.for("@circuitry/core/Rejection")

describe("Rejection", () => {
  it("TypeId is the registered symbol, so every copy of the package has the same one", () => {
    assert.strictEqual<symbol>(Rejection.TypeId, otherCopyTypeId)
  })

  it("isRejection: an object carrying TypeId, from any copy; not a look-alike, not a primitive", () => {
    const fromAnotherCopy = { [otherCopyTypeId]: otherCopyTypeId, _tag: "BreakerOpenError", retryAfterMillis: 5 }
    assert.isTrue(Rejection.isRejection(fromAnotherCopy))
    class Refused {
      get [Rejection.TypeId](): Rejection.TypeId {
        return Rejection.TypeId
      }
      readonly _tag = "LimiterRejectedError"
      readonly retryAfterMillis = 0
    }
    assert.isTrue(Rejection.isRejection(new Refused()))
    assert.isTrue(Rejection.isRejection(Object.create(Refused.prototype)))
    assert.isFalse(Rejection.isRejection({ _tag: "BreakerOpenError", retryAfterMillis: 5 }))
    assert.isFalse(Rejection.isRejection({ [otherCopyTypeId]: true, _tag: "BreakerOpenError", retryAfterMillis: 5 }))
    assert.isFalse(Rejection.isRejection({ [Symbol("@circuitry/core/Rejection")]: otherCopyTypeId, _tag: "X" }))
    for (const u of [null, undefined, 0, "BreakerOpenError", otherCopyTypeId]) assert.isFalse(Rejection.isRejection(u))
  })

  it("isTagged: a rejection with that _tag only", () => {
    const open = { [otherCopyTypeId]: otherCopyTypeId, _tag: "BreakerOpenError", retryAfterMillis: 0 }
    assert.isTrue(Rejection.isTagged(open, "BreakerOpenError"))
    assert.isFalse(Rejection.isTagged(open, "LimiterRejectedError"))
    assert.isFalse(Rejection.isTagged({ _tag: "BreakerOpenError", retryAfterMillis: 0 }, "BreakerOpenError"))
  })
})
