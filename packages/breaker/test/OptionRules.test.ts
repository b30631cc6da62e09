// The rules moved to @circuitry/core; the breaker's OptionRules re-exports them for code written
// against 0.1.0 (core's test/OptionRules.test.ts tests the rules themselves).
import { OptionRules } from "@circuitry/breaker"
import { OptionRules as CoreRules } from "@circuitry/core"
import { assert, describe, it } from "@circuitry/testkit"

describe("OptionRules (deprecated: @circuitry/core's)", () => {
  it("re-exports core's rules, the same values", () => {
    for (const name of [
      "Millis",
      "FiniteMillis",
      "PositiveMillis",
      "Whole",
      "OneOf",
      "Text",
      "Flag",
      "show",
      "decode"
    ] as const) {
      assert.strictEqual(OptionRules[name], CoreRules[name], name)
    }
  })
})
