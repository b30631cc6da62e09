import * as Edition from "@circuitry/core/Edition"
import { assert, describe, it, yieldNow } from "@circuitry/testkit"
import { Deferred, Effect, Fiber } from "effect"
import { Limiter } from "../src/internal/limiter.js"

/** Lets every fiber that can run, run (a handful of scheduler turns). */
const settle = Effect.forEach(Array.from({ length: 20 }), () => yieldNow, { discard: true })

describe("Limiter (the load cap)", () => {
  it.effect("runs at most max at once and lets the others in first come, first served", () =>
    Effect.gen(function* () {
      const limiter = new Limiter(2)
      const gates = yield* Effect.forEach([0, 1, 2, 3, 4], () => Deferred.make<void>())
      const started: Array<number> = []
      const fibers = yield* Effect.forEach([0, 1, 2, 3, 4], (i) =>
        Edition.forkChild(
          limiter.withPermit(
            Effect.andThen(
              Effect.sync(() => started.push(i)),
              Deferred.await(gates[i]!)
            )
          )
        )
      )
      yield* settle
      assert.deepStrictEqual(started, [0, 1])
      yield* Deferred.succeed(gates[1]!, undefined)
      yield* settle
      assert.deepStrictEqual(started, [0, 1, 2])
      yield* Deferred.succeed(gates[0]!, undefined)
      yield* settle
      assert.deepStrictEqual(started, [0, 1, 2, 3])
      for (const gate of gates) yield* Deferred.succeed(gate, undefined)
      yield* Fiber.joinAll(fibers)
      assert.deepStrictEqual(started, [0, 1, 2, 3, 4])
    })
  )

  it.effect("an interrupted waiter takes no permit and the cap is whole afterwards", () =>
    Effect.gen(function* () {
      const limiter = new Limiter(1)
      const gate = yield* Deferred.make<void>()
      let running = 0
      let peak = 0
      const job = (wait: Effect.Effect<void>) =>
        limiter.withPermit(
          Effect.gen(function* () {
            running++
            peak = Math.max(peak, running)
            yield* wait
            running--
          })
        )
      const holder = yield* Edition.forkChild(job(Deferred.await(gate)))
      yield* settle
      const waiters = yield* Effect.forEach([1, 2, 3], () => Edition.forkChild(job(Effect.void)))
      yield* settle
      yield* Fiber.interrupt(waiters[0]!)
      yield* Fiber.interrupt(waiters[2]!)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(holder)
      yield* Fiber.join(waiters[1]!)
      // The permit came back: two more jobs run, one at a time.
      yield* Effect.all([job(yieldNow), job(yieldNow)], { concurrency: "unbounded" })
      assert.strictEqual(peak, 1)
      assert.strictEqual(running, 0)
    })
  )

  it.effect("a job that fails or is interrupted gives its permit back", () =>
    Effect.gen(function* () {
      const limiter = new Limiter(1)
      yield* Effect.exit(limiter.withPermit(Effect.fail("boom")))
      const stuck = yield* Edition.forkChild(limiter.withPermit(Effect.never))
      yield* settle
      yield* Fiber.interrupt(stuck)
      assert.strictEqual(yield* limiter.withPermit(Effect.succeed("ran")), "ran")
    })
  )
})
