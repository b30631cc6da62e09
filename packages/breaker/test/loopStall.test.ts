/**
 * A deadline counts the event loop's running time, not the time the loop lost to a stall: the
 * rule on the TestClock with stalls the test injects (`LoopStall.scripted`), and the process's
 * monitor on a real busy loop.
 */
import { CircuitBreaker, LoopStall, Policy } from "@circuitry/breaker"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, TestClock } from "effect"

const DEADLINE = 200
const timed = CircuitBreaker.make({ name: "db", policy: Policy.consecutiveFailures(1), timeout: DEADLINE })

describe("LoopStall: the breaker's timeout", () => {
  it.scoped("a timeout whose span the loop spent mostly stalled is not counted: the answer gets through", () =>
    Effect.gen(function* () {
      const breaker = yield* timed
      // The dependency answers at 300 ms; the loop was stalled from 50 to 350 ms of its span.
      const call = yield* Effect.fork(CircuitBreaker.withBreaker(Effect.as(Effect.sleep(300), "answer"), breaker))
      yield* TestClock.adjust(DEADLINE)
      assert.isNull(call.unsafePoll(), "at its Clock deadline the call is given the time the stall took")
      yield* TestClock.adjust(100)
      assert.strictEqual(yield* Fiber.join(call), "answer")
      assert.strictEqual((yield* breaker.state)._tag, "Closed")
      assert.strictEqual((yield* breaker.snapshot).counts.consecutiveFailures, 0)
    }).pipe(Effect.provideService(LoopStall.LoopStall, LoopStall.scripted([[50, 350]])))
  )

  it.scoped("the same timeout without a stall opens the breaker", () =>
    Effect.gen(function* () {
      const breaker = yield* timed
      const call = yield* Effect.fork(CircuitBreaker.withBreaker(Effect.as(Effect.sleep(300), "answer"), breaker))
      yield* TestClock.adjust(DEADLINE)
      const exit = yield* Fiber.await(call)
      assert.isTrue(Exit.isFailure(exit))
      assert.strictEqual((yield* breaker.state)._tag, "Open")
    }).pipe(Effect.provideService(LoopStall.LoopStall, LoopStall.scripted()))
  )

  it.scoped("a dependency that never answers still times out, at most the stall after its Clock deadline", () =>
    Effect.gen(function* () {
      const breaker = yield* timed
      // Stalled 0-150 ms: 150 ms of the span were the loop's own, so the deadline is at 350 ms.
      const call = yield* Effect.fork(CircuitBreaker.withBreaker(Effect.never, breaker))
      yield* TestClock.adjust(349)
      assert.isNull(call.unsafePoll())
      assert.strictEqual((yield* breaker.state)._tag, "Closed")
      yield* TestClock.adjust(1)
      const exit = yield* Fiber.await(call)
      assert.isTrue(Exit.isFailure(exit) && String(exit.cause).includes("BreakerTimeoutError"))
      assert.strictEqual((yield* breaker.state)._tag, "Open")
    }).pipe(Effect.provideService(LoopStall.LoopStall, LoopStall.scripted([[0, 150]])))
  )

  it.scoped("a stall before the call started gives it nothing", () =>
    Effect.gen(function* () {
      yield* TestClock.adjust(1_000)
      const breaker = yield* timed
      const call = yield* Effect.fork(CircuitBreaker.withBreaker(Effect.never, breaker))
      yield* TestClock.adjust(DEADLINE)
      assert.isTrue(Exit.isFailure(yield* Fiber.await(call)))
      assert.strictEqual((yield* breaker.state)._tag, "Open")
    }).pipe(Effect.provideService(LoopStall.LoopStall, LoopStall.scripted([[0, 900]])))
  )
})

describe("LoopStall.scripted", () => {
  it("measures the stalls before a time, overlapping ones once", () => {
    const stalls = LoopStall.scripted([
      [100, 200],
      [150, 300]
    ])
    stalls.stall(500, 600)
    assert.deepStrictEqual(
      [0, 100, 150, 300, 400, 550, 1_000].map((at) => stalls.lostBefore(at)),
      [0, 0, 50, 200, 200, 250, 300]
    )
  })
})

describe("LoopStall.live", () => {
  it("sees a busy loop: the time it blocked is lost, and no more than the time that passed", async () => {
    const live = LoopStall.live
    const before = Date.now()
    const lostBefore = live.lostBefore(before)
    const started = performance.now()
    while (performance.now() - started < 300) {
      // blocking the event loop, as a CPU-bound handler would
    }
    const blocked = performance.now() - started
    // Asked in the same turn, before the monitor's timer could run: the stall is counted as it goes on.
    const during = live.lostBefore(Date.now()) - lostBefore
    await new Promise((resolve) => setImmediate(resolve))
    const after = Date.now()
    const lost = live.lostBefore(after) - lostBefore
    // The monitor misses at most one interval and its tolerance (10 + 10 ms) of the block.
    assert.isAtLeast(during, blocked - 25, `during the block: ${during} of ${blocked} ms`)
    assert.isAtLeast(lost, blocked - 25, `after the block: ${lost} of ${blocked} ms`)
    assert.isAtMost(lost, after - before + 1, `no more than the ${after - before} ms that passed`)
  })
})
