/**
 * Effect 3 only: a test of hardening.test.ts that waits until the background writer has failed and
 * set its next try on the TestClock (`TestClock.sleeps`). Effect 4's TestClock keeps its pending
 * sleeps to itself (effect/testing/TestClock: no `sleeps`), and no public reading of them, or of a
 * fiber's status, replaces it; without the wait, the test could pass with a writer that never
 * tried again. The rest of the file runs on both majors.
 */
import { CircuitBreaker } from "@circuitry/breaker"
import { assert, describe, it, result, TestClock } from "@circuitry/testkit"
import { Chunk, Clock, Effect, HashMap, Logger, Option } from "effect"
import { failing, member } from "./utils/members.js"
import { eventually, startServer, uniquePrefix } from "./utils/server.js"
import { waitFor } from "./utils/wait.js"

/** Waits until a sleep on the TestClock ends at `at`: a timer the test is about to move the Clock past is set. */
const clockWaitsUntil = (at: number, what: string): Effect.Effect<void> =>
  waitFor(
    what,
    Effect.map(TestClock.sleeps(), (sleeps) => Chunk.some(sleeps, (end) => end === at))
  )

describe("RedisBreakerStore, breaker side (Effect 3)", () => {
  it.scoped(
    "an unreachable store is logged once per outage and once on recovery, and shows in the snapshot",
    () =>
      Effect.gen(function* () {
        const logs: Array<{ level: string; message: string; breaker: unknown }> = []
        const logger = Logger.make(({ annotations, logLevel, message }) => {
          const text = Array.isArray(message) ? String(message[0]) : String(message)
          if (text.includes("shared store")) {
            logs.push({ level: logLevel.label, message: text, breaker: HashMap.get(annotations, "breaker") })
          }
        })
        yield* Effect.gen(function* () {
          const server = yield* startServer
          const prefix = uniquePrefix("outage-log")
          const a = yield* member(server.url, prefix, "payments")
          assert.deepStrictEqual((yield* a.snapshot).store, { connected: true })
          yield* server.kill
          // failures the background writer cannot send: one warning, however often it tries
          for (let i = 0; i < 3; i++) {
            yield* result(CircuitBreaker.withBreaker(failing, a))
            yield* a.reset
          }
          // the writer tries again each second of the Clock: each time, it has failed and waits the next
          const triedAgain = Effect.flatMap(Clock.currentTimeMillis, (now) =>
            clockWaitsUntil(now + 1_000, "the background writer to fail and wait a second to try again")
          )
          yield* triedAgain
          for (let i = 0; i < 5; i++) {
            yield* TestClock.adjust("1 second")
            yield* triedAgain
          }
          assert.deepStrictEqual((yield* a.snapshot).store, { connected: false })
          assert.strictEqual(logs.length, 1, JSON.stringify(logs))
          assert.strictEqual(logs[0].level, "WARN")
          assert.deepStrictEqual(logs[0].breaker, Option.some("payments"))
          assert.include(logs[0].message, `circuit "payments": shared store (redis) unreachable`)
          yield* server.restart
          assert.isTrue(
            yield* eventually(
              Effect.gen(function* () {
                yield* TestClock.adjust("1 second")
                return (yield* a.snapshot).store?.connected === true
              }),
              10_000,
              50
            )
          )
          assert.strictEqual(logs.length, 2, JSON.stringify(logs))
          assert.include(logs[1].message, `circuit "payments": shared store answers again`)
        }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
      }),
    20_000
  )
})
