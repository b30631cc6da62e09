/**
 * The CircuitBreaker contract (API.md), one describe per state and concern: Closed, Open, HalfOpen,
 * openFor, transitions, manual control, repair traffic, withBreaker. Over 350 lines because it is the
 * contract's one place; the machine's own cases are in machine.test.ts.
 */
import * as Edition from "@circuitry/core/Edition"
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { assert, describe, intersectSchedules, it, result, Result, TestClock, yieldNow } from "@circuitry/testkit"
import { Clock, Deferred, Effect, Exit, Fiber, Layer, Option, Schedule, Stream } from "effect"
import { call, dependency, drain, fail, rejectedWith, succeed, tagOf } from "./utils.js"

describe("CircuitBreaker", () => {
  describe("Closed", () => {
    it.scoped("runs the effect and passes its result through", () =>
      Effect.gen(function* () {
        const breaker = yield* CircuitBreaker.make()
        assert.deepStrictEqual<unknown>(yield* call(breaker, succeed), Result.succeed("ok"))
        assert.deepStrictEqual<unknown>(yield* call(breaker, fail), Result.fail("boom"))
        assert.strictEqual(yield* tagOf(breaker), "Closed")
      })
    )

    it.scoped("opens when the policy trips, for openFor", () =>
      Effect.gen(function* () {
        const breaker = yield* CircuitBreaker.make({ policy: Policy.consecutiveFailures(3), openFor: "10 seconds" })
        yield* call(breaker, fail)
        yield* call(breaker, fail)
        assert.strictEqual(yield* tagOf(breaker), "Closed")
        yield* TestClock.adjust("1 second")
        yield* call(breaker, fail)
        const state = yield* breaker.state
        assert.deepStrictEqual(state, CircuitBreaker.State.Open({ until: 11_000 }))
      })
    )

    it.scoped("a success resets the consecutive count", () =>
      Effect.gen(function* () {
        const breaker = yield* CircuitBreaker.make({ policy: Policy.consecutiveFailures(3) })
        for (let i = 0; i < 10; i++) {
          yield* call(breaker, fail)
          yield* call(breaker, fail)
          yield* call(breaker, succeed)
        }
        assert.strictEqual(yield* tagOf(breaker), "Closed")
        yield* call(breaker, fail)
        yield* call(breaker, fail)
        yield* call(breaker, fail)
        assert.strictEqual(yield* tagOf(breaker), "Open")
      })
    )

    it.scoped("defects count as failures; interruptions never count", () =>
      Effect.gen(function* () {
        const breaker = yield* CircuitBreaker.make({ policy: Policy.consecutiveFailures(2) })
        for (let i = 0; i < 5; i++) {
          const fiber = yield* Edition.forkChild(CircuitBreaker.withBreaker(Effect.never, breaker))
          yield* yieldNow
          yield* Fiber.interrupt(fiber)
          // An effect that is interrupted from within (not by its caller) is not a failure either.
          yield* Effect.exit(CircuitBreaker.withBreaker(Effect.interrupt, breaker))
        }
        assert.strictEqual(yield* tagOf(breaker), "Closed")
        yield* Effect.exit(CircuitBreaker.withBreaker(Effect.die("bug"), breaker))
        yield* Effect.exit(CircuitBreaker.withBreaker(Effect.die("bug"), breaker))
        assert.strictEqual(yield* tagOf(breaker), "Open")
      })
    )

    it.scoped("isFailure decides what counts; a failure that does not count is a success", () =>
      Effect.gen(function* () {
        const breaker = yield* CircuitBreaker.make({
          policy: Policy.consecutiveFailures(2),
          isFailure: (cause) => Edition.findError(cause).pipe((o) => o._tag === "Some" && o.value !== "not-found")
        })
        yield* call(breaker, Effect.fail("timeout"))
        yield* call(breaker, Effect.fail("not-found")) // resets the count like a success
        yield* call(breaker, Effect.fail("timeout"))
        assert.strictEqual(yield* tagOf(breaker), "Closed")
        yield* call(breaker, Effect.fail("timeout"))
        assert.strictEqual(yield* tagOf(breaker), "Open")
      })
    )

    it.scoped("outcomes of calls admitted before a transition do not count after it", () =>
      Effect.gen(function* () {
        const breaker = yield* CircuitBreaker.make({ policy: Policy.consecutiveFailures(2), openFor: "1 second" })
        const slowFailure = Effect.sleep("5 seconds").pipe(Effect.andThen(fail))
        const slow = yield* Edition.forkChild(call(breaker, slowFailure))
        yield* yieldNow
        yield* breaker.reset // a transition-free reset still starts a new window
        yield* call(breaker, fail)
        yield* TestClock.adjust("5 seconds")
        yield* Fiber.join(slow)
        // Two failures happened, but the slow one belongs to the window before the reset.
        assert.strictEqual(yield* tagOf(breaker), "Closed")
      })
    )
  })

  describe("Open", () => {
    it.scoped("rejects without running (or evaluating) the effect, with the time left", () =>
      Effect.gen(function* () {
        const breaker = yield* CircuitBreaker.make({
          name: "payments",
          policy: Policy.consecutiveFailures(1),
          openFor: "30 seconds"
        })
        yield* call(breaker, fail)
        yield* TestClock.adjust("12 seconds")
        let evaluated = 0
        const result = yield* call(
          breaker,
          Effect.suspend(() => {
            evaluated++
            return succeed
          })
        )
        const error = rejectedWith(result)
        assert.strictEqual(evaluated, 0)
        assert.strictEqual(error._tag, "BreakerOpenError")
        assert.strictEqual(error.breaker, "payments")
        assert.strictEqual(error.state, "Open")
        assert.strictEqual(error.retryAfterMillis, 18_000)
        assert.include(error.message, "payments")
      })
    )

    it.scoped("turns HalfOpen lazily when the clock passes until, and not before", () =>
      Effect.gen(function* () {
        const breaker = yield* CircuitBreaker.make({ policy: Policy.consecutiveFailures(1), openFor: "10 seconds" })
        yield* call(breaker, fail)
        yield* TestClock.adjust("9999 millis")
        assert.strictEqual(yield* tagOf(breaker), "Open")
        assert.isFalse(yield* breaker.isCallAllowed)
        yield* TestClock.adjust("1 millis")
        assert.strictEqual(yield* tagOf(breaker), "HalfOpen")
        assert.isTrue(yield* breaker.isCallAllowed)
      })
    )
  })

  describe("HalfOpen", () => {
    const opened = (options: CircuitBreaker.Options) =>
      Effect.gen(function* () {
        const breaker = yield* CircuitBreaker.make({
          policy: Policy.consecutiveFailures(1),
          openFor: "10 seconds",
          ...options
        })
        yield* call(breaker, fail)
        yield* TestClock.adjust("10 seconds")
        return breaker
      })

    it.scoped(
      "admits at most `permits` concurrent probes; every other call is refused at once and records nothing",
      () =>
        Effect.gen(function* () {
          const breaker = yield* opened({ halfOpen: { permits: 2 } })
          const gate = yield* Deferred.make<void>()
          const dep = yield* dependency
          const probe = dep.effect.pipe(Effect.tap(() => Deferred.await(gate)))
          const probes = yield* Effect.all([
            Edition.forkChild(call(breaker, probe)),
            Edition.forkChild(call(breaker, probe))
          ])
          yield* yieldNow
          const extra = yield* call(breaker, probe)
          const error = rejectedWith(extra)
          assert.strictEqual(error.state, "HalfOpen")
          assert.strictEqual(error.retryAfterMillis, 0)
          assert.strictEqual(yield* dep.calls, 2)
          assert.isFalse(yield* breaker.isCallAllowed)
          yield* Deferred.succeed(gate, undefined)
          yield* Effect.all([Fiber.join(probes[0]), Fiber.join(probes[1])])
          assert.strictEqual(yield* tagOf(breaker), "Closed")
        })
    )

    it.scoped("a failed probe reopens with the schedule's next delay", () =>
      Effect.gen(function* () {
        const breaker = yield* opened({ openFor: Schedule.exponential("10 seconds") })
        yield* call(breaker, fail) // probe fails at t=10s; the second episode waits 20s
        assert.deepStrictEqual<unknown>(yield* breaker.state, CircuitBreaker.State.Open({ until: 30_000 }))
        yield* TestClock.adjust("20 seconds")
        yield* call(breaker, fail) // third episode waits 40s
        assert.deepStrictEqual<unknown>(yield* breaker.state, CircuitBreaker.State.Open({ until: 70_000 }))
      })
    )

    it.scoped("closes after successesToClose successful probes", () =>
      Effect.gen(function* () {
        const breaker = yield* opened({ halfOpen: { successesToClose: 3 } })
        yield* call(breaker, succeed)
        yield* call(breaker, succeed)
        assert.strictEqual(yield* tagOf(breaker), "HalfOpen")
        yield* call(breaker, succeed)
        assert.strictEqual(yield* tagOf(breaker), "Closed")
      })
    )

    it.scoped("an interrupted probe gives its permit back and counts as nothing", () =>
      Effect.gen(function* () {
        const breaker = yield* opened({})
        const dep = yield* dependency
        const probe = yield* Edition.forkChild(call(breaker, Effect.andThen(dep.effect, Effect.never)))
        yield* yieldNow
        rejectedWith(yield* call(breaker, succeed)) // the permit is taken
        yield* Fiber.interrupt(probe)
        assert.strictEqual(yield* tagOf(breaker), "HalfOpen")
        assert.isTrue(yield* breaker.isCallAllowed)
        assert.deepStrictEqual<unknown>(yield* call(breaker, succeed), Result.succeed("ok"))
        assert.strictEqual(yield* tagOf(breaker), "Closed")
      })
    )

    it.scoped(
      "10,000 concurrent calls at the moment it turns half-open reach the dependency `permits` times",
      () =>
        Effect.gen(function* () {
          for (const permits of [1, 3]) {
            const breaker = yield* opened({ halfOpen: { permits } })
            const dep = yield* dependency
            yield* dep.down
            const slowDep = Effect.sleep("1 second").pipe(Effect.andThen(dep.effect))
            const results = yield* Edition.forkChild(
              Effect.all(
                Array.from({ length: 10_000 }, () => call(breaker, slowDep)),
                { concurrency: "unbounded" }
              )
            )
            yield* TestClock.adjust("1 second")
            const outcomes = yield* Fiber.join(results)
            assert.strictEqual(yield* dep.calls, permits)
            const rejected = outcomes.filter(
              (r) => Option.getOrUndefined(Result.getFailure(r)) instanceof CircuitBreaker.BreakerOpenError
            )
            assert.strictEqual(rejected.length, 10_000 - permits)
            assert.strictEqual(yield* tagOf(breaker), "Open")
          }
        }),
      60_000 // 20,000 fibers: generous on a loaded 2-core machine
    )
  })

  describe("openFor", () => {
    it.scoped("a Schedule restarts when the circuit closes", () =>
      Effect.gen(function* () {
        const breaker = yield* CircuitBreaker.make({
          policy: Policy.consecutiveFailures(1),
          openFor: Schedule.exponential("1 second")
        })
        yield* call(breaker, fail) // 1s
        yield* TestClock.adjust("1 second")
        yield* call(breaker, fail) // 2s
        yield* TestClock.adjust("2 seconds")
        yield* call(breaker, succeed) // closes
        assert.strictEqual(yield* tagOf(breaker), "Closed")
        const now = yield* Clock.currentTimeMillis
        yield* call(breaker, fail)
        assert.deepStrictEqual<unknown>(yield* breaker.state, CircuitBreaker.State.Open({ until: now + 1000 }))
      })
    )

    it.scoped("a schedule that is done keeps its last delay", () =>
      Effect.gen(function* () {
        const breaker = yield* CircuitBreaker.make({
          policy: Policy.consecutiveFailures(1),
          openFor: intersectSchedules(Schedule.exponential("1 second"), Schedule.recurs(2))
        })
        const waits: Array<number> = []
        yield* call(breaker, fail)
        for (let i = 0; i < 4; i++) {
          const state = yield* breaker.state
          const now = yield* Clock.currentTimeMillis
          if (state._tag !== "Open") return assert.fail(`expected Open, got ${state._tag}`)
          waits.push(state.until - now)
          yield* TestClock.adjust(state.until - now)
          yield* call(breaker, fail)
        }
        assert.deepStrictEqual(waits, [1000, 2000, 2000, 2000])
      })
    )
  })

  describe("transitions", () => {
    it.scoped("changes and subscribe carry each transition once, in order", () =>
      Effect.gen(function* () {
        const breaker = yield* CircuitBreaker.make({ policy: Policy.consecutiveFailures(1), openFor: "1 second" })
        const queue = yield* breaker.subscribe
        const fromStream = yield* Edition.forkChild(Stream.runCollect(Stream.take(breaker.changes, 7)))
        // Let the stream's fiber start and subscribe before anything happens.
        for (let i = 0; i < 20; i++) yield* yieldNow
        yield* call(breaker, fail)
        yield* TestClock.adjust("1 second")
        yield* call(breaker, fail)
        yield* TestClock.adjust("1 second")
        yield* call(breaker, succeed)
        yield* breaker.isolate
        yield* breaker.reset
        const expected = [
          "Closed->Open@0",
          "Open->HalfOpen@1000",
          "HalfOpen->Open@1000",
          "Open->HalfOpen@2000",
          "HalfOpen->Closed@2000",
          "Closed->Isolated@2000",
          "Isolated->Closed@2000"
        ]
        const show = (t: CircuitBreaker.Transition) => `${t.from}->${t.to}@${t.at}`
        assert.deepStrictEqual((yield* drain(queue)).map(show), expected)
        assert.deepStrictEqual(Array.from(yield* Fiber.join(fromStream), show), expected)
        assert.deepStrictEqual<unknown>(yield* drain(queue), [])
      })
    )

    it.scoped("Closed is never announced for a circuit that was never open", () =>
      Effect.gen(function* () {
        const breaker = yield* CircuitBreaker.make({ policy: Policy.consecutiveFailures(5) })
        const queue = yield* breaker.subscribe
        yield* call(breaker, fail)
        yield* call(breaker, succeed)
        yield* breaker.reset
        assert.deepStrictEqual<unknown>(yield* drain(queue), [])
      })
    )
  })

  describe("manual control", () => {
    it.scoped("isolate rejects everything, repair traffic too, until reset", () =>
      Effect.gen(function* () {
        const breaker = yield* CircuitBreaker.make()
        yield* breaker.isolate
        const error = rejectedWith(yield* call(breaker, succeed))
        assert.strictEqual(error.state, "Isolated")
        assert.strictEqual(error.retryAfterMillis, 0)
        rejectedWith(yield* call(breaker, CircuitBreaker.repairing(succeed)))
        yield* TestClock.adjust("1 day")
        assert.strictEqual(yield* tagOf(breaker), "Isolated")
        yield* breaker.reset
        assert.deepStrictEqual<unknown>(yield* call(breaker, succeed), Result.succeed("ok"))
      })
    )

    it.scoped("reset clears the counts and restarts the schedule", () =>
      Effect.gen(function* () {
        const breaker = yield* CircuitBreaker.make({
          policy: Policy.consecutiveFailures(2),
          openFor: Schedule.exponential("1 second")
        })
        yield* call(breaker, fail)
        yield* call(breaker, fail) // open 1s
        yield* TestClock.adjust("1 second")
        yield* call(breaker, fail) // open 2s
        yield* breaker.reset
        yield* call(breaker, fail)
        assert.strictEqual(yield* tagOf(breaker), "Closed") // the count was cleared
        yield* call(breaker, fail)
        const now = yield* Clock.currentTimeMillis
        assert.deepStrictEqual<unknown>(yield* breaker.state, CircuitBreaker.State.Open({ until: now + 1000 }))
      })
    )

    it.scoped("extendOpen keeps an open circuit open longer, and does nothing to a closed one", () =>
      Effect.gen(function* () {
        const breaker = yield* CircuitBreaker.make({ policy: Policy.consecutiveFailures(1), openFor: "1 second" })
        yield* breaker.extendOpen(60_000)
        assert.strictEqual(yield* tagOf(breaker), "Closed")
        yield* call(breaker, fail)
        yield* breaker.extendOpen(60_000)
        yield* breaker.extendOpen(30_000) // never shortens
        assert.deepStrictEqual<unknown>(yield* breaker.state, CircuitBreaker.State.Open({ until: 60_000 }))
      })
    )

    it.scoped("isolateBy and resetBy name who asked in the transition; isolate and reset name no one", () =>
      Effect.gen(function* () {
        const breaker = yield* CircuitBreaker.make({ policy: Policy.consecutiveFailures(1), openFor: "1 second" })
        const changes = yield* breaker.subscribe
        yield* breaker.isolateBy("ops@example")
        rejectedWith(yield* call(breaker, succeed))
        yield* breaker.resetBy("ops@example")
        yield* breaker.isolate
        yield* breaker.reset
        assert.deepStrictEqual(yield* drain(changes), [
          { from: "Closed", to: "Isolated", at: 0, by: "ops@example" },
          { from: "Isolated", to: "Closed", at: 0, by: "ops@example" },
          { from: "Closed", to: "Isolated", at: 0 },
          { from: "Isolated", to: "Closed", at: 0 }
        ])
        // an extension with a name is no transition either
        yield* call(breaker, fail)
        yield* breaker.extendOpen(60_000, { by: "ops@example" })
        assert.deepStrictEqual(yield* drain(changes), [{ from: "Closed", to: "Open", at: 0 }])
        assert.deepStrictEqual<unknown>(yield* breaker.state, CircuitBreaker.State.Open({ until: 60_000 }))
      })
    )

    it.scoped("isCallAllowed takes no permit and records nothing", () =>
      Effect.gen(function* () {
        const breaker = yield* CircuitBreaker.make({ policy: Policy.consecutiveFailures(1), openFor: "1 second" })
        for (let i = 0; i < 3; i++) assert.isTrue(yield* breaker.isCallAllowed)
        assert.strictEqual(yield* tagOf(breaker), "Closed")
        yield* call(breaker, fail)
        yield* TestClock.adjust("1 second")
        for (let i = 0; i < 3; i++) assert.isTrue(yield* breaker.isCallAllowed)
        const snapshot = yield* breaker.snapshot
        assert.strictEqual(snapshot.probes, 0)
        assert.deepStrictEqual<unknown>(yield* call(breaker, succeed), Result.succeed("ok"))
      })
    )
  })

  describe("repair traffic", () => {
    const openBreaker = Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({ policy: Policy.consecutiveFailures(1), openFor: "30 seconds" })
      yield* call(breaker, fail)
      assert.strictEqual(yield* tagOf(breaker), "Open")
      return breaker
    })

    it.scoped("runs while Open, unrecorded; plain calls are still rejected", () =>
      Effect.gen(function* () {
        const breaker = yield* openBreaker
        const dep = yield* dependency
        for (let i = 0; i < 5; i++) {
          assert.deepStrictEqual<unknown>(
            yield* call(breaker, CircuitBreaker.repairing(dep.effect)),
            Result.succeed("ok")
          )
        }
        assert.strictEqual(yield* dep.calls, 5)
        // Marking the fiber works too: everything run inside `repairing` is repair traffic.
        const outside = yield* result(CircuitBreaker.repairing(CircuitBreaker.withBreaker(dep.effect, breaker)))
        assert.deepStrictEqual<unknown>(outside, Result.succeed("ok"))
        assert.strictEqual(yield* dep.calls, 6)
        rejectedWith(yield* call(breaker, dep.effect))
        assert.strictEqual(yield* dep.calls, 6)
        // Successful repairs did not close the circuit: the probes decide that.
        assert.strictEqual(yield* tagOf(breaker), "Open")
      })
    )

    it.scoped("one failed repair stops the rest of the episode; leaving Open clears it", () =>
      Effect.gen(function* () {
        const breaker = yield* openBreaker
        const dep = yield* dependency
        yield* dep.down
        const repair = CircuitBreaker.withBreaker(CircuitBreaker.repairing(dep.effect), breaker)
        for (let i = 0; i < 5; i++) yield* result(repair)
        assert.strictEqual(yield* dep.calls, 1)
        assert.isFalse(yield* CircuitBreaker.repairing(breaker.isCallAllowed))
        // The next episode tries again.
        yield* TestClock.adjust("30 seconds")
        yield* call(breaker, fail) // the probe fails: a new open episode
        assert.strictEqual(yield* tagOf(breaker), "Open")
        yield* result(repair)
        assert.strictEqual(yield* dep.calls, 2)
      })
    )

    it.scoped("until one repair succeeds, repairs run one at a time: a hung store costs one call per episode", () =>
      Effect.gen(function* () {
        const breaker = yield* openBreaker
        const dep = yield* dependency
        const hung = dep.effect.pipe(Effect.tap(() => Effect.sleep("1 second")))
        const first = yield* Edition.forkChild(call(breaker, CircuitBreaker.repairing(hung)))
        yield* yieldNow
        for (let i = 0; i < 5; i++) rejectedWith(yield* call(breaker, CircuitBreaker.repairing(hung)))
        assert.strictEqual(yield* dep.calls, 1)
        yield* TestClock.adjust("1 second")
        assert.deepStrictEqual<unknown>(yield* Fiber.join(first), Result.succeed("ok"))
        // One repair succeeded: now they run side by side.
        const many = yield* Edition.forkChild(
          Effect.all(
            Array.from({ length: 5 }, () => call(breaker, CircuitBreaker.repairing(hung))),
            {
              concurrency: "unbounded"
            }
          )
        )
        for (let i = 0; i < 20; i++) yield* yieldNow
        assert.strictEqual(yield* dep.calls, 6)
        yield* TestClock.adjust("1 second")
        yield* Fiber.join(many)
      })
    )

    it.scoped("behaves like any call while Closed: a failing repair can open the circuit", () =>
      Effect.gen(function* () {
        const breaker = yield* CircuitBreaker.make({ policy: Policy.consecutiveFailures(2) })
        yield* call(breaker, CircuitBreaker.repairing(fail))
        yield* call(breaker, CircuitBreaker.repairing(fail))
        assert.strictEqual(yield* tagOf(breaker), "Open")
      })
    )

    it.scoped("is a probe like any call while HalfOpen", () =>
      Effect.gen(function* () {
        const breaker = yield* openBreaker
        yield* TestClock.adjust("30 seconds")
        yield* call(breaker, CircuitBreaker.repairing(succeed))
        assert.strictEqual(yield* tagOf(breaker), "Closed")
      })
    )
  })

  describe("withBreaker", () => {
    class Payments extends Edition.KeyClass<Payments, CircuitBreaker.CircuitBreaker>()("Payments") {}

    it.effect("works data-first and data-last, with a value or a Tag provided by layer", () =>
      Effect.gen(function* () {
        const breaker = yield* Payments
        assert.deepStrictEqual<unknown>(
          yield* result(CircuitBreaker.withBreaker(succeed, Payments)),
          Result.succeed("ok")
        )
        assert.deepStrictEqual<unknown>(
          yield* result(succeed.pipe(CircuitBreaker.withBreaker(Payments))),
          Result.succeed("ok")
        )
        assert.deepStrictEqual<unknown>(
          yield* result(succeed.pipe(CircuitBreaker.withBreaker(breaker))),
          Result.succeed("ok")
        )
        yield* result(fail.pipe(CircuitBreaker.withBreaker(Payments)))
        assert.strictEqual(breaker.name, "payments")
        assert.strictEqual(yield* tagOf(breaker), "Open")
      }).pipe(
        Effect.provide(CircuitBreaker.layer(Payments, { name: "payments", policy: Policy.consecutiveFailures(1) }))
      )
    )

    it.scoped("a breaker is recognised by its TypeId; a tag, a copy or a look-alike is not", () =>
      Effect.gen(function* () {
        const breaker = yield* CircuitBreaker.make({ name: "typed" })
        assert.isTrue(CircuitBreaker.isCircuitBreaker(breaker))
        assert.strictEqual(breaker[CircuitBreaker.TypeId], CircuitBreaker.TypeId)
        assert.isFalse(CircuitBreaker.isCircuitBreaker(Payments))
        assert.isFalse(CircuitBreaker.isCircuitBreaker({ name: "typed", execute: breaker.execute }))
        assert.isFalse(CircuitBreaker.isCircuitBreaker(null))
        assert.isFalse(CircuitBreaker.isCircuitBreaker("typed"))
      })
    )

    it.effect("layer fails with InvalidBreakerOptions for bad options", () =>
      Effect.gen(function* () {
        const exit = yield* Effect.exit(
          Layer.build(CircuitBreaker.layer(Payments, { halfOpen: { permits: 0 } })).pipe(Effect.scoped)
        )
        assert.isTrue(Exit.isFailure(exit))
        if (Exit.isFailure(exit)) {
          const error = Edition.findError(exit.cause)
          assert.strictEqual(error._tag === "Some" ? error.value._tag : "none", "InvalidBreakerOptions")
        }
      })
    )
  })
})
