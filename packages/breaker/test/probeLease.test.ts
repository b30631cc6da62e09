import * as Edition from "@circuitry/core/Edition"
import { BreakerStore, CircuitBreaker, Policy } from "@circuitry/breaker"
import { assert, describe, it, Result, type ServiceOf, TestClock, yieldNow } from "@circuitry/testkit"
import { Deferred, Effect, Fiber, Option } from "effect"
import { call, dependency, fail, rejectedWith, succeed, tagOf } from "./utils.js"

/** Lets the breakers' background fibers (store followers and writers) run. */
const settle = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* yieldNow
})

/** How long a member refused the fleet's lease waits before it asks again (probes.ts). */
const BACK_OFF = 250

/**
 * A member on the memory store whose lease requests are counted: `asks.n` is how many times it
 * asked the store for the fleet's probe lease.
 */
const member = (memory: ServiceOf<typeof BreakerStore.BreakerStore>, options: CircuitBreaker.Options) =>
  Effect.gen(function* () {
    const asks = { n: 0 }
    const counted = BreakerStore.BreakerStore.of({
      connect: (name) =>
        Effect.map(memory.connect(name), (circuit) => ({
          ...circuit,
          probes: {
            ...circuit.probes!,
            acquire: (lease: Parameters<BreakerStore.ProbeLeases["acquire"]>[0]) =>
              Effect.andThen(
                Effect.sync(() => asks.n++),
                circuit.probes!.acquire(lease)
              )
          }
        }))
    })
    const breaker = yield* Effect.provideService(CircuitBreaker.make(options), BreakerStore.BreakerStore, counted)
    return { breaker, asks }
  })

describe("the fleet's probe lease: a refused member backs off", () => {
  it.scoped("a refused member does not ask the store again within the back-off, and asks after it", () =>
    Effect.gen(function* () {
      const memory = yield* BreakerStore.makeMemory
      const options: CircuitBreaker.Options = {
        name: "backoff",
        policy: Policy.consecutiveFailures(2),
        openFor: "10 seconds"
      }
      const a = yield* member(memory, options)
      const b = yield* member(memory, options)
      yield* call(a.breaker, fail)
      yield* call(a.breaker, fail)
      yield* settle
      yield* TestClock.adjust("10 seconds")
      // a probes, and its probe takes a while: it holds the fleet's lease
      const gate = yield* Deferred.make<void>()
      const probe = yield* Edition.forkChild(call(a.breaker, Effect.andThen(Deferred.await(gate), succeed)))
      yield* settle
      assert.strictEqual(a.asks.n, 1)
      // b asks once, is refused, and is told when it will ask again
      const refused = rejectedWith(yield* call(b.breaker, succeed))
      assert.strictEqual(b.asks.n, 1)
      assert.strictEqual(refused.state, "HalfOpen")
      assert.strictEqual(refused.retryAfterMillis, BACK_OFF)
      // within the back-off: rejected here, without a round trip to the store
      for (const elapsed of [0, 100, BACK_OFF - 1]) {
        yield* TestClock.setTime(10_000 + elapsed)
        const rejected = rejectedWith(yield* call(b.breaker, succeed))
        assert.strictEqual(rejected.state, "HalfOpen")
        assert.strictEqual(rejected.retryAfterMillis, BACK_OFF - elapsed)
        assert.isFalse(yield* b.breaker.isCallAllowed)
      }
      assert.strictEqual(b.asks.n, 1)
      // after it: b asks again (a still holds the lease: refused again, for another back-off)
      yield* TestClock.setTime(10_000 + BACK_OFF)
      assert.isTrue(yield* b.breaker.isCallAllowed)
      assert.strictEqual(rejectedWith(yield* call(b.breaker, succeed)).retryAfterMillis, BACK_OFF)
      assert.strictEqual(b.asks.n, 2)
      yield* TestClock.setTime(10_000 + 2 * BACK_OFF - 1)
      rejectedWith(yield* call(b.breaker, succeed))
      assert.strictEqual(b.asks.n, 2)
      // a's probe succeeds: the fleet closes, and b runs its calls again
      yield* Deferred.succeed(gate, undefined)
      assert.deepStrictEqual<unknown>(yield* Fiber.join(probe), Result.succeed("ok"))
      yield* settle
      assert.strictEqual(yield* tagOf(b.breaker), "Closed")
      assert.deepStrictEqual<unknown>(yield* call(b.breaker, succeed), Result.succeed("ok"))
      assert.strictEqual(b.asks.n, 2)
    })
  )

  it.scoped("a new episode forgets the refusal: the member asks at once, even within the back-off", () =>
    Effect.gen(function* () {
      const memory = yield* BreakerStore.makeMemory
      // open for less than the back-off, so that the next episode starts within it
      const options: CircuitBreaker.Options = {
        name: "episodes",
        policy: Policy.consecutiveFailures(2),
        openFor: "100 millis"
      }
      const a = yield* member(memory, options)
      const b = yield* member(memory, options)
      yield* call(a.breaker, fail)
      yield* call(a.breaker, fail)
      yield* settle
      yield* TestClock.adjust("100 millis")
      const gate = yield* Deferred.make<void>()
      const probe = yield* Edition.forkChild(call(a.breaker, Effect.andThen(Deferred.await(gate), fail)))
      yield* settle
      rejectedWith(yield* call(b.breaker, succeed))
      assert.strictEqual(b.asks.n, 1)
      // a's probe fails at 150: the fleet reopens until 250, which b hears (a new episode)
      yield* TestClock.setTime(150)
      yield* Deferred.succeed(gate, undefined)
      assert.deepStrictEqual<unknown>(yield* Fiber.join(probe), Result.fail("boom"))
      yield* settle
      assert.deepStrictEqual(yield* b.breaker.state, CircuitBreaker.State.Open({ until: 250 }))
      // at 250 b is half-open in the new episode, 150 ms into the old refusal's back-off: it asks,
      // gets the lease (a's went back once its reopening was in the store), and probes
      yield* TestClock.setTime(250)
      const dep = yield* dependency
      assert.deepStrictEqual<unknown>(yield* call(b.breaker, dep.effect), Result.succeed("ok"))
      assert.strictEqual(b.asks.n, 2)
      assert.strictEqual(yield* dep.calls, 1)
      assert.strictEqual(yield* tagOf(b.breaker), "Closed")
    })
  )

  it.scoped("a prober that dies holding the lease is replaced once the lease runs out, after the back-off", () =>
    Effect.gen(function* () {
      const memory = yield* BreakerStore.makeMemory
      const circuit = yield* memory.connect("orphaned")
      // another process opened the circuit for a second, then took the lease at 1 s and died
      yield* circuit.verdict.save({
        state: "Open",
        remainingMillis: 1_000,
        ageMillis: 0,
        origin: "a-process-that-died"
      })
      const b = yield* member(memory, { name: "orphaned", halfOpen: { probeLease: "1 second" } })
      assert.strictEqual(yield* tagOf(b.breaker), "Open")
      yield* TestClock.setTime(1_000)
      assert.isTrue((yield* circuit.probes!.acquire({ permits: 1, leaseMillis: 1_000, now: 1_000 }))._tag === "Some")
      // b calls every 50 ms: it asks at 1,000, then once per back-off, and probes when the lease ran out
      const dep = yield* dependency
      const results: Array<Result<unknown, unknown>> = []
      for (let t = 1_000; t <= 2_000; t += 50) {
        yield* TestClock.setTime(t)
        results.push(yield* call(b.breaker, dep.effect))
      }
      assert.strictEqual(b.asks.n, 5) // at 1,000, 1,250, 1,500, 1,750 and 2,000
      assert.strictEqual(yield* dep.calls, 1)
      assert.deepStrictEqual<unknown>(results.at(-1), Result.succeed("ok"))
      for (const rejected of results.slice(0, -1)) assert.strictEqual(rejectedWith(rejected).state, "HalfOpen")
      assert.strictEqual(yield* tagOf(b.breaker), "Closed")
    })
  )

  it.scoped("the back-off is at most the lease's time", () =>
    Effect.gen(function* () {
      const memory = yield* BreakerStore.makeMemory
      const circuit = yield* memory.connect("short")
      yield* circuit.verdict.save({ state: "Open", remainingMillis: 1_000, ageMillis: 0, origin: "another-process" })
      const b = yield* member(memory, { name: "short", halfOpen: { probeLease: "100 millis" } })
      yield* TestClock.setTime(1_000)
      assert.isTrue((yield* circuit.probes!.acquire({ permits: 1, leaseMillis: 100, now: 1_000 }))._tag === "Some")
      assert.strictEqual(rejectedWith(yield* call(b.breaker, succeed)).retryAfterMillis, 100)
      yield* TestClock.setTime(1_099)
      rejectedWith(yield* call(b.breaker, succeed))
      assert.strictEqual(b.asks.n, 1)
      yield* TestClock.setTime(1_100)
      assert.deepStrictEqual<unknown>(yield* call(b.breaker, succeed), Result.succeed("ok"))
      assert.strictEqual(b.asks.n, 2)
    })
  )
})

describe("the fleet's probe lease: what a lost release costs", () => {
  /** A member whose releases never reach the store (its holder could not give the lease back). */
  const forgetful = (memory: ServiceOf<typeof BreakerStore.BreakerStore>, options: CircuitBreaker.Options) =>
    Effect.provideService(
      CircuitBreaker.make(options),
      BreakerStore.BreakerStore,
      BreakerStore.BreakerStore.of({
        connect: (name) =>
          Effect.map(memory.connect(name), (circuit) => ({
            ...circuit,
            probes: { ...circuit.probes!, release: () => Effect.void }
          }))
      })
    )

  it.scoped("a lease never given back holds the fleet for the probe's timeout plus 2 s, not for probeLease", () =>
    Effect.gen(function* () {
      const memory = yield* BreakerStore.makeMemory
      const options: CircuitBreaker.Options = {
        name: "lost-release",
        policy: Policy.consecutiveFailures(1),
        openFor: "1 second",
        halfOpen: { probeLease: "20 seconds", probeTimeout: "1 second" }
      }
      const a = yield* forgetful(memory, options)
      const b = yield* member(memory, options)
      yield* call(a, fail)
      yield* settle
      yield* TestClock.setTime(1_000)
      // a probes at 1 s and hangs: its probe times out at 2 s (the fleet reopens until 3 s), and
      // its lease, taken at 1 s, is never given back
      yield* Edition.forkChild(call(a, Effect.never))
      yield* settle
      yield* TestClock.setTime(2_000)
      yield* settle
      assert.deepStrictEqual(yield* b.breaker.state, CircuitBreaker.State.Open({ until: 3_000 }))
      // half-open again at 3 s: the lost lease still stands until 1 s + 1 s + 2 s
      const dep = yield* dependency
      for (const t of [3_000, 3_250, 3_500, 3_750]) {
        yield* TestClock.setTime(t)
        assert.strictEqual(rejectedWith(yield* call(b.breaker, dep.effect)).state, "HalfOpen")
      }
      yield* TestClock.setTime(4_000)
      assert.deepStrictEqual<unknown>(yield* call(b.breaker, dep.effect), Result.succeed("ok"))
      assert.strictEqual(yield* dep.calls, 1)
      assert.strictEqual(yield* tagOf(b.breaker), "Closed")
    })
  )

  it.scoped(
    "a failed probe's lease goes back 1 s after its verdict, even when the store never answers the verdict",
    () =>
      Effect.gen(function* () {
        const memory = yield* BreakerStore.makeMemory
        const circuit = yield* memory.connect("slow-verdict")
        const options: CircuitBreaker.Options = {
          name: "slow-verdict",
          policy: Policy.consecutiveFailures(1),
          openFor: "1 second"
        }
        // a's store takes leases but answers no verdict until the test is over
        const answer = yield* Deferred.make<void>()
        const a = yield* Effect.provideService(
          CircuitBreaker.make(options),
          BreakerStore.BreakerStore,
          BreakerStore.BreakerStore.of({
            connect: (name) =>
              Effect.map(memory.connect(name), (c) => ({
                ...c,
                verdict: {
                  ...c.verdict,
                  save: (verdict: BreakerStore.Verdict) =>
                    Effect.andThen(Deferred.await(answer), c.verdict.save(verdict))
                }
              }))
          })
        )
        // added after the breaker, so it runs first: the breaker's last flush then gets its answer
        yield* Effect.addFinalizer(() => Deferred.succeed(answer, undefined))
        yield* call(a, fail)
        yield* TestClock.setTime(1_000)
        // a's probe fails at 1 s: its lease waits for the reopening to reach the store, at most 1 s
        assert.deepStrictEqual<unknown>(yield* call(a, fail), Result.fail("boom"))
        const probeLease = (now: number) => circuit.probes!.acquire({ permits: 1, leaseMillis: 1_000, now })
        yield* settle
        yield* TestClock.setTime(1_999)
        yield* settle
        assert.isTrue(Option.isNone(yield* probeLease(1_999)), "given back before its verdict's wait was over")
        yield* TestClock.setTime(2_000)
        yield* settle
        // given back at 2 s: taken at once (it would run out at 1 s + 1 s + 2 s = 4 s)
        assert.isTrue(
          Option.isSome(yield* probeLease(2_000)),
          "the lease still waits for a verdict the store never answers"
        )
      })
  )
})
