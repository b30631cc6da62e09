import { CircuitBreaker } from "@circuitry/breaker"
import * as Edition from "@circuitry/core/Edition"
import { Limit, Limiter } from "@circuitry/limiter"
import {
  assert,
  counterCount,
  describe,
  gaugeValue,
  histogramOf,
  interruptCause,
  it,
  TestClock,
  timeoutError,
  yieldNow
} from "@circuitry/testkit"
import { Cause, Deferred, Effect, Exit, Fiber, Option, Stream } from "effect"
import { untilInFlight } from "./utils.js"

/** The rejection a call through a limiter failed with (run it under `Effect.flip`). */
const rejectedWith = (error: unknown): Limiter.LimiterRejectedError => {
  if (!(error instanceof Limiter.LimiterRejectedError)) {
    throw new Error(`expected a LimiterRejectedError, got ${JSON.stringify(error)}`)
  }
  return error
}

const fork = Edition.forkChild

/** A call that holds its slot until `gate` is completed. */
const held = (gate: Deferred.Deferred<void>, ran?: Array<string>, label?: string) =>
  Effect.suspend(() => {
    if (ran !== undefined && label !== undefined) ran.push(label)
    return Deferred.await(gate)
  })

describe("Limiter", () => {
  it.scoped("at most `limit` calls run at once; a call over it is rejected and never runs", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({ name: "db", limit: Limit.fixed(2) })
      const gate = yield* Deferred.make<void>()
      const fibers = yield* Effect.forEach([1, 2], () => fork(Limiter.withLimiter(held(gate), limiter)))
      yield* untilInFlight(limiter, 2)
      let ran = false
      const result = yield* Effect.flip(
        Limiter.withLimiter(
          Effect.sync(() => (ran = true)),
          limiter
        )
      )
      const error = rejectedWith(result)
      assert.isFalse(ran)
      assert.strictEqual(error.limiter, "db")
      assert.strictEqual(error.limit, 2)
      assert.strictEqual(error.inFlight, 2)
      assert.strictEqual(error.message, `limiter "db" is at its limit of 2 with 2 in flight; retry after 0 ms`)
      yield* Deferred.succeed(gate, undefined)
      yield* Effect.forEach(fibers, Fiber.join)
      assert.strictEqual(yield* limiter.inFlight, 0)
      assert.deepStrictEqual((yield* limiter.snapshot).rejected, 1)
    })
  )

  it.scoped("retryAfterMillis is estimated from the round trips so far", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({ limit: Limit.fixed(1) })
      const slow = yield* fork(Limiter.withLimiter(Effect.sleep("200 millis"), limiter))
      yield* TestClock.adjust("200 millis")
      yield* Fiber.join(slow)
      const again = yield* fork(Limiter.withLimiter(Effect.sleep("1 second"), limiter))
      yield* untilInFlight(limiter, 1)
      const error = rejectedWith(yield* Effect.flip(Limiter.withLimiter(Effect.void, limiter)))
      assert.strictEqual(error.retryAfterMillis, 200)
      yield* Fiber.interrupt(again)
    })
  )

  it.scoped("an interrupted call frees its slot and is no sample", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({ limit: Limit.aimd({ initial: 1, min: 1, max: 10 }) })
      const fiber = yield* fork(Limiter.withLimiter(Effect.never, limiter))
      yield* untilInFlight(limiter, 1)
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(yield* limiter.inFlight, 0)
      assert.strictEqual(yield* limiter.limit, 1) // a success at 1 in flight would have made it 2
      yield* Limiter.withLimiter(Effect.void, limiter)
      assert.strictEqual(yield* limiter.limit, 2)
    })
  )

  it.scoped("interrupting a fiber frees every slot it holds, nested calls through two limiters included", () =>
    Effect.gen(function* () {
      const outer = yield* Limiter.make({ limit: Limit.aimd({ initial: 1, min: 1, max: 10 }) })
      const inner = yield* Limiter.make({ limit: Limit.aimd({ initial: 1, min: 1, max: 10 }) })
      const fiber = yield* fork(Limiter.withLimiter(Limiter.withLimiter(Effect.never, inner), outer))
      yield* untilInFlight(inner, 1)
      assert.strictEqual(yield* outer.inFlight, 1)
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(yield* outer.inFlight, 0)
      assert.strictEqual(yield* inner.inFlight, 0)
      // no samples: a success at 1 in flight would have raised each limit to 2
      assert.strictEqual(yield* outer.limit, 1)
      assert.strictEqual(yield* inner.limit, 1)
      // the fiber that made the last calls is gone; calls from this one still count
      yield* Limiter.withLimiter(Limiter.withLimiter(Effect.void, inner), outer)
      assert.strictEqual(yield* outer.limit, 2)
      assert.strictEqual(yield* inner.limit, 2)
    })
  )

  it.scoped("a fiber that goes on after an interrupted call keeps its other calls' samples", () =>
    Effect.gen(function* () {
      const outer = yield* Limiter.make({ limit: Limit.aimd({ initial: 1, min: 1, max: 10 }) })
      const inner = yield* Limiter.make({ limit: Limit.aimd({ initial: 1, min: 1, max: 10 }) })
      const gate = yield* Deferred.make<void>()
      const started = yield* Deferred.make<void>()
      // Only the inner call can be interrupted, and the fiber goes on after it: the outer call
      // then ends before the inner one is let go, out of nesting order, and its handler runs.
      const innerCall = Limiter.withLimiter(Effect.andThen(Deferred.succeed(started, undefined), Effect.never), inner)
      const fiber = yield* fork(
        Effect.uninterruptibleMask((restore) =>
          Limiter.withLimiter(Effect.andThen(Effect.exit(restore(innerCall)), Deferred.await(gate)), outer)
        )
      )
      yield* Deferred.await(started)
      const interrupting = yield* fork(Fiber.interrupt(fiber))
      yield* untilInFlight(inner, 1)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(interrupting)
      assert.strictEqual(yield* outer.inFlight, 0)
      assert.strictEqual(yield* inner.inFlight, 0)
      assert.strictEqual(yield* inner.limit, 1) // interrupted: no sample
      assert.strictEqual(yield* outer.limit, 2) // its handler ran: a success at 1 in flight
    })
  )

  it.scoped("a failure is a sample; a drop (timeout, BreakerOpenError, LimiterRejectedError) lowers the limit", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({ limit: Limit.aimd({ initial: 10, min: 1, max: 100, backoff: 0.5 }) })
      yield* Effect.exit(Limiter.withLimiter(Effect.fail("boom"), limiter))
      assert.strictEqual(yield* limiter.limit, 10) // 1 in flight of 10: no growth, no drop
      const timedOut = yield* fork(Effect.exit(Limiter.withLimiter(Effect.timeout(Effect.never, "1 second"), limiter)))
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(timedOut)
      assert.strictEqual(yield* limiter.limit, 5)
      yield* Effect.exit(
        Limiter.withLimiter(
          Effect.fail(new CircuitBreaker.BreakerOpenError({ breaker: "x", state: "Open", retryAfterMillis: 0 })),
          limiter
        )
      )
      assert.strictEqual(yield* limiter.limit, 2)
      assert.isTrue(Limiter.defaultIsDrop(Cause.die(timeoutError())))
      assert.isTrue(
        Limiter.defaultIsDrop(
          Cause.fail(new Limiter.LimiterRejectedError({ limiter: "x", limit: 1, inFlight: 1, retryAfterMillis: 0 }))
        )
      )
      assert.isTrue(Limiter.defaultIsDrop(Cause.fail({ _tag: "RequestError", cause: timeoutError() })))
      assert.isFalse(Limiter.defaultIsDrop(Cause.fail({ _tag: "Other" })))
      assert.isFalse(Limiter.defaultIsDrop(Cause.die(new Error("timeout"))))
      assert.isFalse(Limiter.defaultIsDrop(interruptCause))
    })
  )

  it.scoped("a custom isDrop decides", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({
        limit: Limit.aimd({ initial: 10, min: 1, max: 100, backoff: 0.5 }),
        isDrop: (cause) => Edition.failures(cause).some((e) => e === "overloaded")
      })
      yield* Effect.exit(Limiter.withLimiter(Effect.fail("overloaded"), limiter))
      assert.strictEqual(yield* limiter.limit, 5)
    })
  )

  it.scoped("drops within one round trip of a backoff are one congestion event: the limit backs off once", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({ limit: Limit.aimd({ initial: 10, min: 1, max: 100, backoff: 0.5 }) })
      const timingOut = Effect.exit(Limiter.withLimiter(Effect.timeout(Effect.never, "100 millis"), limiter))
      // Ten calls admitted under the limit of 10 time out together: one backoff, not ten (10 x 0.5^10).
      const burst = yield* Effect.forEach(
        Array.from({ length: 10 }, () => timingOut),
        fork
      )
      yield* untilInFlight(limiter, 10)
      yield* TestClock.adjust("100 millis")
      yield* Effect.forEach(burst, Fiber.join)
      assert.strictEqual(yield* limiter.limit, 5)
      // A call admitted after the backoff that times out too is a new event.
      const next = yield* fork(timingOut)
      yield* untilInFlight(limiter, 1)
      yield* TestClock.adjust("100 millis")
      yield* Fiber.join(next)
      assert.strictEqual(yield* limiter.limit, 2)
    })
  )

  it.scoped("the limit grows by one per round trip: calls admitted before an increase do not increase it again", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({ limit: Limit.aimd({ initial: 4, min: 1, max: 100 }) })
      const call = Limiter.withLimiter(Effect.sleep("20 millis"), limiter)
      // The call admitted last (at 4 in flight) comes back first, 1 ms ahead of the one before it:
      // calls due at one instant wake last-in first on Effect 3 and first-in first on Effect 4
      // (docs/editions.md), and a first sample at 1 in flight would start the round with no increase.
      const first = yield* Effect.forEach([3, 2, 1, 0], (late) =>
        fork(Limiter.withLimiter(Effect.sleep(20 + late), limiter))
      )
      yield* untilInFlight(limiter, 4)
      yield* TestClock.adjust("23 millis")
      yield* Effect.forEach(first, Fiber.join)
      assert.strictEqual(yield* limiter.limit, 5) // four successes, the first at 4 in flight: +1, not +4
      const second = yield* Effect.forEach(
        Array.from({ length: 5 }, () => call),
        fork
      )
      yield* untilInFlight(limiter, 5)
      yield* TestClock.adjust("20 millis")
      yield* Effect.forEach(second, Fiber.join)
      assert.strictEqual(yield* limiter.limit, 6)
    })
  )

  it.scoped("changes carries every change of the limit with the Clock's time", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({ limit: Limit.aimd({ initial: 1, min: 1, max: 3 }) })
      const changes = yield* fork(Stream.runCollect(Stream.take(limiter.changes, 2)))
      yield* yieldNow
      yield* TestClock.adjust("5 seconds")
      for (let i = 0; i < 4; i++) yield* Limiter.withLimiter(Effect.void, limiter)
      const collected = Array.from(yield* Fiber.join(changes))
      assert.deepStrictEqual(collected, [
        { limit: 2, at: 5000 },
        { limit: 3, at: 5000 }
      ])
    })
  )

  it.scoped("metrics: limit, in flight, calls by outcome, round trips; labelled by limiter and partition", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({ name: "metered", limit: Limit.fixed(1), partitions: { web: 1 } })
      yield* Limiter.withLimiter(Effect.sleep("30 millis").pipe(fork, Effect.flatMap(Fiber.join)), limiter, {
        partition: "web"
      }).pipe(
        fork,
        Effect.tap(() => TestClock.adjust("30 millis")),
        Effect.flatMap(Fiber.join)
      )
      const gate = yield* Deferred.make<void>()
      const busy = yield* fork(Limiter.withLimiter(held(gate), limiter, { partition: "web" }))
      yield* untilInFlight(limiter, 1)
      yield* Effect.exit(Limiter.withLimiter(Effect.void, limiter, { partition: "web" }))
      const tagged = { limiter: "metered" }
      const web = { limiter: "metered", partition: "web" }
      const calls = (outcome: string) => counterCount(Limiter.callsTotal, { ...web, outcome })
      assert.strictEqual(yield* calls("success"), 1)
      assert.strictEqual(yield* calls("rejected"), 1)
      assert.strictEqual(yield* gaugeValue(Limiter.limitGauge, tagged), 1)
      assert.strictEqual(yield* gaugeValue(Limiter.inFlightGauge, tagged), 1)
      assert.strictEqual(yield* gaugeValue(Limiter.inFlightGauge, web), 1)
      const rtt = yield* histogramOf(Limiter.roundTrip, web)
      assert.strictEqual(rtt.count, 1)
      assert.strictEqual(rtt.sum, 30)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(busy)
      assert.strictEqual(yield* gaugeValue(Limiter.inFlightGauge, tagged), 0)
    })
  )

  it.scoped("withLimiter takes a value or a tag, data-first or data-last, with a partition", () =>
    Effect.gen(function* () {
      class Api extends Edition.KeyClass<Api, Limiter.Limiter>()("Api") {}
      const limiter = yield* Limiter.make({ limit: Limit.fixed(1), partitions: { a: 1 } })
      assert.isTrue(Limiter.isLimiter(limiter))
      assert.isFalse(Limiter.isLimiter({ name: "x" }))
      assert.strictEqual(yield* Limiter.withLimiter(Effect.succeed(1), limiter), 1)
      assert.strictEqual(yield* Effect.succeed(2).pipe(Limiter.withLimiter(limiter, { partition: "a" })), 2)
      const viaTag = Effect.succeed(3).pipe(Limiter.withLimiter(Api, { partition: "a" }))
      assert.strictEqual(yield* Effect.provideService(viaTag, Api, limiter), 3)
      const dataFirst = Limiter.withLimiter(Effect.succeed(4), Api, { partition: "a" })
      assert.strictEqual(yield* Effect.provideService(dataFirst, Api, limiter), 4)
    })
  )

  it.effect("layer provides a limiter for a tag", () =>
    Effect.gen(function* () {
      class Db extends Edition.KeyClass<Db, Limiter.Limiter>()("Db") {}
      const n = yield* Effect.succeed(5).pipe(
        Limiter.withLimiter(Db),
        Effect.provide(Limiter.layer(Db, { name: "db", limit: Limit.fixed(3) }))
      )
      assert.strictEqual(n, 5)
    })
  )

  it.effect("every bad option is an InvalidLimiterOptions that names it", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<[Limiter.Options, string]> = [
        [{ name: "" }, "name must be a non-empty string"],
        [{ limit: {} as never }, "limit must be made by"],
        [{ limit: Limit.fixed(0) }, "fixed limit must be a whole number >= 1, got 0"],
        [{ limit: Limit.fixed(1.5) }, "fixed limit must be a whole number >= 1"],
        [{ limit: Limit.aimd({ backoff: 1 }) }, "aimd backoff must be a number with 0 < backoff < 1, got 1"],
        [{ limit: Limit.aimd({ backoff: 0 }) }, "aimd backoff"],
        [{ limit: Limit.aimd({ timeout: "-1 second" }) }, "aimd timeout must be a finite duration > 0"],
        [{ limit: Limit.aimd({ min: 10, max: 5 }) }, "aimd max must be a whole number >= min (10), got 5"],
        [
          { limit: Limit.aimd({ initial: 300 }) },
          "aimd initial must be a whole number in [min, max] = [20, 200], got 300"
        ],
        [{ limit: Limit.gradient2({ min: 0 }) }, "gradient2 min must be a whole number >= 1, got 0"],
        [{ limit: Limit.gradient2({ smoothing: 0 }) }, "gradient2 smoothing"],
        [{ limit: Limit.gradient2({ longWindow: 0 }) }, "gradient2 longWindow"],
        [{ limit: Limit.gradient2({ rttTolerance: 0.5 }) }, "gradient2 rttTolerance must be a number >= 1, got 0.5"],
        [{ limit: Limit.gradient2({ queueSize: -1 }) }, "gradient2 queueSize"],
        [{ limit: Limit.vegas({ alpha: Number.NaN }) }, "vegas alpha"],
        [{ limit: Limit.vegas({ smoothing: 2 }) }, "vegas smoothing"],
        [{ limit: Limit.vegas({ probeMultiplier: 0 }) }, "vegas probeMultiplier"],
        [{ limit: Limit.windowed(Limit.fixed(0)) }, "fixed limit must be a whole number >= 1, got 0"],
        [{ limit: Limit.windowed({} as never) }, "windowed needs a limit made by"],
        [
          { limit: Limit.windowed(Limit.aimd(), { minWindow: "50 millis" }) },
          "windowed minWindow must be a duration of at least 100 millis"
        ],
        [
          { limit: Limit.windowed(Limit.aimd(), { minWindow: "2 seconds" }) },
          "windowed maxWindow must be a duration of at least minWindow"
        ],
        [
          { limit: Limit.windowed(Limit.aimd(), { windowSize: 5 }) },
          "windowed windowSize must be a whole number >= 10, got 5"
        ],
        [{ queue: { size: -1 } }, "queue.size must be a whole number between 0 and 1000000, got -1"],
        [{ queue: { size: 1, timeout: "forever" as never } }, "queue.timeout must be a finite duration >= 0"],
        // numbers show as numbers, strings as strings
        [{ queue: { timeout: -5 } }, "queue.timeout must be a finite duration >= 0, got -5 ("],
        [{ queue: { size: "2" as never } }, 'queue.size must be a whole number between 0 and 1000000, got "2" ('],
        [
          { limit: Limit.aimd({ backoff: "0.5" as never }) },
          'aimd backoff must be a number with 0 < backoff < 1, got "0.5"'
        ],
        [{ partitions: { a: 0 } }, "partitions.a must be a share with 0 < share <= 1, got 0"],
        [{ partitions: { a: 0.7, b: 0.4 } }, "partitions' shares must add up to at most 1"],
        [{ isDrop: "yes" as never }, `isDrop must be a function of a Cause, got "yes" (limiter "default")`],
        // an object's fields are decoded after the object, under its path; every message names the limiter
        ["fast" as never, 'options must be an object, got "fast"'],
        [{ name: 3 as never, queue: { size: -1 } }, "name must be a non-empty string, got 3"],
        [{ queue: 3 as never }, 'queue must be an object, got 3 (limiter "default")'],
        [
          { name: "db", queue: { size: 1.5 } },
          'queue.size must be a whole number between 0 and 1000000, got 1.5 (limiter "db")'
        ],
        [{ partitions: "a" as never }, 'partitions must be an object of shares by name, got "a" (limiter "default")'],
        [
          { name: "db", partitions: { a: 0.5, b: "x" as never } },
          'partitions.b must be a share with 0 < share <= 1, got "x" (limiter "db")'
        ],
        [{ name: "db", limit: Limit.fixed(0) }, 'limit: fixed limit must be a whole number >= 1, got 0 (limiter "db")'],
        [{ limit: Limit.aimd({ rttTolerance: 1 }) }, "limit: aimd rttTolerance must be a number > 1, got 1 ("],
        [{ limit: Limit.aimd({ timeout: 0 }) }, "limit: aimd timeout must be a finite duration > 0, got 0 ("],
        [{ limit: Limit.aimd({ max: 2.5 }) }, "limit: aimd max must be a whole number, got 2.5 ("],
        [{ limit: Limit.aimd("fast" as never) }, 'limit: aimd options must be an object, got "fast" ('],
        [
          { limit: Limit.gradient2({ queueSize: -1 }) },
          "limit: gradient2 queueSize must be a number >= 0 or a function of the limit, got -1 ("
        ],
        [
          { limit: Limit.vegas({ beta: -1 }) },
          "limit: vegas beta must be a number >= 0 or a function of the limit, got -1 ("
        ],
        [
          { limit: Limit.vegas({ alpha: 6, beta: 3 }) },
          "limit: vegas beta must be a number >= alpha or a function of the limit, got 3 ("
        ],
        [
          { limit: Limit.windowed(Limit.aimd(), { maxWindow: "-1 second" }) },
          'limit: windowed maxWindow must be a finite duration >= 0, got "-1 second" ('
        ]
      ]
      for (const [options, message] of cases) {
        const exit = yield* Effect.exit(Effect.scoped(Limiter.make(options)))
        assert.isTrue(Exit.isFailure(exit), JSON.stringify(options))
        const error = Exit.isFailure(exit) ? Option.getOrUndefined(Edition.findError(exit.cause)) : undefined
        assert.isTrue(error instanceof Limiter.InvalidLimiterOptions)
        assert.include(error?.message ?? "", message)
      }
    })
  )
})
