// The shared option rules, on whichever major this run is: the same assertions hold on Effect 3 and 4.
import { OptionRules } from "@circuitry/core"
import { assert, describe, it } from "@circuitry/testkit"

describe("OptionRules", () => {
  it("show: numbers as numbers, functions by name, the rest as JSON or its type", () => {
    assert.strictEqual(OptionRules.show(-5), "-5")
    assert.strictEqual(OptionRules.show(Number.NaN), "NaN")
    assert.strictEqual(OptionRules.show(10n), "10")
    assert.strictEqual(OptionRules.show("2"), '"2"')
    assert.strictEqual(OptionRules.show({ fraction: 0.5 }), '{"fraction":0.5}')
    assert.strictEqual(OptionRules.show(undefined), "undefined")
    assert.strictEqual(
      OptionRules.show(() => 1),
      "a function"
    )
    const cyclic: { self?: unknown } = {}
    cyclic.self = cyclic
    assert.strictEqual(OptionRules.show(cyclic), "object")
    assert.strictEqual(OptionRules.show(Symbol("s")), "Symbol(s)")
  })

  it("millis: a finite duration >= 0 in milliseconds; negatives, infinity and non-durations are refused", () => {
    assert.strictEqual(OptionRules.millis("2 seconds"), 2000)
    assert.strictEqual(OptionRules.millis(15), 15)
    assert.strictEqual(OptionRules.millis(0), 0)
    assert.isUndefined(OptionRules.millis(-5))
    assert.isUndefined(OptionRules.millis(Number.NaN))
    assert.isUndefined(OptionRules.millis("-1 second"))
    assert.isUndefined(OptionRules.millis(" -1 second"))
    assert.isUndefined(OptionRules.millis("forever"))
    assert.isUndefined(OptionRules.millis(Number.POSITIVE_INFINITY))
    assert.isUndefined(OptionRules.millis(true))
    // Effect 3 has no object form; Effect 4 reads this as -1000 ms: refused on both.
    assert.isUndefined(OptionRules.millis({ seconds: -1 }))
  })

  it("millis with { infinite: true }: an infinite duration is taken as well, nothing else changes", () => {
    assert.strictEqual(OptionRules.millis(Number.POSITIVE_INFINITY, { infinite: true }), Number.POSITIVE_INFINITY)
    assert.strictEqual(OptionRules.millis("2 seconds", { infinite: true }), 2000)
    assert.isUndefined(OptionRules.millis(-5, { infinite: true }))
    assert.isUndefined(OptionRules.millis("-1 second", { infinite: true }))
    assert.isUndefined(OptionRules.millis("forever", { infinite: true }))
    assert.isUndefined(OptionRules.millis(Number.NaN, { infinite: true }))
  })
})
