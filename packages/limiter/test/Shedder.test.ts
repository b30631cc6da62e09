/**
 * The shedder on the Effect Clock, with the loop signal given by the test: sampled every
 * `sampleEvery` as TestClock moves, so each case is deterministic.
 */
import { Shedder } from "@circuitry/limiter"
import { assert, counterCount, describe, gaugeValue, histogramOf, it, TestClock, yieldNow } from "@circuitry/testkit"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"

const busy = { delayMillis: 0, utilization: 1 }
const idle = { delayMillis: 0, utilization: 0.2 }

const withSignal = (name: string, options?: Shedder.Options) =>
  Effect.gen(function* () {
    const signal = yield* Ref.make<Shedder.LoopSignal>(busy)
    const shedder = yield* Shedder.make({ name, loop: Ref.get(signal), ...options })
    yield* yieldNow // the sampler takes its first sample
    return { shedder, set: (s: Shedder.LoopSignal) => Ref.set(signal, s) }
  })

const verdict = (shedder: Shedder.Shedder, waited: number) =>
  Effect.match(shedder.admit(waited), { onFailure: (e) => e.reason, onSuccess: () => "admit" })

describe("Shedder", () => {
  it.scoped("a saturated loop for a whole interval makes the queue standing; an idle sample ends it", () =>
    Effect.gen(function* () {
      const { set, shedder } = yield* withSignal("standing")
      assert.strictEqual(yield* verdict(shedder, 100), "admit") // a burst
      yield* TestClock.adjust("499 millis")
      assert.strictEqual(yield* verdict(shedder, 100), "admit")
      assert.isFalse((yield* shedder.snapshot).standing)
      yield* TestClock.adjust("1 millis")
      assert.isTrue((yield* shedder.snapshot).standing)
      assert.strictEqual(yield* verdict(shedder, 100), "standing")
      assert.strictEqual(yield* verdict(shedder, 50), "admit")
      yield* set(idle)
      yield* TestClock.adjust("20 millis") // the next sample sees time to spare
      assert.deepStrictEqual(yield* shedder.snapshot, {
        name: "standing",
        standing: false,
        saturated: false,
        loop: idle
      })
      assert.strictEqual(yield* verdict(shedder, 100), "admit")
    })
  )

  it.scoped("a sample's delay is reported, not added to the wait of every request after it", () =>
    Effect.gen(function* () {
      const { set, shedder } = yield* withSignal("delay")
      yield* set({ delayMillis: 460, utilization: 0.95 }) // one turn of the loop ran 460 ms late
      yield* TestClock.adjust("20 millis")
      assert.deepStrictEqual((yield* shedder.snapshot).loop, { delayMillis: 460, utilization: 0.95 })
      assert.strictEqual(yield* verdict(shedder, 40), "admit") // a request read after that turn: 40 ms
      assert.strictEqual(yield* gaugeValue(Shedder.loopDelay, { shedder: "delay" }), 460)
    })
  )

  it.scoped(
    "a sample that is overdue counts as loop delay: the turn of the loop that is reading requests has run long",
    () =>
      Effect.gen(function* () {
        const gate = yield* Deferred.make<void>()
        const signals = yield* Ref.make(0)
        // the first sample answers, the next one hangs, as a timer does behind a busy loop
        const loop = Effect.flatMap(
          Ref.getAndUpdate(signals, (n) => n + 1),
          (n) => (n === 0 ? Effect.succeed(idle) : Effect.as(Deferred.await(gate), idle))
        )
        const shedder = yield* Shedder.make({ name: "late", loop })
        yield* yieldNow
        yield* TestClock.adjust("20 millis") // the second sample is due now and does not come back
        assert.strictEqual(yield* verdict(shedder, 10), "admit")
        // its timer fired at 20 ms: at 480 ms it is 440 ms late, 450 ms with the 10 ms measured, a burst
        yield* TestClock.adjust("460 millis")
        assert.strictEqual(yield* verdict(shedder, 10), "admit")
        yield* TestClock.adjust("51 millis")
        assert.strictEqual(yield* verdict(shedder, 10), "overdue") // 491 + 10 ms > 500 ms
        yield* Deferred.succeed(gate, undefined)
      })
  )

  it.scoped("a shed is a LoadShedError with the wait and a retry after one interval, counted by reason", () =>
    Effect.gen(function* () {
      const { shedder } = yield* withSignal("errors", { interval: "800 millis", target: "10 millis" })
      yield* TestClock.adjust("800 millis")
      const error = yield* Effect.flip(shedder.admit(30))
      assert.strictEqual(error._tag, "LoadShedError")
      assert.strictEqual(error.shedder, "errors")
      assert.strictEqual(error.reason, "standing")
      assert.strictEqual(error.waitedMillis, 30)
      assert.strictEqual(error.retryAfterMillis, 800)
      assert.include(error.message, `shedder "errors" shed a request that waited 30 ms`)
      yield* Effect.flip(shedder.admit(900))
      const count = (reason: string) => counterCount(Shedder.shedTotal, { shedder: "errors", reason })
      assert.strictEqual(yield* count("standing"), 1)
      assert.strictEqual(yield* count("overdue"), 1)
      const waits = yield* histogramOf(Shedder.waited, { shedder: "errors" })
      assert.strictEqual(waits.count, 2)
      assert.strictEqual(waits.max, 900)
    })
  )

  it.scoped("without a loop input, a request served within target marks the queue empty (CoDel's own rule)", () =>
    Effect.gen(function* () {
      const shedder = yield* Shedder.make({ name: "no-loop", loop: false })
      yield* TestClock.adjust("500 millis")
      assert.strictEqual(yield* verdict(shedder, 100), "standing")
      assert.strictEqual(yield* verdict(shedder, 10), "admit")
      assert.strictEqual(yield* verdict(shedder, 100), "admit")
      yield* TestClock.adjust("500 millis")
      assert.strictEqual(yield* verdict(shedder, 100), "standing")
    })
  )

  it.live(
    "the Node loop input (real time, as the loop is): blocks of the loop show as delay and saturation in one sample",
    () =>
      Effect.gen(function* () {
        const shedder = yield* Shedder.make({ name: "node", sampleEvery: "20 millis" })
        // blocks of 80 ms with a turn of the loop between them: the histogram's timer cannot fire in one
        const block = Effect.sync(() => {
          const start = performance.now()
          while (performance.now() - start < 80) {
            // busy
          }
        })
        yield* Effect.forkScoped(Effect.forever(Effect.andThen(block, Effect.sleep("1 millis"))))
        // the sampler runs on the next turns of the loop: wait for the sample that saw the block
        const sampled: Effect.Effect<Shedder.Snapshot> = Effect.flatMap(shedder.snapshot, (s) =>
          s.loop.delayMillis >= 50 && s.saturated
            ? Effect.succeed(s)
            : Effect.andThen(Effect.sleep("5 millis"), sampled)
        )
        // A deadline for the event only: on a busy machine (CI runs other files beside this one) the
        // sampler's turn can come late; what is asserted of the sample does not change.
        const seen = yield* Effect.timeout(sampled, "20 seconds")
        assert.isAtLeast(seen.loop.delayMillis, 50)
        assert.isAtLeast(seen.loop.utilization, 0.9)
      }).pipe(Effect.scoped)
  )

  it.effect("options are validated once into InvalidLimiterOptions naming the option and the rule", () =>
    Effect.gen(function* () {
      const message = (options: Shedder.Options) =>
        Effect.map(Effect.flip(Effect.scoped(Shedder.make({ loop: false, ...options }))), (e) => e.message)
      assert.strictEqual(
        yield* message({ target: "0 millis" }),
        `target must be a finite duration > 0, got "0 millis" (shedder "default")`
      )
      assert.strictEqual(
        yield* message({ target: "1 second", interval: "1 second" }),
        `interval (1000 ms) must be longer than target (1000 ms) (shedder "default")`
      )
      assert.strictEqual(
        yield* message({ utilization: 1.5 }),
        `utilization must be a number with 0 < utilization <= 1, got 1.5 (shedder "default")`
      )
      assert.strictEqual(
        yield* message({ sampleEvery: "1 second" }),
        `sampleEvery (1000 ms) must be at most interval (500 ms) (shedder "default")`
      )
      assert.strictEqual(yield* message({ name: "" }), `name must be a non-empty string, got ""`)
      assert.strictEqual(
        yield* message({ loop: 3 as never }),
        `loop must be a boolean or an Effect of a LoopSignal, got 3 (shedder "default")`
      )
    })
  )
})
