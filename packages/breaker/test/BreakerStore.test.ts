import * as Edition from "@circuitry/core/Edition"
import { BreakerRegistry, BreakerStore, BreakerStoreKit, CircuitBreaker, Policy } from "@circuitry/breaker"
import { assert, describe, it, Result, TestClock, yieldNow } from "@circuitry/testkit"
import { Clock, Deferred, Effect, Fiber, Option, Stream } from "effect"
import { call, dependency, fail, rejectedWith, succeed, tagOf } from "./utils.js"

/** Lets the breakers' background fibers (store followers and writers) run. */
const settle = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* yieldNow
})

const options: CircuitBreaker.Options = {
  name: "shared",
  policy: Policy.consecutiveFailures(2),
  openFor: "10 seconds"
}

describe("BreakerStore (memory)", () => {
  it.scoped("breakers of the same name share one verdict", () =>
    Effect.gen(function* () {
      const a = yield* CircuitBreaker.make(options)
      const b = yield* CircuitBreaker.make(options)
      const other = yield* CircuitBreaker.make({ ...options, name: "other" })
      yield* call(a, fail)
      yield* call(a, fail)
      yield* settle
      assert.deepStrictEqual(yield* b.state, CircuitBreaker.State.Open({ until: 10_000 }))
      assert.strictEqual(yield* tagOf(other), "Closed")
      // A breaker made later adopts the stored verdict.
      const late = yield* CircuitBreaker.make(options)
      assert.deepStrictEqual(yield* late.state, CircuitBreaker.State.Open({ until: 10_000 }))
      // Closing is shared too.
      yield* TestClock.adjust("10 seconds")
      yield* call(b, succeed)
      yield* settle
      assert.strictEqual(yield* tagOf(a), "Closed")
      assert.strictEqual(yield* tagOf(late), "Closed")
    }).pipe(Effect.provide(BreakerStore.layerMemory))
  )

  it.scoped("one half-open probe for all members", () =>
    Effect.gen(function* () {
      const members = yield* Effect.all([1, 2, 3].map(() => CircuitBreaker.make(options)))
      yield* call(members[0]!, fail)
      yield* call(members[0]!, fail)
      yield* settle
      yield* TestClock.adjust("10 seconds")
      const dep = yield* dependency
      const gate = yield* Deferred.make<void>()
      const probe = dep.effect.pipe(Effect.tap(() => Deferred.await(gate)))
      // Forked one after another from this fiber: forked from the workers of a concurrent forEach,
      // Effect 4 interrupts them as each worker ends (Effect 3 hands them to the parent).
      const calls = yield* Effect.forEach(
        members.flatMap((m) => [m, m, m]),
        (m) => Edition.forkChild(call(m, probe))
      )
      yield* settle
      assert.strictEqual(yield* dep.calls, 1)
      yield* Deferred.succeed(gate, undefined)
      const results = yield* Effect.forEach(calls, Fiber.join)
      assert.strictEqual(results.filter(Result.isSuccess).length, 1)
      yield* settle
      for (const m of members) assert.strictEqual(yield* tagOf(m), "Closed")
    }).pipe(Effect.provide(BreakerStore.layerMemory))
  )

  it.scoped("a probe that outlives its lease lets another member probe", () =>
    Effect.gen(function* () {
      const leased: CircuitBreaker.Options = { ...options, halfOpen: { probeLease: "5 seconds" } }
      const a = yield* CircuitBreaker.make(leased)
      const b = yield* CircuitBreaker.make(leased)
      yield* call(a, fail)
      yield* call(a, fail)
      yield* settle
      yield* TestClock.adjust("10 seconds")
      const hung = yield* Edition.forkChild(call(a, Effect.never))
      yield* settle
      rejectedWith(yield* call(b, succeed)) // a holds the fleet's lease
      yield* TestClock.adjust("5 seconds")
      assert.deepStrictEqual<unknown>(yield* call(b, succeed), Result.succeed("ok"))
      yield* Fiber.interrupt(hung)
    }).pipe(Effect.provide(BreakerStore.layerMemory))
  )

  it.scoped("failures are reported in the background, summed, and a success starts the count again", () =>
    Effect.gen(function* () {
      const store = yield* BreakerStore.BreakerStore
      const circuit = yield* store.connect("counted")
      const breaker = yield* CircuitBreaker.make({ name: "counted", policy: Policy.consecutiveFailures(100) })
      for (let i = 0; i < 7; i++) yield* call(breaker, fail)
      yield* settle
      assert.deepStrictEqual(yield* circuit.counts!.read, { consecutiveFailures: 7, lastFailureAt: 0 })
      yield* TestClock.adjust("1 second")
      yield* call(breaker, fail)
      yield* call(breaker, succeed)
      yield* settle
      assert.deepStrictEqual(yield* circuit.counts!.read, { consecutiveFailures: 0, lastFailureAt: 1000 })
    }).pipe(Effect.provide(BreakerStore.layerMemory))
  )

  it.scoped(
    "counts go in batches: a few failures are reported as they come, a brownout costs no send per failure",
    () =>
      Effect.gen(function* () {
        const memory = yield* BreakerStore.makeMemory
        const sends: Array<string> = []
        const counted = BreakerStore.BreakerStore.of({
          connect: (name) =>
            Effect.map(memory.connect(name), (circuit) => ({
              ...circuit,
              verdict: {
                ...circuit.verdict,
                save: (v: BreakerStore.Verdict) =>
                  Effect.andThen(
                    Effect.sync(() => sends.push(`save ${v.state}`)),
                    circuit.verdict.save(v)
                  )
              },
              counts: {
                ...circuit.counts!,
                recordFailures: (n: number, at: number) =>
                  Effect.andThen(
                    Effect.sync(() => sends.push(`failures ${n}`)),
                    circuit.counts!.recordFailures(n, at)
                  ),
                recordSuccess: (at: number) =>
                  Effect.andThen(
                    Effect.sync(() => sends.push("success")),
                    circuit.counts!.recordSuccess(at)
                  )
              }
            }))
        })
        const make = (threshold: number) =>
          Effect.provideService(
            CircuitBreaker.make({ name: "brownout", policy: Policy.consecutiveFailures(threshold) }),
            BreakerStore.BreakerStore,
            counted
          )
        const breaker = yield* make(1_000_000)
        const circuit = yield* memory.connect("brownout")
        // a few: each as it comes
        for (const outcome of [fail, succeed, fail]) {
          yield* call(breaker, outcome)
          yield* settle
        }
        assert.deepStrictEqual(sends, ["failures 1", "success", "failures 1"])
        // a brownout: 1,000 calls in 10 seconds, every other one failing (500 failures, 500 successes)
        sends.length = 0
        for (let i = 0; i < 1_000; i++) {
          yield* TestClock.adjust("10 millis")
          yield* call(breaker, i % 2 === 0 ? fail : succeed)
          yield* settle
        }
        yield* TestClock.adjust("1 second")
        yield* settle
        // what the bucket had left (2 batches), then one a second: 13 batches of at most 2 sends
        assert.isAtMost(sends.length, 2 * (2 + 11))
        assert.isAtLeast(sends.length, 2 * 10)
        // nothing lost: the last call succeeded, after a failure at 9,990
        assert.deepStrictEqual(yield* circuit.counts!.read, { consecutiveFailures: 0, lastFailureAt: 9_990 })
        // a verdict does not wait for the batch
        sends.length = 0
        const tripping = yield* make(1)
        yield* call(breaker, fail)
        yield* call(tripping, fail)
        yield* settle
        assert.strictEqual(sends[0], "save Open")
        assert.strictEqual(yield* tagOf(breaker), "Open")
      })
  )

  it.scoped("a failed probe's lease goes back only once its reopening is in the store", () =>
    Effect.gen(function* () {
      const memory = yield* BreakerStore.makeMemory
      const order: Array<string> = []
      const saving = yield* Deferred.make<void>()
      let saves = 0
      const ordered = BreakerStore.BreakerStore.of({
        connect: (name) =>
          Effect.map(memory.connect(name), (circuit) => ({
            ...circuit,
            verdict: {
              ...circuit.verdict,
              // the reopening (every save after the first) takes a while to reach the store
              save: (v: BreakerStore.Verdict) =>
                Effect.andThen(
                  saves++ > 0 ? Deferred.await(saving) : Effect.void,
                  Effect.andThen(
                    Effect.sync(() => order.push(`save ${v.state}`)),
                    circuit.verdict.save(v)
                  )
                )
            },
            probes: {
              ...circuit.probes!,
              release: (lease: string) =>
                Effect.andThen(
                  Effect.sync(() => order.push("release")),
                  circuit.probes!.release(lease)
                )
            }
          }))
      })
      const make = Effect.provideService(CircuitBreaker.make(options), BreakerStore.BreakerStore, ordered)
      const a = yield* make
      const b = yield* make
      // whatever happens, the store answers before the breakers close (their last verdicts flush)
      yield* Effect.addFinalizer(() => Deferred.succeed(saving, undefined))
      yield* call(a, fail)
      yield* call(a, fail)
      yield* settle
      yield* TestClock.adjust("10 seconds")
      // a probes and fails: it reopens, but the store does not have that yet
      assert.deepStrictEqual<unknown>(yield* call(a, fail), Result.fail("boom"))
      yield* settle
      assert.deepStrictEqual(order, ["save Open"])
      // b has not heard: its half-open call asks the lease, which a still holds
      rejectedWith(yield* call(b, succeed))
      yield* Deferred.succeed(saving, undefined)
      yield* settle
      assert.deepStrictEqual(order, ["save Open", "save Open", "release"])
      assert.strictEqual(yield* tagOf(b), "Open")
    })
  )

  it.scoped("the failure that opens the circuit starts no count in the new episode, and its time is kept", () =>
    Effect.gen(function* () {
      const store = yield* BreakerStore.BreakerStore
      const circuit = yield* store.connect("tripping")
      const breaker = yield* CircuitBreaker.make({ name: "tripping", policy: Policy.consecutiveFailures(3) })
      yield* TestClock.adjust("7 millis")
      for (let i = 0; i < 3; i++) yield* call(breaker, fail)
      yield* settle
      assert.strictEqual(yield* tagOf(breaker), "Open")
      assert.deepStrictEqual(yield* circuit.counts!.read, { consecutiveFailures: 0, lastFailureAt: 7 })
    }).pipe(Effect.provide(BreakerStore.layerMemory))
  )

  it.scoped("a member made after the stored episode ended joins the half-open probe instead of closing", () =>
    Effect.gen(function* () {
      const store = yield* BreakerStore.BreakerStore
      const circuit = yield* store.connect("late")
      yield* circuit.verdict.save({ state: "Open", remainingMillis: 1000, ageMillis: 0, origin: "another-process" })
      yield* TestClock.adjust("2 seconds")
      const breaker = yield* CircuitBreaker.make({ name: "late" })
      assert.strictEqual(yield* tagOf(breaker), "HalfOpen")
      // Its probe decides for it: one call goes through, and closes it.
      assert.deepStrictEqual<unknown>(yield* call(breaker, succeed), Result.succeed("ok"))
      assert.strictEqual(yield* tagOf(breaker), "Closed")
    }).pipe(Effect.provide(BreakerStore.layerMemory))
  )

  it.scoped("a verdict older than the member's own last transition is out of date and ignored", () =>
    Effect.gen(function* () {
      const store = yield* BreakerStore.BreakerStore
      const circuit = yield* store.connect("ordered")
      const breaker = yield* CircuitBreaker.make({ name: "ordered", policy: Policy.consecutiveFailures(1) })
      yield* TestClock.adjust("5 seconds")
      yield* call(breaker, fail) // opens at t=5s
      yield* settle
      // made a second before the breaker opened (sent late: it is a second old)
      yield* circuit.verdict.save({
        state: "Closed",
        remainingMillis: 0,
        ageMillis: 1_000,
        origin: "a-member-that-was-cut-off"
      })
      yield* settle
      assert.strictEqual(yield* tagOf(breaker), "Open")
      yield* TestClock.adjust("1 second")
      yield* circuit.verdict.save({ state: "Closed", remainingMillis: 0, ageMillis: 0, origin: "a-member-that-probed" })
      yield* settle
      assert.strictEqual(yield* tagOf(breaker), "Closed")
    }).pipe(Effect.provide(BreakerStore.layerMemory))
  )

  it.scoped("a store that fails never fails or blocks a call; the verdict reaches it once it is back", () =>
    Effect.gen(function* () {
      let down = true
      const memory = yield* BreakerStore.makeMemory
      const saved: Array<string> = []
      const sent: Array<{ readonly ageMillis: number; readonly at: number }> = []
      const flaky = BreakerStore.BreakerStore.of({
        connect: (name) =>
          Effect.map(memory.connect(name), (circuit) => ({
            ...circuit,
            verdict: {
              ...circuit.verdict,
              load: Effect.suspend(() => (down ? Effect.never : circuit.verdict.load)),
              save: (verdict: BreakerStore.Verdict) =>
                Effect.suspend(() =>
                  down
                    ? Effect.fail(
                        new BreakerStore.BreakerStoreError({ store: "flaky", operation: "save", message: "down" })
                      )
                    : Effect.andThen(
                        Effect.clockWith((clock) =>
                          Effect.sync(() => {
                            saved.push(verdict.state)
                            sent.push({ ageMillis: verdict.ageMillis, at: Edition.nowUnsafe(clock) })
                          })
                        ),
                        circuit.verdict.save(verdict)
                      )
                )
            },
            probes: { ...circuit.probes!, acquire: () => Effect.never }
          }))
      })
      const makeBreaker = Effect.provideService(CircuitBreaker.make(options), BreakerStore.BreakerStore, flaky)
      // Made while the store does not answer: make waits at most the store deadline.
      const breakerFiber = yield* Edition.forkChild(makeBreaker)
      yield* TestClock.adjust("250 millis")
      const breaker = yield* Fiber.join(breakerFiber)
      yield* call(breaker, fail)
      yield* call(breaker, fail)
      assert.strictEqual(yield* tagOf(breaker), "Open")
      yield* settle
      assert.deepStrictEqual(saved, [])
      // Half-open with a store that never answers the lease: the probe goes ahead after the deadline.
      yield* TestClock.adjust("10 seconds")
      const probe = yield* Edition.forkChild(call(breaker, succeed))
      yield* TestClock.adjust("250 millis")
      assert.deepStrictEqual<unknown>(yield* Fiber.join(probe), Result.succeed("ok"))
      assert.strictEqual(yield* tagOf(breaker), "Closed")
      const closedAt = yield* Clock.currentTimeMillis
      // The store comes back: the writer's next retry sends the latest verdict only, as old as it is
      // by then (so the store does not let it replace a verdict made while it waited).
      down = false
      yield* TestClock.adjust("1 second")
      yield* settle
      assert.deepStrictEqual(saved, ["Closed"])
      assert.isAbove(sent[0]!.at, closedAt)
      assert.strictEqual(sent[0]!.ageMillis, sent[0]!.at - closedAt)
      const stored = yield* (yield* memory.connect("shared")).verdict.load
      assert.strictEqual(Option.getOrUndefined(stored)?.state, "Closed")
    })
  )

  it.scoped("the registry's breakers share through the store too", () =>
    Effect.gen(function* () {
      const store = yield* BreakerStore.BreakerStore
      const circuit = yield* store.connect("api")
      const registry = yield* BreakerRegistry.make({ defaults: { policy: Policy.consecutiveFailures(1) } })
      yield* call(yield* registry.get("api"), fail)
      yield* settle
      const verdict = yield* circuit.verdict.load
      assert.isTrue(Option.isSome(verdict) && verdict.value.state === "Open")
      const first = yield* Stream.runHead(Stream.take(circuit.verdict.watch, 1)).pipe(Edition.forkChild)
      yield* settle
      yield* TestClock.adjust("30 seconds")
      yield* call(yield* registry.get("api"), succeed)
      const closed = yield* Fiber.join(first)
      assert.isTrue(Option.isSome(closed) && closed.value.state === "Closed")
    }).pipe(Effect.provide(BreakerStore.layerMemory))
  )

  it.scoped("the memory store tells a stale saver the stored verdict again, and leases are per slot", () =>
    Effect.gen(function* () {
      const store = yield* BreakerStore.makeMemory
      const circuit = yield* store.connect("stale")
      const newer: BreakerStore.Verdict = { state: "Open", remainingMillis: 7_000, ageMillis: 0, origin: "a" }
      yield* circuit.verdict.save(newer)
      const told = yield* Stream.runHead(circuit.verdict.watch).pipe(Edition.forkChild)
      yield* settle
      // made a second before the stored one
      yield* circuit.verdict.save({ state: "Closed", remainingMillis: 0, ageMillis: 1_000, origin: "b" })
      assert.deepStrictEqual(yield* Fiber.join(told), Option.some(newer))
      assert.deepStrictEqual(yield* circuit.verdict.load, Option.some(newer))
      // two permits: slots 0 and 1, each lease released only by its own string
      const first = Option.getOrThrow(yield* circuit.probes!.acquire({ permits: 2, leaseMillis: 100, now: 0 }))
      const second = Option.getOrThrow(yield* circuit.probes!.acquire({ permits: 2, leaseMillis: 100, now: 0 }))
      assert.deepStrictEqual(
        [first, second].map((lease) => Option.map(BreakerStoreKit.decodeLease(lease), (l) => l.slot)),
        [Option.some(0), Option.some(1)]
      )
      yield* circuit.probes!.release(second)
      const again = Option.getOrThrow(yield* circuit.probes!.acquire({ permits: 2, leaseMillis: 100, now: 1 }))
      assert.deepStrictEqual(
        Option.map(BreakerStoreKit.decodeLease(again), (l) => l.slot),
        Option.some(1)
      )
    })
  )
})
