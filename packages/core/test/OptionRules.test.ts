// The shared option rules, on whichever major this run is: the same assertions hold on Effect 3 and 4.
import { Edition, OptionRules } from "@circuitry/core"
import { assert, describe, it, Result } from "@circuitry/testkit"
import { Duration, Schema } from "effect"

const Options = Schema.Struct({
  deadline: Schema.optional(OptionRules.PositiveMillis),
  wait: Schema.optional(OptionRules.FiniteMillis),
  ttl: Schema.optional(OptionRules.Millis),
  size: Schema.optional(OptionRules.Whole(1)),
  mode: Schema.optional(OptionRules.OneOf("await", "background")),
  prefix: Schema.optional(OptionRules.Text),
  migrate: Schema.optional(OptionRules.Flag)
})

const message = (input: unknown): string =>
  Result.match(
    OptionRules.decode(Options, input, (m) => m),
    { onFailure: (m) => m, onSuccess: () => "valid" }
  )

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
  it("reads every duration input as milliseconds", () => {
    const decoded = OptionRules.decode(
      Options,
      { deadline: "1 second", wait: 0, ttl: Duration.infinity, size: 3, mode: "await", prefix: "", migrate: false },
      (m) => m
    )
    assert.deepStrictEqual(
      decoded,
      Result.succeed({ deadline: 1_000, wait: 0, ttl: Infinity, size: 3, mode: "await", prefix: "", migrate: false })
    )
    assert.deepStrictEqual(
      OptionRules.decode(Options, undefined, (m) => m),
      Result.succeed({})
    )
  })

  it("names the option, the rule and the value that broke it", () => {
    assert.strictEqual(message({ deadline: 0 }), "deadline must be a finite duration > 0, got 0")
    assert.strictEqual(message({ deadline: "forever" }), 'deadline must be a finite duration > 0, got "forever"')
    assert.strictEqual(
      message({ deadline: Duration.infinity }),
      'deadline must be a finite duration > 0, got {"_id":"Duration","_tag":"Infinity"}'
    )
    assert.strictEqual(message({ wait: -1 }), "wait must be a finite duration >= 0, got -1")
    assert.strictEqual(message({ wait: "-5 millis" }), 'wait must be a finite duration >= 0, got "-5 millis"')
    assert.strictEqual(message({ wait: Number.POSITIVE_INFINITY }), "wait must be a finite duration >= 0, got Infinity")
    assert.strictEqual(message({ ttl: -1 }), "ttl must be a duration >= 0, got -1")
    // Effect 4 reads this object as -1000 ms, Effect 3 as no duration at all: refused on both.
    assert.strictEqual(message({ ttl: { seconds: -1 } }), 'ttl must be a duration >= 0, got {"seconds":-1}')
    assert.strictEqual(message({ size: 1.5 }), "size must be a whole number >= 1, got 1.5")
    assert.strictEqual(message({ size: 0 }), "size must be a whole number >= 1, got 0")
    assert.strictEqual(message({ size: "2" }), 'size must be a whole number >= 1, got "2"')
    assert.strictEqual(message({ mode: "later" }), 'mode must be "await" or "background", got "later"')
    assert.strictEqual(message({ prefix: 42 }), "prefix must be a string, got 42")
    assert.strictEqual(message({ migrate: "yes" }), 'migrate must be a boolean, got "yes"')
    assert.strictEqual(message(5), "options must be an object, got 5")
    assert.strictEqual(message(null), "options must be an object, got null")
    assert.strictEqual(message({ deadline: 10n }), "valid")
    assert.strictEqual(message({ size: 7, unknown: "ignored" }), "valid")
  })

  it("decoder: one rule on its own, built once", () => {
    const decodeWait = OptionRules.decoder(OptionRules.PositiveMillis)
    assert.strictEqual(Edition.Result.getOrUndefined(decodeWait("2 seconds")), 2000)
    assert.isUndefined(Edition.Result.getOrUndefined(decodeWait(0)))
  })

  it("Is: what the guard accepts passes as it is; anything else is refused by the rule's words", () => {
    const Checks = Schema.Struct({
      isFailure: Schema.optional(OptionRules.Is((u): u is () => boolean => typeof u === "function", "a function"))
    })
    const check = (input: unknown) =>
      Result.match(
        OptionRules.decode(Checks, input, (m) => m),
        { onFailure: (m) => m, onSuccess: () => "valid" }
      )
    const isFailure = () => true
    assert.deepStrictEqual(
      OptionRules.decode(Checks, { isFailure }, (m) => m),
      Result.succeed({ isFailure })
    )
    assert.strictEqual(check({ isFailure: "yes" }), 'isFailure must be a function, got "yes"')
    assert.strictEqual(check({ isFailure: null }), "isFailure must be a function, got null")
  })

  it("Worded: whatever the rule refuses reads in the given words; what it takes is unchanged", () => {
    const Delays = Schema.Struct({
      delay: Schema.optional(OptionRules.Worded(OptionRules.FiniteMillis, "a fixed delay (a finite duration)"))
    })
    const check = (input: unknown) =>
      Result.match(
        OptionRules.decode(Delays, input, (m) => m),
        { onFailure: (m) => m, onSuccess: (a) => JSON.stringify(a) }
      )
    assert.strictEqual(check({ delay: "2 seconds" }), '{"delay":2000}')
    assert.strictEqual(check({ delay: -1 }), "delay must be a fixed delay (a finite duration), got -1")
    assert.strictEqual(check({ delay: "soon" }), 'delay must be a fixed delay (a finite duration), got "soon"')
    assert.strictEqual(
      check({ delay: Number.POSITIVE_INFINITY }),
      "delay must be a fixed delay (a finite duration), got Infinity"
    )
  })

  it("a missing required key reads the same on both majors: must be given", () => {
    const Required = Schema.Struct({ name: OptionRules.NonEmptyText })
    assert.deepStrictEqual(
      OptionRules.decode(Required, {}, (m) => m),
      Result.fail("name must be given, got undefined")
    )
  })

  it("a path into an array reads as an index: breakers[0], pools[1].size", () => {
    const Lists = Schema.Struct({
      breakers: Schema.optional(Schema.Array(OptionRules.NonEmptyText)),
      pools: Schema.optional(Schema.Array(Schema.Struct({ size: OptionRules.Whole(1) })))
    })
    const check = (input: unknown) =>
      Result.match(
        OptionRules.decode(Lists, input, (m) => m),
        { onFailure: (m) => m, onSuccess: () => "valid" }
      )
    assert.strictEqual(check({ breakers: [""] }), 'breakers[0] must be a non-empty string, got ""')
    assert.strictEqual(check({ pools: [{ size: 2 }, { size: 0 }] }), "pools[1].size must be a whole number >= 1, got 0")
  })
})
