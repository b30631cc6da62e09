/**
 * Faults that used to hold a call, or the circuit, up: a probe that never finishes, a slow probe,
 * and a call whose interruption takes long (the breaker's `timeout`). All in virtual time.
 */
import * as Edition from "@circuitry/core/Edition"
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { assert, describe, it, Result, TestClock, yieldNow } from "@circuitry/testkit"
import { Deferred, Effect, Exit, Fiber, Option, Schedule } from "effect"
import { call, fail, succeed, tagOf } from "./utils.js"

/** A breaker opened at t=0 and half-open at t=10s. */
const halfOpen = (options: CircuitBreaker.TimeoutOptions) =>
  Effect.gen(function* () {
    const breaker = yield* CircuitBreaker.make({
      policy: Policy.consecutiveFailures(1),
      openFor: "10 seconds",
      ...options
    })
    yield* call(breaker, fail)
    yield* TestClock.adjust("10 seconds")
    assert.strictEqual(yield* tagOf(breaker), "HalfOpen")
    return breaker
  })

const timeoutError = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Edition.findError(exit.cause)) : undefined

describe("half-open probes are bounded", () => {
  it.scoped("a probe that never returns stops holding the circuit after the open time: it reopens", () =>
    Effect.gen(function* () {
      const breaker = yield* halfOpen({})
      const hung = yield* Edition.forkChild(call(breaker, Effect.never))
      yield* yieldNow
      assert.strictEqual((yield* breaker.snapshot).probes, 1)
      yield* TestClock.adjust("9999 millis")
      assert.strictEqual(yield* tagOf(breaker), "HalfOpen")
      yield* TestClock.adjust("1 millis")
      // past the probe timeout (default: the episode's open time, 10 s): a failed probe
      assert.deepStrictEqual<unknown>(yield* breaker.state, CircuitBreaker.State.Open({ until: 30_000 }))
      assert.strictEqual((yield* breaker.snapshot).probes, 0)
      // the next episode probes, though the hung call is still running
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(yield* CircuitBreaker.withBreaker(succeed, breaker), "ok")
      assert.strictEqual(yield* tagOf(breaker), "Closed")
      assert.isUndefined(Edition.pollUnsafe(hung))
      yield* Fiber.interrupt(hung)
      assert.strictEqual(yield* tagOf(breaker), "Closed")
    })
  )

  it.scoped("halfOpen.probeTimeout sets the bound; a probe that ends in time is judged as before", () =>
    Effect.gen(function* () {
      const breaker = yield* halfOpen({ halfOpen: { probeTimeout: "2 seconds" } })
      const gate = yield* Deferred.make<void>()
      const late = yield* Edition.forkChild(call(breaker, Effect.andThen(Deferred.await(gate), succeed)))
      yield* yieldNow
      yield* TestClock.adjust("2 seconds")
      assert.deepStrictEqual<unknown>(yield* breaker.state, CircuitBreaker.State.Open({ until: 22_000 }))
      // its late success is ignored: the circuit stays open, and the caller gets its answer
      yield* Deferred.succeed(gate, undefined)
      assert.deepStrictEqual(yield* Fiber.join(late), Result.succeed("ok" as const))
      assert.strictEqual(yield* tagOf(breaker), "Open")
      yield* TestClock.adjust("10 seconds")
      const quick = yield* Edition.forkChild(call(breaker, Effect.andThen(Effect.sleep("1 second"), succeed)))
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(quick)
      assert.strictEqual(yield* tagOf(breaker), "Closed")
    })
  )

  it.scoped("the default bound follows the schedule's delay of the episode that ended", () =>
    Effect.gen(function* () {
      const breaker = yield* halfOpen({ openFor: Schedule.exponential("4 seconds") })
      yield* TestClock.adjust("0 millis")
      // first episode waited 4 s (opened at 0, half-open at 4 s); halfOpen() moved to 10 s
      yield* Edition.forkChild(call(breaker, Effect.never))
      yield* yieldNow
      yield* TestClock.adjust("3999 millis")
      assert.strictEqual(yield* tagOf(breaker), "HalfOpen")
      yield* TestClock.adjust("1 millis")
      // the probe failed at 14 s: the next episode waits 8 s
      assert.deepStrictEqual<unknown>(yield* breaker.state, CircuitBreaker.State.Open({ until: 22_000 }))
    })
  )

  it.effect("probeTimeout and timeout are checked at make", () =>
    Effect.gen(function* () {
      for (const options of [{ halfOpen: { probeTimeout: 0 } }, { timeout: -1 }, { timeout: "soon" }] as const) {
        const error = yield* Effect.flip(Effect.scoped(CircuitBreaker.make(options as CircuitBreaker.Options)))
        assert.strictEqual(error._tag, "InvalidBreakerOptions")
        assert.include(error.message, "probeTimeout" in (options.halfOpen ?? {}) ? "halfOpen.probeTimeout" : "timeout")
      }
    })
  )
})

describe("slow probes", () => {
  const slowPolicy = Policy.failureRate({
    threshold: 0.5,
    minimumCalls: 1,
    window: Policy.countWindow(4),
    slowCall: { duration: "1 second", threshold: 1 }
  })

  it.scoped("with a slow-call rule, a probe slower than its duration is a failed probe", () =>
    Effect.gen(function* () {
      const breaker = yield* halfOpen({ policy: slowPolicy })
      const probe = yield* Edition.forkChild(call(breaker, Effect.andThen(Effect.sleep("1001 millis"), succeed)))
      yield* TestClock.adjust("1001 millis")
      assert.deepStrictEqual(yield* Fiber.join(probe), Result.succeed("ok" as const))
      assert.deepStrictEqual<unknown>(yield* breaker.state, CircuitBreaker.State.Open({ until: 21_001 }))
    })
  )

  it.scoped("a probe within the slow-call duration closes the circuit", () =>
    Effect.gen(function* () {
      const breaker = yield* halfOpen({ policy: slowPolicy })
      const probe = yield* Edition.forkChild(call(breaker, Effect.andThen(Effect.sleep("1 second"), succeed)))
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(probe)
      assert.strictEqual(yield* tagOf(breaker), "Closed")
    })
  )
})

describe("the breaker's timeout", () => {
  /** An effect that never ends, and whose interruption takes `cleanup` of the Clock. */
  const stubborn = (cleanup: Edition.DurationInput, cleaned: Deferred.Deferred<void>) =>
    Effect.never.pipe(
      Effect.onInterrupt(() => Effect.andThen(Effect.sleep(cleanup), Deferred.succeed(cleaned, undefined)))
    )

  it.scoped("answers at the deadline, whatever the call's cleanup costs, and counts a failure", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({
        name: "db",
        policy: Policy.consecutiveFailures(2),
        timeout: "1 second",
        isFailure: () => false // a timeout counts whatever isFailure says
      })
      const cleaned = yield* Deferred.make<void>()
      const fiber = yield* Edition.forkChild(
        Effect.exit(CircuitBreaker.withBreaker(stubborn("6 seconds", cleaned), breaker))
      )
      yield* TestClock.adjust("1 second")
      const exit = yield* Fiber.join(fiber)
      // a typed failure, not a defect
      assert.deepStrictEqual(
        exit,
        Exit.fail(new CircuitBreaker.BreakerTimeoutError({ breaker: "db", timeoutMillis: 1_000 }))
      )
      const error = timeoutError(exit)
      assert.isTrue(CircuitBreaker.isBreakerTimeoutError(error))
      assert.strictEqual(
        (error as CircuitBreaker.BreakerTimeoutError).message,
        `circuit "db": the call took over its 1000 ms timeout`
      )
      // the cleanup goes on in the background
      assert.isFalse(yield* Deferred.isDone(cleaned))
      assert.strictEqual((yield* breaker.snapshot).counts.consecutiveFailures, 1)
      yield* TestClock.adjust("6 seconds")
      assert.isTrue(yield* Deferred.isDone(cleaned))
      // a second timeout trips the circuit
      const again = yield* Edition.forkChild(Effect.exit(CircuitBreaker.withBreaker(Effect.never, breaker)))
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(again)
      assert.strictEqual(yield* tagOf(breaker), "Open")
    })
  )

  it.scoped("Effect.timeout inside withBreaker waits for the cleanup (the trap the option avoids)", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({ name: "db" })
      const cleaned = yield* Deferred.make<void>()
      const fiber = yield* Edition.forkChild(
        Effect.exit(CircuitBreaker.withBreaker(Effect.timeout(stubborn("6 seconds", cleaned), "1 second"), breaker))
      )
      yield* TestClock.adjust("1 second")
      assert.isUndefined(Edition.pollUnsafe(fiber))
      yield* TestClock.adjust("6 seconds")
      assert.isTrue(Exit.isFailure(yield* Fiber.join(fiber)))
    })
  )

  it.scoped("a call within the timeout is untouched; repair traffic and probes are bounded too", () =>
    Effect.gen(function* () {
      const breaker = yield* halfOpen({ timeout: "1 second" })
      const fast = yield* Edition.forkChild(
        CircuitBreaker.withBreaker(Effect.andThen(Effect.sleep("999 millis"), succeed), breaker)
      )
      yield* TestClock.adjust("999 millis")
      assert.strictEqual(yield* Fiber.join(fast), "ok")
      assert.strictEqual(yield* tagOf(breaker), "Closed")
      yield* call(breaker, fail)
      assert.strictEqual(yield* tagOf(breaker), "Open")
      const repair = yield* Edition.forkChild(
        Effect.exit(CircuitBreaker.repairing(CircuitBreaker.withBreaker(Effect.never, breaker)))
      )
      yield* TestClock.adjust("1 second")
      assert.isTrue(CircuitBreaker.isBreakerTimeoutError(timeoutError(yield* Fiber.join(repair))))
    })
  )
})
