/**
 * A store offers the verdict channel and what its backend can of the rest (`SharedCircuit`): what a
 * breaker does without each optional capability. Without probe leases, half-open probes are limited
 * per instance; without shared counts, counts stay local; without fleet membership, a quorum is
 * refused with `InvalidBreakerOptions` naming the missing capability (a registry, whose `get`
 * cannot fail, dies with it).
 */
import * as Edition from "@circuitry/core/Edition"
import { BreakerRegistry, BreakerStore, CircuitBreaker, Policy } from "@circuitry/breaker"
import { assert, describe, it, result, Result, TestClock, yieldNow } from "@circuitry/testkit"
import { Cause, Deferred, Effect, Exit, Fiber, Option } from "effect"
import { call, dependency, fail, offering, rejectedWith, succeed, tagOf } from "./utils.js"

const settle = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* yieldNow
})

const options: CircuitBreaker.Options = {
  name: "narrow",
  policy: Policy.consecutiveFailures(2),
  openFor: "10 seconds"
}

/** Two members of one circuit on `store`, opened by the first, and half-open now. */
const halfOpenPair = (store: BreakerStore.BreakerStoreService) =>
  Effect.gen(function* () {
    const make = Effect.provideService(CircuitBreaker.make(options), BreakerStore.BreakerStore, store)
    const a = yield* make
    const b = yield* make
    yield* call(a, fail)
    yield* call(a, fail)
    yield* settle
    assert.deepStrictEqual([yield* tagOf(a), yield* tagOf(b)], ["Open", "Open"])
    yield* TestClock.adjust("10 seconds")
    return [a, b] as const
  })

describe("a store without some capabilities", () => {
  it.scoped("only the verdict channel: verdicts are still shared, open and closed", () =>
    Effect.gen(function* () {
      const memory = yield* BreakerStore.makeMemory
      const [a, b] = yield* halfOpenPair(offering(memory, []))
      assert.deepStrictEqual<unknown>(yield* call(b, succeed), Result.succeed("ok"))
      yield* settle
      assert.deepStrictEqual([yield* tagOf(a), yield* tagOf(b)], ["Closed", "Closed"])
    })
  )

  it.scoped("no probe leases: half-open probes are limited per instance, not for the fleet", () =>
    Effect.gen(function* () {
      const memory = yield* BreakerStore.makeMemory
      const members = yield* halfOpenPair(offering(memory, ["counts", "fleet"]))
      const dep = yield* dependency
      const gate = yield* Deferred.make<void>()
      const probe = dep.effect.pipe(Effect.tap(() => Deferred.await(gate)))
      const probes = yield* Effect.forEach(members, (m) => Edition.forkChild(call(m, probe)))
      yield* settle
      // one probe per member (halfOpen.permits: 1 each): with the fleet's lease there would be one in all
      assert.strictEqual(yield* dep.calls, 2)
      // and each member still holds to its own permit
      for (const m of members) rejectedWith(yield* call(m, succeed))
      yield* Deferred.succeed(gate, undefined)
      for (const fiber of probes) assert.isTrue(Result.isSuccess(yield* Fiber.join(fiber)))
      // the lease the store could have given was never asked for: the full store has it free
      const circuit = yield* memory.connect(options.name!)
      assert.isTrue(Option.isSome(yield* circuit.probes!.acquire({ permits: 1, leaseMillis: 60_000, now: 10_000 })))
    })
  )

  it.scoped("the same pair with probe leases: one probe for the fleet", () =>
    Effect.gen(function* () {
      const memory = yield* BreakerStore.makeMemory
      const members = yield* halfOpenPair(offering(memory, ["probes"]))
      const dep = yield* dependency
      const gate = yield* Deferred.make<void>()
      const probe = dep.effect.pipe(Effect.tap(() => Deferred.await(gate)))
      const probes = yield* Effect.forEach(members, (m) => Edition.forkChild(call(m, probe)))
      yield* settle
      assert.strictEqual(yield* dep.calls, 1)
      yield* Deferred.succeed(gate, undefined)
      const outcomes = yield* Effect.forEach(probes, Fiber.join)
      assert.strictEqual(outcomes.filter(Result.isSuccess).length, 1)
    })
  )

  it.scoped("no shared counts: failures and successes stay local; nothing is sent", () =>
    Effect.gen(function* () {
      const memory = yield* BreakerStore.makeMemory
      const breaker = yield* CircuitBreaker.make({ name: "counted", policy: Policy.consecutiveFailures(100) }).pipe(
        Effect.provideService(BreakerStore.BreakerStore, offering(memory, ["probes", "fleet"]))
      )
      for (let i = 0; i < 7; i++) yield* call(breaker, fail)
      yield* TestClock.adjust("10 seconds") // past every batch the outbox would wait for
      yield* settle
      // the breaker counts them itself...
      assert.strictEqual((yield* breaker.snapshot).counts.consecutiveFailures, 7)
      // ...and the store, which could have kept them, was told nothing
      const circuit = yield* memory.connect("counted")
      assert.deepStrictEqual(yield* circuit.counts!.read, { consecutiveFailures: 0, lastFailureAt: undefined })
      // a success, and a trip's verdict, go on as before: the verdict is shared
      yield* call(breaker, succeed)
      yield* settle
      assert.deepStrictEqual(yield* circuit.counts!.read, { consecutiveFailures: 0, lastFailureAt: undefined })
      yield* breaker.isolateBy("ops")
      yield* settle
      assert.deepStrictEqual(
        Option.map(yield* circuit.verdict.load, (v) => [v.state, v.by]),
        Option.some(["Isolated", "ops"])
      )
    })
  )

  it.scoped("no fleet membership: a quorum fails CircuitBreaker.make with InvalidBreakerOptions naming it", () =>
    Effect.gen(function* () {
      const memory = yield* BreakerStore.makeMemory
      const narrow = offering(memory, ["counts", "probes"])
      const made = yield* result(
        CircuitBreaker.make({ ...options, sharing: { quorum: 2 } }).pipe(
          Effect.provideService(BreakerStore.BreakerStore, narrow)
        )
      )
      const error = Option.getOrThrow(Result.getFailure(made))
      assert.strictEqual(error._tag, "InvalidBreakerOptions")
      assert.include(error.message, "sharing.quorum")
      assert.include(error.message, "fleet membership (SharedCircuit.fleet")
      assert.include(error.message, `breaker "${options.name}"`)
      // a fraction needs it as much as a count
      const fraction = yield* result(
        CircuitBreaker.make({ ...options, sharing: { quorum: { fraction: 0.5 } } }).pipe(
          Effect.provideService(BreakerStore.BreakerStore, narrow)
        )
      )
      assert.isTrue(Result.isFailure(fraction))
      // without a quorum (or a quorum of 1, which is none) the same store makes breakers as before
      for (const sharing of [undefined, { quorum: 1 }]) {
        const fine = yield* result(
          CircuitBreaker.make({ ...options, ...(sharing === undefined ? {} : { sharing }) }).pipe(
            Effect.provideService(BreakerStore.BreakerStore, narrow)
          )
        )
        assert.isTrue(Result.isSuccess(fine))
      }
      // and the full store makes the quorum breaker
      const full = yield* result(
        CircuitBreaker.make({ ...options, sharing: { quorum: 2 } }).pipe(
          Effect.provideService(BreakerStore.BreakerStore, memory)
        )
      )
      assert.isTrue(Result.isSuccess(full))
    })
  )

  it.scoped("no fleet membership: a registry's get with a quorum dies with that InvalidBreakerOptions", () =>
    Effect.gen(function* () {
      const memory = yield* BreakerStore.makeMemory
      const exit = yield* Effect.exit(
        Effect.flatMap(BreakerRegistry.BreakerRegistry, (registry) => registry.get("tenant")).pipe(
          Effect.provide(BreakerRegistry.layer({ defaults: { sharing: { quorum: 3 } } })),
          Effect.provideService(BreakerStore.BreakerStore, offering(memory, ["counts", "probes"]))
        )
      )
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        const defect = Cause.squash(exit.cause) as { _tag: string; message: string }
        assert.strictEqual(defect._tag, "InvalidBreakerOptions")
        assert.include(defect.message, "SharedCircuit.fleet")
      }
    })
  )
})
