/**
 * Any interleaving of arrivals, completions (success, failure, drop), interruptions and the passing
 * of time: the limit never leaves [min, max], a call starts only under the limit, the limiter's
 * count of calls in flight is the truth, and a queue never holds a caller while a slot is free.
 */
import { Limit, Limiter } from "@circuitry/limiter"
import * as Edition from "@circuitry/core/Edition"
import { describe, it, runTest, TestClock, timeoutError, yieldNow } from "@circuitry/testkit"
import { Deferred, Effect, Fiber } from "effect"
import * as fc from "fast-check"
import { timeoutFor } from "../../../test-support/calibrate.js"

type Op =
  | { readonly _tag: "Arrive"; readonly partition: number }
  | { readonly _tag: "Finish"; readonly index: number; readonly how: "success" | "failure" | "drop" }
  | { readonly _tag: "Interrupt"; readonly index: number }
  | { readonly _tag: "Tick"; readonly millis: number }

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ _tag: fc.constant("Arrive" as const), partition: fc.integer({ min: 0, max: 2 }) })
  },
  {
    weight: 3,
    arbitrary: fc.record({
      _tag: fc.constant("Finish" as const),
      index: fc.nat(),
      how: fc.constantFrom("success" as const, "failure" as const, "drop" as const)
    })
  },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("Interrupt" as const), index: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("Tick" as const), millis: fc.integer({ min: 1, max: 400 }) }) }
)

const limitArb: fc.Arbitrary<{ readonly make: () => Limit.Limit; readonly min: number; readonly max: number }> =
  fc.oneof(
    fc.integer({ min: 1, max: 6 }).map((n) => ({ make: () => Limit.fixed(n), min: n, max: n })),
    fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 5 })).map(([min, extra]) => ({
      make: () => Limit.aimd({ initial: min, min, max: min + extra, backoff: 0.5, timeout: "300 millis" }),
      min,
      max: min + extra
    })),
    fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 5 })).map(([min, extra]) => ({
      // No timeout: AIMD reads latency (rttTolerance 1.5 by default).
      make: () => Limit.aimd({ initial: min, min, max: min + extra }),
      min,
      max: min + extra
    })),
    fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 5 })).map(([min, extra]) => ({
      make: () => Limit.gradient2({ initial: min, min, max: min + extra, queueSize: 1 }),
      min,
      max: min + extra
    })),
    fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 5 })).map(([min, extra]) => ({
      make: () => Limit.vegas({ initial: min, min, max: min + extra, probeMultiplier: 2 }),
      min,
      max: min + extra
    }))
  )

interface Call {
  readonly fiber: Edition.Fiber<unknown, unknown>
  readonly gate: Deferred.Deferred<void, unknown>
  started: boolean
  done: boolean
}

const check = (condition: boolean, message: string) => {
  if (!condition) throw new Error(message)
}

const scenario = (
  limit: { readonly make: () => Limit.Limit; readonly min: number; readonly max: number },
  queued: boolean,
  partitioned: boolean,
  ops: ReadonlyArray<Op>
) =>
  Effect.gen(function* () {
    const limiter = yield* Limiter.make({
      limit: limit.make(),
      ...(queued ? { queue: { size: 3, timeout: "200 millis" } } : {}),
      ...(partitioned ? { partitions: { a: 0.6, b: 0.3 } } : {})
    })
    const calls: Array<Call> = []
    let running = 0
    const settle = Effect.repeat(yieldNow, { times: 20 })
    for (const o of ops) {
      switch (o._tag) {
        case "Arrive": {
          const gate = yield* Deferred.make<void, unknown>()
          const call: Partial<Call> & { started: boolean; done: boolean } = { gate, started: false, done: false }
          const body = Effect.gen(function* () {
            call.started = true
            running++
            const now = yield* limiter.limit
            check(running <= limit.max, `running ${running} > max ${limit.max}`)
            // Without a queue a call starts in the same step as its admission: under the limit then.
            if (!queued) check(running <= now, `running ${running} > limit ${now}`)
            return yield* Deferred.await(gate).pipe(
              Effect.ensuring(
                Effect.sync(() => {
                  running--
                  call.done = true
                })
              )
            )
          })
          const partition = ["a", "b", undefined][o.partition]
          const fiber = yield* Edition.forkChild(Limiter.withLimiter(body, limiter, { partition }))
          calls.push(Object.assign(call, { fiber }) as Call)
          break
        }
        case "Finish": {
          const live = calls.filter((c) => c.started && !c.done)
          if (live.length === 0) break
          const c = live[o.index % live.length]!
          if (o.how === "success") yield* Deferred.succeed(c.gate, undefined)
          else if (o.how === "failure") yield* Deferred.fail(c.gate, "boom")
          else yield* Deferred.fail(c.gate, timeoutError())
          break
        }
        case "Interrupt": {
          const pending = calls.filter((c) => !c.done)
          if (pending.length === 0) break
          yield* Fiber.interrupt(pending[o.index % pending.length]!.fiber)
          break
        }
        case "Tick":
          yield* TestClock.adjust(o.millis)
          break
      }
      yield* settle
      const snapshot = yield* limiter.snapshot
      check(
        snapshot.limit >= limit.min && snapshot.limit <= limit.max,
        `limit ${snapshot.limit} outside [${limit.min}, ${limit.max}]`
      )
      check(snapshot.inFlight === running, `inFlight ${snapshot.inFlight}, but ${running} running`)
      if (!partitioned && snapshot.queued > 0) {
        check(snapshot.inFlight >= snapshot.limit, `${snapshot.queued} queued with a free slot`)
      }
    }
    // Everything ends: no slot is leaked.
    for (const c of calls) yield* Fiber.interrupt(c.fiber)
    yield* settle
    check((yield* limiter.inFlight) === 0, "a slot leaked")
    check((yield* limiter.snapshot).queued === 0, "a waiter leaked")
  })

const property = fc.asyncProperty(
  limitArb,
  fc.boolean(),
  fc.boolean(),
  fc.array(op, { minLength: 1, maxLength: 60 }),
  (limit, queued, partitioned, ops) => runTest(scenario(limit, queued, partitioned, ops))
)
const RUNS = 150

// Virtual time: only the CPU it takes depends on the machine. The timeout is relative to a tenth
// of the runs, timed on this machine as the file is collected (test-support/calibrate.ts).
const timeout = await timeoutFor(() => fc.assert(property, { numRuns: RUNS / 10 }), 10)

describe("model", () => {
  it("the limit stays in [min, max] and calls start only under it, in any interleaving", { timeout }, async () => {
    await fc.assert(property, { numRuns: RUNS })
  })
})
