/**
 * The semantic differences docs/coming-from-other-breakers.md lists for users of resilience4j,
 * Polly, cockatiel and opossum, each pinned here against the public API: if one changes, the guide
 * is wrong and this fails.
 */
import * as Edition from "@circuitry/core/Edition"
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { assert, describe, it, result, Result, TestClock, yieldNow } from "@circuitry/testkit"
import { Deferred, Effect, Fiber } from "effect"

const calls = (breaker: CircuitBreaker.CircuitBreaker) => {
  let ran = 0
  const run = <A, E>(effect: Effect.Effect<A, E>) =>
    Effect.suspend(() => {
      ran++
      return effect
    }).pipe(CircuitBreaker.withBreaker(breaker), result)
  return {
    ok: run(Effect.succeed("ok")),
    fail: run(Effect.fail("boom")),
    run,
    ran: () => ran
  }
}
const tag = (breaker: CircuitBreaker.CircuitBreaker) => Effect.map(breaker.state, (s) => s._tag)

describe("differences a user of another breaker meets", () => {
  it.scoped("one failed probe reopens the circuit, whatever the other probes did (resilience4j: a rate)", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({
        policy: Policy.consecutiveFailures(1),
        openFor: "10 seconds",
        halfOpen: { permits: 3, successesToClose: 3 }
      })
      const c = calls(breaker)
      yield* c.fail
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(yield* tag(breaker), "HalfOpen")
      yield* c.ok
      yield* c.ok
      yield* c.fail // two of three probes succeeded: resilience4j (50% threshold) would close
      assert.strictEqual(yield* tag(breaker), "Open")
    })
  )

  it.scoped("calls beyond the half-open permits are rejected at once, not queued (cockatiel queues them)", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({ policy: Policy.consecutiveFailures(1), openFor: "10 seconds" })
      const c = calls(breaker)
      yield* c.fail
      yield* TestClock.adjust("10 seconds")
      const gate = yield* Deferred.make<void>()
      const probe = yield* Edition.forkChild(c.run(Deferred.await(gate)))
      yield* yieldNow
      const extra = yield* c.ok
      assert.isTrue(Result.isFailure(extra))
      const error = Result.getFailure(extra).pipe((o) => (o._tag === "Some" ? o.value : undefined))
      assert.instanceOf(error, CircuitBreaker.BreakerOpenError)
      assert.strictEqual((error as CircuitBreaker.BreakerOpenError).state, "HalfOpen")
      assert.strictEqual(c.ran(), 2, "the extra call never ran") // the failure, then the probe
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(probe)
      assert.strictEqual(yield* tag(breaker), "Closed")
    })
  )

  it.scoped("a failure rate equal to the threshold opens (>=; cockatiel opens only above it)", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({
        policy: Policy.failureRate({ threshold: 0.5, minimumCalls: 4, window: Policy.countWindow(4) })
      })
      const c = calls(breaker)
      yield* c.ok
      yield* c.fail
      yield* c.ok
      assert.strictEqual(yield* tag(breaker), "Closed", "no verdict below minimumCalls")
      yield* c.fail // 2 of 4 = 0.5
      assert.strictEqual(yield* tag(breaker), "Open")
    })
  )

  it.scoped("an error isFailure rejects counts as a success (resilience4j ignores it)", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({
        policy: Policy.consecutiveFailures(2),
        isFailure: (cause) => !JSON.stringify(cause).includes("not found")
      })
      const c = calls(breaker)
      for (let i = 0; i < 5; i++) {
        yield* c.fail
        yield* c.run(Effect.fail("not found")) // a success: it ends the run of failures
      }
      assert.strictEqual(yield* tag(breaker), "Closed")
      yield* c.fail
      yield* c.fail
      assert.strictEqual(yield* tag(breaker), "Open")
    })
  )

  it.scoped("defects count as failures by default; an interruption never counts", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({ policy: Policy.consecutiveFailures(2) })
      const defect = Effect.exit(CircuitBreaker.withBreaker(Effect.die(new Error("bug")), breaker))
      yield* defect
      yield* Effect.exit(CircuitBreaker.withBreaker(Effect.interrupt, breaker))
      assert.strictEqual(yield* tag(breaker), "Closed")
      yield* defect
      assert.strictEqual(yield* tag(breaker), "Open")
    })
  )

  it.scoped("one reset ends any number of isolates (cockatiel counts isolate handles)", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make()
      yield* breaker.isolate
      yield* breaker.isolate
      assert.strictEqual(yield* tag(breaker), "Isolated")
      yield* breaker.reset
      assert.strictEqual(yield* tag(breaker), "Closed")
      assert.isTrue(Result.isSuccess(yield* calls(breaker).ok))
    })
  )

  it.scoped("the window starts empty after every transition: failures before it do not count after", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({
        policy: Policy.failureRate({ threshold: 0.5, minimumCalls: 4, window: Policy.countWindow(10) }),
        openFor: "10 seconds"
      })
      const c = calls(breaker)
      for (let i = 0; i < 4; i++) yield* c.fail
      assert.strictEqual(yield* tag(breaker), "Open")
      yield* TestClock.adjust("10 seconds")
      yield* c.ok // the probe closes it
      assert.strictEqual(yield* tag(breaker), "Closed")
      // Had the four failures stayed in the window, three more calls would make 7 of 8 failures.
      yield* c.fail
      yield* c.fail
      yield* c.ok
      assert.strictEqual(yield* tag(breaker), "Closed", "three calls are below minimumCalls in a new window")
      yield* c.fail // 3 of 4
      assert.strictEqual(yield* tag(breaker), "Open")
    })
  )
})
