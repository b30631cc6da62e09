import * as Edition from "@circuitry/core/Edition"
import { Limit, Limiter } from "@circuitry/limiter"
import { assert, describe, it, TestClock } from "@circuitry/testkit"
import { Deferred, Effect, Exit, Fiber, Option } from "effect"
import { untilInFlight, untilQueued } from "./utils.js"

const fork = Edition.forkChild

/** Whether a call failed with a LimiterRejectedError. */
const isRejected = (exit: Exit.Exit<unknown, unknown>): boolean =>
  Exit.isFailure(exit) && Option.getOrUndefined(Edition.findError(exit.cause)) instanceof Limiter.LimiterRejectedError

describe("queue", () => {
  it.scoped("callers over the limit wait and run in arrival order (FIFO)", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({ limit: Limit.fixed(1), queue: { size: 10, timeout: "1 minute" } })
      const order: Array<number> = []
      const gate = yield* Deferred.make<void>()
      const first = yield* fork(Limiter.withLimiter(Deferred.await(gate), limiter))
      yield* untilInFlight(limiter, 1)
      const waiters: Array<Edition.Fiber<void, Limiter.LimiterRejectedError>> = []
      for (let i = 1; i <= 5; i++) {
        waiters.push(
          yield* fork(
            Limiter.withLimiter(
              Effect.sync(() => void order.push(i)),
              limiter
            )
          )
        )
        yield* untilQueued(limiter, i)
      }
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(first)
      for (const w of waiters) yield* Fiber.join(w)
      assert.deepStrictEqual(order, [1, 2, 3, 4, 5])
      assert.strictEqual((yield* limiter.snapshot).queued, 0)
    })
  )

  it.scoped("a full queue rejects at once; a waiter past `timeout` (on the Clock) is rejected and never runs", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({ limit: Limit.fixed(1), queue: { size: 1, timeout: "500 millis" } })
      const gate = yield* Deferred.make<void>()
      const busy = yield* fork(Limiter.withLimiter(Deferred.await(gate), limiter))
      yield* untilInFlight(limiter, 1)
      let ran = false
      let done = false
      const waiter = yield* fork(
        Effect.exit(
          Limiter.withLimiter(
            Effect.sync(() => (ran = true)),
            limiter
          )
        ).pipe(Effect.ensuring(Effect.sync(() => (done = true))))
      )
      yield* untilQueued(limiter, 1)
      const overflow = yield* Effect.exit(Limiter.withLimiter(Effect.void, limiter))
      assert.isTrue(isRejected(overflow))
      yield* TestClock.adjust("499 millis")
      assert.isFalse(done)
      yield* TestClock.adjust("1 millis")
      const result = yield* Fiber.join(waiter)
      assert.isTrue(isRejected(result))
      assert.isFalse(ran)
      assert.strictEqual((yield* limiter.snapshot).queued, 0)
      assert.strictEqual((yield* limiter.snapshot).rejected, 2)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(busy)
      assert.strictEqual(yield* limiter.inFlight, 0)
    })
  )

  it.scoped("a waiter that is interrupted leaves the queue and harms no other waiter", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({ limit: Limit.fixed(1), queue: { size: 10, timeout: "1 minute" } })
      const gate = yield* Deferred.make<void>()
      const busy = yield* fork(Limiter.withLimiter(Deferred.await(gate), limiter))
      yield* untilInFlight(limiter, 1)
      const ran: Array<string> = []
      const a = yield* fork(
        Limiter.withLimiter(
          Effect.sync(() => void ran.push("a")),
          limiter
        )
      )
      yield* untilQueued(limiter, 1)
      const b = yield* fork(
        Limiter.withLimiter(
          Effect.sync(() => void ran.push("b")),
          limiter
        )
      )
      yield* untilQueued(limiter, 2)
      const c = yield* fork(
        Limiter.withLimiter(
          Effect.sync(() => void ran.push("c")),
          limiter
        )
      )
      yield* untilQueued(limiter, 3)
      yield* Fiber.interrupt(b)
      assert.strictEqual((yield* limiter.snapshot).queued, 2)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(busy)
      yield* Fiber.join(a)
      yield* Fiber.join(c)
      assert.deepStrictEqual(ran, ["a", "c"])
      assert.strictEqual(yield* limiter.inFlight, 0)
    })
  )

  it.scoped("a waiter granted a slot and interrupted in the same instant gives the slot to the next", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({ limit: Limit.fixed(1), queue: { size: 10, timeout: "1 minute" } })
      const gate = yield* Deferred.make<void>()
      const busy = yield* fork(Limiter.withLimiter(Deferred.await(gate), limiter))
      yield* untilInFlight(limiter, 1)
      const a = yield* fork(Limiter.withLimiter(Effect.never, limiter))
      yield* untilQueued(limiter, 1)
      const ran: Array<string> = []
      const b = yield* fork(
        Limiter.withLimiter(
          Effect.sync(() => void ran.push("b")),
          limiter
        )
      )
      yield* untilQueued(limiter, 2)
      // The slot goes to `a` synchronously, and `a` is interrupted before it could run.
      yield* Effect.all([Deferred.succeed(gate, undefined), Fiber.interrupt(a)], { concurrency: "unbounded" })
      yield* Fiber.join(busy)
      yield* Fiber.join(b)
      assert.deepStrictEqual(ran, ["b"])
      assert.strictEqual(yield* limiter.inFlight, 0)
    })
  )

  it.scoped("a bulkhead (fixed + queue) never runs more than its limit", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({ limit: Limit.fixed(3), queue: { size: 100, timeout: "10 seconds" } })
      let running = 0
      let peak = 0
      const work = (ms: number) =>
        Effect.gen(function* () {
          running++
          peak = Math.max(peak, running)
          yield* Effect.sleep(ms)
          running--
        })
      const fibers = yield* Effect.forEach(
        Array.from({ length: 40 }, (_, i) => 10 + ((i * 7) % 13)),
        // Forked from this fiber, not from a concurrent forEach's: on Effect 4 a fiber's children
        // are interrupted when it ends, and those workers end as soon as they have forked.
        (ms) => fork(Effect.exit(Limiter.withLimiter(work(ms), limiter)))
      )
      for (let t = 0; t < 400; t++) yield* TestClock.adjust("1 millis")
      const exits = yield* Effect.forEach(fibers, Fiber.join)
      assert.isTrue(exits.every(Exit.isSuccess))
      assert.strictEqual(peak, 3)
      assert.strictEqual(yield* limiter.inFlight, 0)
    })
  )
})
