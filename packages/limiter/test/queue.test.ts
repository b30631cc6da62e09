import { Limit, Limiter } from "@circuitry/limiter"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Either, Exit, Fiber, TestClock } from "effect"
import { untilInFlight, untilQueued } from "./utils.js"

describe("queue", () => {
  it.scoped("callers over the limit wait and run in arrival order (FIFO)", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({ limit: Limit.fixed(1), queue: { size: 10, timeout: "1 minute" } })
      const order: Array<number> = []
      const gate = yield* Deferred.make<void>()
      const first = yield* Effect.fork(Limiter.withLimiter(Deferred.await(gate), limiter))
      yield* untilInFlight(limiter, 1)
      const waiters: Array<Fiber.RuntimeFiber<void, Limiter.LimiterRejectedError>> = []
      for (let i = 1; i <= 5; i++) {
        waiters.push(
          yield* Effect.fork(
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
      const busy = yield* Effect.fork(Limiter.withLimiter(Deferred.await(gate), limiter))
      yield* untilInFlight(limiter, 1)
      let ran = false
      const waiter = yield* Effect.fork(
        Effect.either(
          Limiter.withLimiter(
            Effect.sync(() => (ran = true)),
            limiter
          )
        )
      )
      yield* untilQueued(limiter, 1)
      const overflow = yield* Effect.either(Limiter.withLimiter(Effect.void, limiter))
      assert.isTrue(Either.isLeft(overflow) && overflow.left instanceof Limiter.LimiterRejectedError)
      yield* TestClock.adjust("499 millis")
      assert.isNull(yield* Fiber.poll(waiter).pipe(Effect.map((o) => (o._tag === "None" ? null : o))))
      yield* TestClock.adjust("1 millis")
      const result = yield* Fiber.join(waiter)
      assert.isTrue(Either.isLeft(result) && result.left instanceof Limiter.LimiterRejectedError)
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
      const busy = yield* Effect.fork(Limiter.withLimiter(Deferred.await(gate), limiter))
      yield* untilInFlight(limiter, 1)
      const ran: Array<string> = []
      const a = yield* Effect.fork(
        Limiter.withLimiter(
          Effect.sync(() => void ran.push("a")),
          limiter
        )
      )
      yield* untilQueued(limiter, 1)
      const b = yield* Effect.fork(
        Limiter.withLimiter(
          Effect.sync(() => void ran.push("b")),
          limiter
        )
      )
      yield* untilQueued(limiter, 2)
      const c = yield* Effect.fork(
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
      const busy = yield* Effect.fork(Limiter.withLimiter(Deferred.await(gate), limiter))
      yield* untilInFlight(limiter, 1)
      const a = yield* Effect.fork(Limiter.withLimiter(Effect.never, limiter))
      yield* untilQueued(limiter, 1)
      const ran: Array<string> = []
      const b = yield* Effect.fork(
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
        (ms) => Effect.fork(Effect.exit(Limiter.withLimiter(work(ms), limiter))),
        { concurrency: "unbounded" }
      )
      for (let t = 0; t < 400; t++) yield* TestClock.adjust("1 millis")
      const exits = yield* Effect.forEach(fibers, Fiber.join)
      assert.isTrue(exits.every(Exit.isSuccess))
      assert.strictEqual(peak, 3)
      assert.strictEqual(yield* limiter.inFlight, 0)
    })
  )
})
