import * as Edition from "@circuitry/core/Edition"
import { BreakerRegistry, BreakerStore, CircuitBreaker, Policy } from "@circuitry/breaker"
import { assert, describe, it, result, Result, TestClock, yieldNow } from "@circuitry/testkit"
import { Cause, Deferred, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { call, fail, rejectedWith, succeed, tagOf } from "./utils.js"

// Issue 22, item 5: a breaker with a shared store, used after the scope it was made in closed,
// decides locally (as a breaker without a store does): it never interrupts its caller.

/** A breaker on the memory store, made in a scope of its own that the test closes. */
const closedScopeBreaker = (options: CircuitBreaker.Options) =>
  Effect.gen(function* () {
    const ctx = yield* Layer.build(BreakerStore.layerMemory)
    const scope = yield* Scope.make()
    const breaker = yield* CircuitBreaker.make(options).pipe(
      Effect.provide(ctx),
      Effect.provideService(Scope.Scope, scope)
    )
    return { breaker, close: Scope.close(scope, Exit.void), store: ctx }
  })

const options: CircuitBreaker.Options = {
  name: "x",
  policy: Policy.consecutiveFailures(1),
  openFor: "1 second"
}

describe("a shared-store breaker used after its scope closed", () => {
  it.scoped("answers every half-open call: the probe runs and closes the circuit, never interrupted", () =>
    Effect.gen(function* () {
      const { breaker, close } = yield* closedScopeBreaker(options)
      yield* close
      yield* result(CircuitBreaker.withBreaker(Effect.fail("boom"), breaker))
      yield* TestClock.adjust("1 second")
      const exit = yield* Effect.exit(CircuitBreaker.withBreaker(Effect.succeed("probe"), breaker))
      assert.isTrue(Exit.isSuccess(exit), Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "")
      assert.deepStrictEqual(exit, Exit.succeed("probe"))
      assert.strictEqual(yield* tagOf(breaker), "Closed")
      // and every later call too
      for (let i = 0; i < 3; i++) assert.deepStrictEqual<unknown>(yield* call(breaker, succeed), Result.succeed("ok"))
    })
  )

  it.scoped("keeps counting failures and opening, and its probes reopen and close it", () =>
    Effect.gen(function* () {
      const { breaker, close } = yield* closedScopeBreaker({ ...options, policy: Policy.consecutiveFailures(2) })
      yield* close
      // counted: one failure does not open it, two do
      assert.deepStrictEqual<unknown>(yield* call(breaker, fail), Result.fail("boom"))
      assert.strictEqual(yield* tagOf(breaker), "Closed")
      assert.deepStrictEqual<unknown>(yield* call(breaker, fail), Result.fail("boom"))
      assert.strictEqual(yield* tagOf(breaker), "Open")
      assert.strictEqual(rejectedWith(yield* call(breaker, succeed)).state, "Open")
      // a failed probe reopens it
      yield* TestClock.adjust("1 second")
      const failed = yield* Effect.exit(CircuitBreaker.withBreaker(fail, breaker))
      assert.deepStrictEqual(failed, Exit.fail("boom"))
      assert.strictEqual(yield* tagOf(breaker), "Open")
      // a successful one closes it, and failures count again from there
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual<unknown>(yield* call(breaker, succeed), Result.succeed("ok"))
      assert.strictEqual(yield* tagOf(breaker), "Closed")
      yield* call(breaker, fail)
      yield* call(breaker, fail)
      assert.strictEqual(yield* tagOf(breaker), "Open")
      const snapshot = yield* breaker.snapshot
      // it no longer speaks for the store: the snapshot says so
      assert.deepStrictEqual(snapshot.store, { connected: false })
    })
  )

  it.scoped("a probe waiting for the fleet's lease when the scope closes is not interrupted: it probes alone", () =>
    Effect.gen(function* () {
      const memory = yield* BreakerStore.makeMemory
      // a store whose lease requests wait until the test lets them go
      const gate = yield* Deferred.make<void>()
      const held = BreakerStore.BreakerStore.of({
        connect: (name) =>
          Effect.map(memory.connect(name), (circuit) => ({
            ...circuit,
            probes: {
              ...circuit.probes!,
              acquire: (lease: Parameters<BreakerStore.ProbeLeases["acquire"]>[0]) =>
                Effect.andThen(Deferred.await(gate), circuit.probes!.acquire(lease))
            }
          }))
      })
      const scope = yield* Scope.make()
      const breaker = yield* CircuitBreaker.make(options).pipe(
        Effect.provideService(BreakerStore.BreakerStore, held),
        Effect.provideService(Scope.Scope, scope)
      )
      yield* call(breaker, fail)
      yield* TestClock.adjust("1 second")
      const probe = yield* Edition.forkChild(CircuitBreaker.withBreaker(succeed, breaker))
      yield* yieldNow
      yield* Scope.close(scope, Exit.void)
      const exit = yield* Fiber.await(probe)
      assert.deepStrictEqual(exit, Exit.succeed("ok"))
      assert.strictEqual(yield* tagOf(breaker), "Closed")
    })
  )

  it.scoped("a breaker made in a scope already closed decides locally from the start", () =>
    Effect.gen(function* () {
      const ctx = yield* Layer.build(BreakerStore.layerMemory)
      const scope = yield* Scope.make()
      yield* Scope.close(scope, Exit.void)
      const breaker = yield* CircuitBreaker.make(options).pipe(
        Effect.provide(ctx),
        Effect.provideService(Scope.Scope, scope)
      )
      yield* call(breaker, fail)
      assert.strictEqual(yield* tagOf(breaker), "Open")
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual<unknown>(
        yield* Effect.exit(CircuitBreaker.withBreaker(succeed, breaker)),
        Exit.succeed("ok")
      )
      assert.strictEqual(yield* tagOf(breaker), "Closed")
    })
  )

  it.scoped("a breaker a shared registry evicted, still held by a caller, answers its half-open calls", () =>
    Effect.gen(function* () {
      const registry = yield* BreakerRegistry.BreakerRegistry
      const a = yield* registry.get("a")
      yield* call(a, fail)
      assert.strictEqual(yield* tagOf(a), "Open")
      // "b" evicts "a" (maxBreakers 1): a's scope closes, and its caller still holds it
      yield* registry.get("b")
      assert.deepStrictEqual(yield* registry.names, ["b"])
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual<unknown>(yield* Effect.exit(CircuitBreaker.withBreaker(succeed, a)), Exit.succeed("ok"))
      assert.strictEqual(yield* tagOf(a), "Closed")
    }).pipe(
      Effect.provide(
        BreakerRegistry.layer({
          defaults: { policy: Policy.consecutiveFailures(1), openFor: "1 second" },
          maxBreakers: 1
        })
      ),
      Effect.provide(BreakerStore.layerMemory)
    )
  )
})
