/**
 * Effect 3 only: the two tests of breakerStoreEdges.test.ts that hold a load to its deadline on the
 * TestClock. Each waits until the fiber of the load is suspended (`Fiber.status`), which is when
 * the command is written and its deadline started, before it moves the Clock by the deadline to
 * the millisecond. Effect 4 has no public reading of a fiber's status (its `Fiber` keeps only
 * `pollUnsafe`) nor of the TestClock's pending sleeps; without the wait, the deadline could start
 * after the Clock moved. The rest of the file runs on both majors.
 */
import type { RedisBreakerStore } from "@circuitry/redis"
import { assert, describe, it, TestClock } from "@circuitry/testkit"
import { Effect, Either, Fiber, FiberStatus, Logger, Option } from "effect"
import { storeOn } from "./utils/members.js"
import { eventually, startServer } from "./utils/server.js"
import { waitFor } from "./utils/wait.js"

/**
 * Waits until `fiber` is suspended: for a fiber whose first asynchronous step is a store call,
 * the command is written and its deadline started (both happen before the call suspends).
 */
const suspended = <A, E>(fiber: Fiber.RuntimeFiber<A, E>, what: string): Effect.Effect<void> =>
  waitFor(what, Effect.map(Fiber.status(fiber), FiberStatus.isSuspended))

describe("RedisBreakerStore at the edges (Effect 3)", () => {
  it.scoped("the deadline (or its old name, timeout) is what a call is held to, on the Clock", () =>
    Effect.gen(function* () {
      const server = yield* startServer
      for (const options of [
        { deadline: "150 millis" },
        { timeout: "150 millis" }
      ] as Array<RedisBreakerStore.Options>) {
        const store = yield* storeOn({ url: server.url, prefix: "d:", ...options })
        const circuit = yield* store.connect("c")
        assert.isTrue(Option.isNone(yield* circuit.verdict.load)) // connected
        yield* server.pause
        const fiber = yield* Effect.fork(Effect.either(circuit.verdict.load))
        yield* suspended(fiber, "the load to be sent, its deadline started")
        yield* TestClock.adjust("149 millis")
        assert.isNull(fiber.unsafePoll())
        yield* TestClock.adjust("1 millis")
        const result = yield* Fiber.join(fiber)
        yield* server.resume
        assert.isTrue(Either.isLeft(result), JSON.stringify(options))
        if (Either.isLeft(result)) {
          assert.strictEqual(result.left.operation, "load")
          assert.include(result.left.message, "no reply within the deadline of 150 ms")
          assert.strictEqual(result.left.store, "redis")
        }
      }
    })
  )

  it.scoped("silence past liveness tears the command connection down, with a warning that names the store", () =>
    Effect.gen(function* () {
      const server = yield* startServer
      const warnings: Array<string> = []
      const logger = Logger.make(({ message }) => void warnings.push(String(message)))
      const store = yield* storeOn({ url: server.url, deadline: "100 millis", liveness: "200 millis" }).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      const circuit = yield* store.connect("quiet")
      assert.isTrue(Option.isNone(yield* circuit.verdict.load))
      yield* server.pause
      const fiber = yield* Effect.fork(Effect.either(circuit.verdict.load))
      yield* suspended(fiber, "the load to be sent, its deadline started")
      yield* TestClock.adjust("100 millis")
      assert.isTrue(Either.isLeft(yield* Fiber.join(fiber)))
      for (let i = 0; i < 5; i++) yield* TestClock.adjust("50 millis")
      yield* server.resume
      assert.isTrue(
        warnings.some((w) => w.startsWith("RedisBreakerStore: no reply for") && w.includes("liveness 200 ms")),
        JSON.stringify(warnings)
      )
      // the connection comes back by itself
      assert.isTrue(yield* eventually(Effect.map(Effect.either(circuit.verdict.load), Either.isRight)))
    })
  )
})
