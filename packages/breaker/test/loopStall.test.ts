/**
 * A deadline counts the event loop's running time, not the time the loop lost to a stall: the
 * rule on the TestClock with stalls the test injects (`LoopStall.scripted`), and the process's
 * monitor on a real busy loop.
 */
import * as Edition from "@circuitry/core/Edition"
import { BreakerStore, CircuitBreaker, LoopStall, Policy } from "@circuitry/breaker"
import {
  assert,
  describe,
  it,
  logTo,
  metricSeries,
  result,
  type ServiceOf,
  TestClock,
  withAttributes
} from "@circuitry/testkit"
import { Effect, Exit, Fiber, type Layer, Metric, Scope } from "effect"

const DEADLINE = 200
const timed = CircuitBreaker.make({ name: "db", policy: Policy.consecutiveFailures(1), timeout: DEADLINE })

describe("LoopStall: the breaker's timeout", () => {
  it.scoped("a timeout whose span the loop spent mostly stalled is not counted: the answer gets through", () =>
    Effect.gen(function* () {
      const extended = Metric.value(withAttributes(LoopStall.deadlineExtensions, { deadline: "breaker_timeout" }))
      const before = (yield* extended).count
      const breaker = yield* timed
      // The dependency answers at 300 ms; the loop was stalled from 50 to 350 ms of its span.
      const call = yield* Edition.forkChild(CircuitBreaker.withBreaker(Effect.as(Effect.sleep(300), "answer"), breaker))
      yield* TestClock.adjust(DEADLINE)
      assert.isUndefined(Edition.pollUnsafe(call), "at its Clock deadline the call is given the time the stall took")
      yield* TestClock.adjust(100)
      assert.strictEqual(yield* Fiber.join(call), "answer")
      assert.strictEqual((yield* breaker.state)._tag, "Closed")
      assert.strictEqual((yield* breaker.snapshot).counts.consecutiveFailures, 0)
      // What is counted instead: the call's own outcome (a success), and one deadline carried on.
      assert.strictEqual((yield* extended).count - before, 1)
    }).pipe(Effect.provideService(LoopStall.LoopStall, LoopStall.scripted([[50, 350]])))
  )

  it.scoped("the same timeout without a stall opens the breaker", () =>
    Effect.gen(function* () {
      const breaker = yield* timed
      const call = yield* Edition.forkChild(CircuitBreaker.withBreaker(Effect.as(Effect.sleep(300), "answer"), breaker))
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
      const call = yield* Edition.forkChild(CircuitBreaker.withBreaker(Effect.never, breaker))
      yield* TestClock.adjust(349)
      assert.isUndefined(Edition.pollUnsafe(call))
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
      const call = yield* Edition.forkChild(CircuitBreaker.withBreaker(Effect.never, breaker))
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

/** Log messages at warning, kept for the test to read. */
const logged = (): { readonly lines: Array<string>; readonly layer: Layer.Layer<never> } => {
  const lines: Array<string> = []
  const layer = logTo(({ messages }) => {
    lines.push(String(messages[0]))
  })
  return { lines, layer }
}

const reachable = (name: string) =>
  Effect.map(Metric.value(withAttributes(CircuitBreaker.storeReachable, { breaker: name })), (s) => s.value)

/** The memory store, whose loads answer after `millis`. */
const slowLoads = (
  memory: ServiceOf<typeof BreakerStore.BreakerStore>,
  millis: number
): ServiceOf<typeof BreakerStore.BreakerStore> => ({
  connect: (name) =>
    Effect.map(memory.connect(name), (circuit) => ({
      ...circuit,
      verdict: { ...circuit.verdict, load: Effect.andThen(Effect.sleep(millis), circuit.verdict.load) }
    }))
})

describe("LoopStall: the shared store's waits and health", () => {
  const joined = (name: string, stalls: LoopStall.Scripted) =>
    Effect.gen(function* () {
      const memory = yield* BreakerStore.makeMemory
      const log = logged()
      // The store answers the first load at 300 ms, past its 250 ms wait.
      const making = yield* Edition.forkChild(
        CircuitBreaker.make({ name }).pipe(
          Effect.provideService(BreakerStore.BreakerStore, slowLoads(memory, 300)),
          Effect.provideService(LoopStall.LoopStall, stalls),
          Effect.provide(log.layer)
        )
      )
      yield* TestClock.adjust(300)
      const breaker = yield* Fiber.join(making)
      return { breaker, lines: log.lines }
    })

  it.scoped("a load that waited on a stall of the loop's own is answered: no 'unreachable', the gauge says 1", () =>
    Effect.gen(function* () {
      const { breaker, lines } = yield* joined("stalled-load", LoopStall.scripted([[0, 280]]))
      assert.deepStrictEqual((yield* breaker.snapshot).store, { connected: true })
      assert.deepStrictEqual(lines, [])
      assert.strictEqual(yield* reachable("stalled-load"), 1)
    })
  )

  it.scoped("the same load without a stall: the store is reported unreachable, the gauge says 0", () =>
    Effect.gen(function* () {
      const { breaker, lines } = yield* joined("slow-load", LoopStall.scripted())
      assert.deepStrictEqual((yield* breaker.snapshot).store, { connected: false })
      assert.strictEqual(lines.length, 1)
      assert.include(lines[0], "unreachable")
      assert.strictEqual(yield* reachable("slow-load"), 0)
    })
  )
})

describe("the store-reachability gauge", () => {
  it.effect("goes 1 -> 0 -> 1 as the store fails and answers again, and leaves with its breaker", () =>
    Effect.gen(function* () {
      const memory = yield* BreakerStore.makeMemory
      let down = false
      const flaky: ServiceOf<typeof BreakerStore.BreakerStore> = {
        connect: (name) =>
          Effect.map(memory.connect(name), (circuit) => ({
            ...circuit,
            verdict: {
              ...circuit.verdict,
              save: (verdict: BreakerStore.Verdict) =>
                down
                  ? Effect.fail(
                      new BreakerStore.BreakerStoreError({ store: "test", operation: "save", message: "down" })
                    )
                  : circuit.verdict.save(verdict)
            }
          }))
      }
      const name = "gauge"
      const scope = yield* Scope.make()
      const breaker = yield* CircuitBreaker.make({ name, policy: Policy.consecutiveFailures(1) }).pipe(
        Effect.provideService(BreakerStore.BreakerStore, flaky),
        Effect.provideService(Scope.Scope, scope)
      )
      assert.strictEqual(yield* reachable(name), 1)
      down = true
      yield* result(CircuitBreaker.withBreaker(Effect.fail("boom"), breaker)) // trips: its verdict is sent
      yield* TestClock.adjust(0)
      assert.strictEqual(yield* reachable(name), 0)
      down = false
      yield* TestClock.adjust("1 second") // the outbox tries again
      assert.strictEqual(yield* reachable(name), 1)
      yield* Scope.close(scope, Exit.void)
      const left = (yield* metricSeries).filter(
        (series) => series.name === "circuitry_breaker_store_reachable" && series.attributes["breaker"] === name
      )
      assert.deepStrictEqual(left, [])
    }).pipe(Effect.provide(logged().layer))
  )
})

describe("the live monitor on another Clock", () => {
  it.effect("the live monitor leaves a virtual clock's deadlines alone, even one that starts at the real time", () =>
    Effect.gen(function* () {
      // A simulation's clock (chaos's Scenario) starts at the caller's time: the real one.
      yield* TestClock.setTime(Date.now())
      LoopStall.live.lostBefore(Date.now()) // the monitor runs from here
      const start = Date.now()
      while (Date.now() - start < 300) {
        // the real loop stalls for 300 ms
      }
      assert.isAbove(LoopStall.live.lostBefore(Date.now()), 200, "the monitor saw the stall")
      const breaker = yield* CircuitBreaker.make({
        name: "virtual",
        policy: Policy.consecutiveFailures(1),
        timeout: "100 millis"
      })
      const call = yield* Edition.forkChild(Effect.exit(CircuitBreaker.withBreaker(Effect.never, breaker)))
      yield* TestClock.adjust(100)
      const exit = yield* Fiber.join(call)
      assert.isTrue(Exit.isFailure(exit), "timed out at 100 ms of the virtual clock")
      assert.strictEqual((yield* breaker.state)._tag, "Open")
    }).pipe(Effect.scoped)
  )
})
