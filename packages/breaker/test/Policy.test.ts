import * as Edition from "@circuitry/core/Edition"
import { BreakerRegistry, CircuitBreaker, Policy } from "@circuitry/breaker"
import { assert, describe, it, TestClock } from "@circuitry/testkit"
import { Cause, Effect, Exit, Layer, Schedule } from "effect"
import { call, fail, succeed, tagOf } from "./utils.js"

const slow = (duration: Edition.DurationInput) => Effect.sleep(duration).pipe(Effect.andThen(succeed))

/** Runs `effect` through the breaker, moving the TestClock so that sleeps inside it complete. */
const timedCall = <A, E>(
  breaker: CircuitBreaker.CircuitBreaker,
  effect: Effect.Effect<A, E>,
  duration: Edition.DurationInput
) =>
  Effect.gen(function* () {
    const fiber = yield* Edition.forkChild(call(breaker, effect))
    yield* TestClock.adjust(duration)
    return yield* fiber
  })

describe("Policy.failureRate", () => {
  it.scoped("count window: opens at the threshold once minimumCalls is reached", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({
        policy: Policy.failureRate({ threshold: 0.5, minimumCalls: 4, window: Policy.countWindow(10) })
      })
      yield* call(breaker, fail)
      yield* call(breaker, fail)
      yield* call(breaker, fail) // 3 of 3 fail, but below minimumCalls
      assert.strictEqual(yield* tagOf(breaker), "Closed")
      yield* call(breaker, succeed) // 3 of 4: a success can complete the verdict
      assert.strictEqual(yield* tagOf(breaker), "Open")
    })
  )

  it.scoped("a success does not wipe the window", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({
        policy: Policy.failureRate({ threshold: 0.5, minimumCalls: 4, window: Policy.countWindow(4) })
      })
      yield* call(breaker, fail)
      yield* call(breaker, succeed)
      yield* call(breaker, fail)
      assert.strictEqual(yield* tagOf(breaker), "Closed")
      yield* call(breaker, succeed) // 2 of 4
      assert.strictEqual(yield* tagOf(breaker), "Open")
    })
  )

  it.scoped("the count window slides: old outcomes leave it", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({
        policy: Policy.failureRate({ threshold: 0.75, minimumCalls: 4, window: Policy.countWindow(4) })
      })
      for (let i = 0; i < 4; i++) yield* call(breaker, succeed)
      yield* call(breaker, fail)
      yield* call(breaker, fail) // [S S F F]
      assert.strictEqual(yield* tagOf(breaker), "Closed")
      yield* call(breaker, fail) // [S F F F]: 3 of 4, although only 3 of all 7 calls failed
      assert.strictEqual(yield* tagOf(breaker), "Open")
    })
  )

  it.scoped("time window: calls older than the window do not count", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({
        policy: Policy.failureRate({ threshold: 0.5, minimumCalls: 3, window: Policy.timeWindow("10 seconds") })
      })
      yield* call(breaker, fail)
      yield* call(breaker, fail)
      yield* TestClock.adjust("11 seconds")
      yield* call(breaker, fail)
      yield* call(breaker, succeed)
      assert.strictEqual(yield* tagOf(breaker), "Closed") // only 2 calls in the window
      yield* call(breaker, fail)
      assert.strictEqual(yield* tagOf(breaker), "Open") // 2 of 3
    })
  )

  it.scoped("a window starts empty after every transition", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({
        policy: Policy.failureRate({ threshold: 0.5, minimumCalls: 4, window: Policy.countWindow(10) }),
        openFor: "1 second"
      })
      for (let i = 0; i < 4; i++) yield* call(breaker, fail)
      assert.strictEqual(yield* tagOf(breaker), "Open")
      yield* TestClock.adjust("1 second")
      yield* call(breaker, succeed) // closes
      yield* call(breaker, fail)
      yield* call(breaker, fail)
      yield* call(breaker, fail)
      assert.strictEqual(yield* tagOf(breaker), "Closed") // 3 calls: below minimumCalls again
      const snapshot = yield* breaker.snapshot
      assert.deepStrictEqual(snapshot.counts, { calls: 3, failures: 3, slowCalls: 0, consecutiveFailures: 3 })
    })
  )

  it.scoped("slow calls open the circuit at their own rate", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({
        policy: Policy.failureRate({
          threshold: 1,
          minimumCalls: 4,
          window: Policy.countWindow(4),
          slowCall: { duration: "1 second", threshold: 0.5 }
        })
      })
      yield* timedCall(breaker, slow("2 seconds"), "2 seconds")
      yield* timedCall(breaker, slow("1 second"), "1 second") // not slower than the limit
      yield* timedCall(breaker, slow("100 millis"), "100 millis")
      assert.strictEqual(yield* tagOf(breaker), "Closed")
      yield* timedCall(breaker, slow("3 seconds"), "3 seconds")
      assert.strictEqual(yield* tagOf(breaker), "Open")
    })
  )
})

describe("options are validated into InvalidBreakerOptions", () => {
  const cases: ReadonlyArray<[string, CircuitBreaker.Options, string]> = [
    ["threshold 0", { policy: Policy.consecutiveFailures(0) }, "consecutiveFailures threshold"],
    ["fractional threshold", { policy: Policy.consecutiveFailures(2.5) }, "whole number"],
    [
      "rate above 1",
      { policy: Policy.failureRate({ threshold: 1.5, window: Policy.countWindow(10) }) },
      "0 < threshold <= 1"
    ],
    [
      "rate of 0",
      { policy: Policy.failureRate({ threshold: 0, window: Policy.countWindow(10) }) },
      "failureRate threshold"
    ],
    [
      "empty count window",
      { policy: Policy.failureRate({ threshold: 0.5, window: Policy.countWindow(0) }) },
      "countWindow size"
    ],
    [
      "minimumCalls above the window",
      { policy: Policy.failureRate({ threshold: 0.5, minimumCalls: 20, window: Policy.countWindow(10) }) },
      "minimumCalls (20) must not exceed"
    ],
    [
      "minimumCalls 0",
      { policy: Policy.failureRate({ threshold: 0.5, minimumCalls: 0, window: Policy.timeWindow("1 minute") }) },
      "minimumCalls must be a whole number >= 1"
    ],
    [
      "zero time window",
      { policy: Policy.failureRate({ threshold: 0.5, window: Policy.timeWindow(0) }) },
      "timeWindow duration"
    ],
    [
      "slow-call threshold",
      {
        policy: Policy.failureRate({
          threshold: 0.5,
          window: Policy.countWindow(10),
          slowCall: { duration: "1 second", threshold: 2 }
        })
      },
      "slowCall.threshold"
    ],
    ["negative openFor", { openFor: -5 }, "openFor must be a finite duration"],
    ["infinite openFor", { openFor: "Infinity" as never }, "openFor must be a finite duration"],
    ["schedule with no delay", { openFor: Schedule.recurs(0) }, "openFor schedule must give at least one delay"],
    ["permits 0", { halfOpen: { permits: 0 } }, "halfOpen.permits must be a whole number >= 1"],
    ["successesToClose 0.5", { halfOpen: { successesToClose: 0.5 } }, "halfOpen.successesToClose"],
    ["probeLease 0", { halfOpen: { probeLease: 0 } }, "halfOpen.probeLease must be a finite duration > 0"],
    ["empty name", { name: "" }, "name must be a non-empty string"],
    ["not a policy", { policy: { _tag: "ConsecutiveFailures" } as never }, "policy must be made by"],
    ["isFailure not a function", { isFailure: 3 as never }, "isFailure must be a function"],
    // What a JSON config can hold where an object or a number belongs (from the hardening issue):
    // each one is an InvalidBreakerOptions from make, never a throw from the constructor.
    [
      "window null",
      { policy: Policy.failureRate({ threshold: 0.5, window: null as never }) },
      "policy: failureRate window must be Policy.countWindow(size) or Policy.timeWindow(duration), got null"
    ],
    [
      "window undefined",
      { policy: Policy.failureRate({ threshold: 0.5, window: undefined as never }) },
      "policy: failureRate window is required"
    ],
    [
      "window of another kind",
      { policy: Policy.failureRate({ threshold: 0.5, window: { _tag: "Sliding" } as never }) },
      'window must be Policy.countWindow(size) or Policy.timeWindow(duration), got {"_tag":"Sliding"}'
    ],
    [
      "slowCall null",
      { policy: Policy.failureRate({ threshold: 0.5, window: Policy.countWindow(10), slowCall: null as never }) },
      "policy: failureRate slowCall must be an object { duration, threshold }, got null"
    ],
    [
      "slowCall.duration not a duration",
      {
        policy: Policy.failureRate({
          threshold: 0.5,
          window: Policy.countWindow(10),
          slowCall: { duration: "soon" as never, threshold: 0.5 }
        })
      },
      'policy: failureRate slowCall.duration must be a finite duration >= 0, got "soon"'
    ],
    ["failureRate options undefined", { policy: Policy.failureRate(undefined as never) }, "options must be an object"],
    ["failureRate options null", { policy: Policy.failureRate(null as never) }, "options must be an object, got null"],
    [
      "threshold a string",
      { policy: Policy.failureRate({ threshold: "0.5" as never, window: Policy.countWindow(10) }) },
      'policy: failureRate threshold must be a number with 0 < threshold <= 1, got "0.5"'
    ],
    [
      "count window size a string",
      { policy: Policy.failureRate({ threshold: 0.5, window: Policy.countWindow("10" as never) }) },
      'policy: countWindow size must be a whole number between 1 and 1000000, got "10"'
    ],
    [
      "time window not a duration",
      { policy: Policy.failureRate({ threshold: 0.5, window: Policy.timeWindow("soon" as never) }) },
      'policy: timeWindow duration must be a finite duration of at least 1 millisecond, got "soon"'
    ],
    [
      "consecutive threshold a string",
      { policy: Policy.consecutiveFailures("5" as never) },
      'policy: consecutiveFailures threshold must be a whole number >= 1, got "5"'
    ],
    [
      "consecutive threshold undefined",
      { policy: Policy.consecutiveFailures(undefined as never) },
      "consecutiveFailures threshold must be a whole number >= 1, got undefined"
    ],
    ["options a string", "fast" as never, 'options must be an object, got "fast"'],
    ["halfOpen null", { halfOpen: null as never }, "halfOpen must be an object, got null"],
    ["name a number", { name: 5 as never }, "name must be a non-empty string, got 5"],
    ["openFor a word", { openFor: "soon" as never }, "openFor must be a finite duration >= 0 or a Schedule"],
    [
      "permits a string",
      { halfOpen: { permits: "2" as never } },
      'halfOpen.permits must be a whole number >= 1, got "2"'
    ],
    ["the breaker is named", { name: "payments", halfOpen: { permits: 0 } }, '(breaker "payments")']
  ]
  for (const [title, options, expected] of cases) {
    it.scoped(title, () =>
      Effect.gen(function* () {
        const exit = yield* Effect.exit(CircuitBreaker.make(options))
        if (Exit.isSuccess(exit)) return assert.fail("expected InvalidBreakerOptions")
        const error = Edition.findError(exit.cause)
        if (error._tag === "None") return assert.fail(`expected a failure, got ${Cause.pretty(exit.cause)}`)
        assert.strictEqual(error.value._tag, "InvalidBreakerOptions")
        assert.include(error.value.message, expected)
      })
    )
  }

  it("policy constructors never throw", () => {
    assert.doesNotThrow(() => Policy.consecutiveFailures(-1))
    assert.doesNotThrow(() => Policy.failureRate({ threshold: 7, window: Policy.countWindow(-3) }))
    assert.doesNotThrow(() => Policy.failureRate({ threshold: 0.5, window: undefined as never }))
    assert.doesNotThrow(() => Policy.failureRate({ threshold: 0.5, window: null as never }))
    assert.doesNotThrow(() =>
      Policy.failureRate({ threshold: 0.5, window: Policy.countWindow(10), slowCall: null as never })
    )
    assert.doesNotThrow(() => Policy.failureRate(undefined as never))
    assert.doesNotThrow(() => Policy.failureRate(null as never))
    assert.doesNotThrow(() => Policy.failureRate({ threshold: {}, window: 3, slowCall: "x" } as never))
    assert.doesNotThrow(() => Policy.consecutiveFailures(undefined as never))
  })

  it.effect("a registry made from a JSON config reports a bad policy as InvalidBreakerOptions", () =>
    Effect.gen(function* () {
      const config = JSON.parse('{ "threshold": 0.5, "window": null, "slowCall": null }')
      const exit = yield* Effect.exit(
        Effect.scoped(Layer.build(BreakerRegistry.layer({ defaults: { policy: Policy.failureRate(config) } })))
      )
      if (Exit.isSuccess(exit)) return assert.fail("expected InvalidBreakerOptions")
      const error = Edition.findError(exit.cause)
      if (error._tag === "None") return assert.fail(`expected a failure, got ${Cause.pretty(exit.cause)}`)
      assert.strictEqual(error.value._tag, "InvalidBreakerOptions")
      assert.include(error.value.message, "failureRate window must be")
    })
  )
})
