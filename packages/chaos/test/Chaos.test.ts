import { Chaos, Scenario } from "@circuitry/chaos"
import { Edition } from "@circuitry/core"
import { assert, counterCount, describe, hasDies, it, TestClock, yieldNow } from "@circuitry/testkit"
import { Data, Effect, Exit, Fiber, Layer } from "effect"

class Boom extends Data.TaggedError("Boom")<{ readonly n: number }> {}

/** Fails with Boom while active: one way to see, at an instant, whether a fault applies. */
const always = Chaos.fail({ rate: 1, error: () => new Boom({ n: 1 }) })

describe("Chaos.inject", () => {
  it.effect("is dual, and its error type is the effect's and the faults'", () =>
    Effect.gen(function* () {
      const data = yield* Effect.exit(Chaos.inject(Effect.succeed(1), always))
      const piped = yield* Effect.exit(Effect.succeed(1).pipe(Chaos.inject(Chaos.latency("0 millis"), always)))
      // The types: Effect<number, Boom | InvalidChaosOptions>; a latency adds no error of its own.
      const typed: Effect.Effect<number, Boom | Chaos.InvalidChaosOptions> = Chaos.inject(
        Effect.succeed(1),
        Chaos.latency("1 millis"),
        always
      )
      const none: Effect.Effect<number, Chaos.InvalidChaosOptions> = Effect.succeed(1).pipe(
        Chaos.inject(Chaos.latency("1 millis"))
      )
      assert.isDefined(typed)
      assert.isDefined(none)
      assert.deepStrictEqual(data, Exit.fail(new Boom({ n: 1 })))
      assert.deepStrictEqual(piped, Exit.fail(new Boom({ n: 1 })))
    })
  )

  it.effect("a failed call never runs the effect", () =>
    Effect.gen(function* () {
      let runs = 0
      const call = Effect.sync(() => runs++).pipe(Chaos.inject(always))
      yield* Effect.exit(call)
      yield* Effect.exit(call)
      assert.strictEqual(runs, 0)
      yield* Chaos.inject(
        Effect.sync(() => runs++),
        Chaos.fail({ rate: 0, error: () => "never" })
      )
      assert.strictEqual(runs, 1)
    })
  )

  it.effect("honours a window to the millisecond (TestClock: scenario time is Clock time)", () =>
    Effect.gen(function* () {
      const windowed = Chaos.inject(Effect.succeed("ok"), Chaos.during({ from: "1 second", to: "2 seconds" }, always))
      const at = (millis: number) =>
        Effect.gen(function* () {
          yield* TestClock.setTime(millis)
          return Exit.isFailure(yield* Effect.exit(windowed))
        })
      assert.deepStrictEqual(
        [yield* at(999), yield* at(1000), yield* at(1999), yield* at(2000)],
        [false, true, true, false]
      )
    })
  )

  it.effect("waits a fixed latency exactly, and nested windows apply where both do", () =>
    Effect.gen(function* () {
      const slow = Chaos.inject(Effect.succeed("ok"), Chaos.latency("250 millis"))
      const fiber = yield* Edition.forkChild(slow)
      yield* TestClock.adjust("249 millis")
      assert.isUndefined(Edition.pollUnsafe(fiber))
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(yield* Fiber.join(fiber), "ok")

      const nested = Chaos.during(
        { from: "10 seconds", to: "20 seconds" },
        Chaos.during({ from: "15 seconds", to: "30 seconds" }, always)
      )
      const failsAt = (millis: number) =>
        Effect.gen(function* () {
          yield* TestClock.setTime(millis)
          return Exit.isFailure(yield* Effect.exit(Chaos.inject(Effect.void, nested)))
        })
      assert.deepStrictEqual(
        [yield* failsAt(14_999), yield* failsAt(15_000), yield* failsAt(19_999), yield* failsAt(20_000)],
        [false, true, true, false]
      )
    })
  )

  it.effect("a stall never answers; stallThenFail fails every stuck call when its window ends", () =>
    Effect.gen(function* () {
      const stalled = yield* Edition.forkChild(Chaos.inject(Effect.succeed("ok"), Chaos.stall))
      yield* TestClock.adjust("1 hour")
      assert.isUndefined(Edition.pollUnsafe(stalled))
      yield* Fiber.interrupt(stalled)

      yield* TestClock.setTime(0)
      const dropped = Chaos.during(
        { from: "10 seconds", to: "16 seconds" },
        Chaos.stallThenFail({ error: () => "reset" })
      )
      const call = Chaos.inject(Effect.succeed("ok"), dropped)
      yield* TestClock.setTime(10_000)
      const first = yield* Edition.forkChild(call)
      yield* TestClock.setTime(12_500)
      const second = yield* Edition.forkChild(call)
      yield* TestClock.setTime(15_999)
      assert.isUndefined(Edition.pollUnsafe(first))
      assert.isUndefined(Edition.pollUnsafe(second))
      yield* TestClock.setTime(16_000)
      assert.deepStrictEqual(yield* Fiber.await(first), Exit.fail("reset"))
      assert.deepStrictEqual(yield* Fiber.await(second), Exit.fail("reset"))
      assert.strictEqual(yield* call, "ok")
    })
  )

  it.effect("latency by p50/p99 draws a log-normal with those percentiles", () =>
    Effect.gen(function* () {
      const report = yield* Scenario.run({
        duration: "20 seconds",
        rate: 1000,
        request: () => Chaos.inject(Effect.void, Chaos.latency({ p50: "20 millis", p99: "200 millis" })),
        seed: 3
      })
      // 20,000 draws: the sample percentiles are within a few percent of the asked ones.
      assert.approximately(report.total.p50, 20, 1)
      assert.approximately(report.total.p99, 200, 20)
    })
  )

  it.effect("fails with InvalidChaosOptions that names the option and the rule, and never runs the effect", () =>
    Effect.gen(function* () {
      let runs = 0
      const message = (fault: Chaos.Fault<unknown>) =>
        Effect.gen(function* () {
          const exit = yield* Effect.exit(
            Chaos.inject(
              Effect.sync(() => runs++),
              fault
            )
          )
          assert.isTrue(Exit.isFailure(exit))
          assert.isFalse(Exit.isFailure(exit) && hasDies(exit.cause), "a typed failure, not a defect")
          const error = yield* Effect.flip(
            Chaos.inject(
              Effect.sync(() => runs++),
              fault
            )
          )
          assert.instanceOf(error, Chaos.InvalidChaosOptions)
          assert.strictEqual(error._tag, "InvalidChaosOptions")
          return (error as Chaos.InvalidChaosOptions).message
        })
      assert.strictEqual(
        yield* message(Chaos.fail({ rate: 1.5, error: () => "x" })),
        "Chaos.inject: fail.rate must be a number from 0 to 1, got 1.5"
      )
      assert.strictEqual(
        yield* message(Chaos.fail({ rate: 0.5, error: "x" as unknown as () => string })),
        'Chaos.inject: fail.error must be a function that makes the error, got "x"'
      )
      // A required option left out is refused by its rule, the same on both majors.
      assert.strictEqual(
        yield* message(Chaos.fail({ error: () => "x" } as unknown as { rate: number; error: () => string })),
        "Chaos.inject: fail.rate must be a number from 0 to 1, got undefined"
      )
      assert.strictEqual(
        yield* message(Chaos.stallThenFail({} as { error: () => string })),
        "Chaos.inject: stallThenFail.error must be a function that makes the error, got undefined"
      )
      assert.strictEqual(
        yield* message(Chaos.latency({ p50: "50 millis", p99: "10 millis" })),
        'Chaos.inject: latency.p99 must be a finite duration at least p50 (50 ms), got "10 millis"'
      )
      assert.strictEqual(
        yield* message(Chaos.latency({ p50: 0, p99: "10 millis" })),
        "Chaos.inject: latency.p50 must be a finite duration > 0, got 0"
      )
      assert.strictEqual(
        yield* message(Chaos.latency(-5)),
        "Chaos.inject: latency must be a finite duration >= 0, got -5"
      )
      assert.strictEqual(
        yield* message(Chaos.latency(Infinity)),
        "Chaos.inject: latency must be a finite duration >= 0, got Infinity"
      )
      assert.strictEqual(
        yield* message(Chaos.during({ from: "5 seconds", to: "1 second" }, Chaos.stall)),
        'Chaos.inject: during.to must be a duration after during.from (5000 ms), got "1 second"'
      )
      assert.strictEqual(
        yield* message(Chaos.during({ from: "-1 seconds", to: "1 second" }, Chaos.stall)),
        'Chaos.inject: during.from must be a finite duration >= 0, got "-1 seconds"'
      )
      assert.strictEqual(
        yield* message(Chaos.during({ from: "1 second", to: "5 seconds" }, Chaos.fail({ rate: -1, error: () => 1 }))),
        "Chaos.inject: fail.rate must be a number from 0 to 1, got -1"
      )
      assert.strictEqual(runs, 0)
    })
  )
})

interface Store {
  readonly name: string
  readonly get: (key: string) => Effect.Effect<string, Boom>
  readonly put: (key: string, value: string) => Effect.Effect<void, Boom>
  readonly size: Effect.Effect<number, Boom>
  readonly ping: Effect.Effect<boolean>
}
class StoreTag extends Edition.KeyClass<StoreTag, Store>()("test/Store") {}

const StoreLive = Layer.sync(StoreTag, () => {
  const map = new Map<string, string>([["a", "1"]])
  return {
    name: "memory",
    get: (key) => Effect.succeed(map.get(key) ?? ""),
    put: (key, value) => Effect.sync(() => void map.set(key, value)),
    size: Effect.sync(() => map.size),
    ping: Effect.succeed(true)
  }
})

describe("Chaos.layer", () => {
  it.effect("wraps every named member (methods and effects) and leaves the others alone", () =>
    Effect.gen(function* () {
      const store = yield* StoreTag
      assert.strictEqual(store.name, "memory")
      assert.deepStrictEqual(yield* Effect.exit(store.get("a")), Exit.fail(new Boom({ n: 1 })))
      assert.deepStrictEqual(yield* Effect.exit(store.size), Exit.fail(new Boom({ n: 1 })))
      // Not named: untouched, and still talking to the same service underneath.
      assert.strictEqual(yield* store.ping, true)
      yield* store.put("b", "2")
    }).pipe(
      Effect.provide(
        Chaos.layer(StoreTag, { get: always, size: [Chaos.latency("0 millis"), always] }).pipe(Layer.provide(StoreLive))
      )
    )
  )

  it.effect("keeps the service's type: a fault's error must be one the member can fail with", () =>
    Effect.gen(function* () {
      // @ts-expect-error ping cannot fail, so it takes no failing fault
      const wrong = Chaos.layer(StoreTag, { ping: always })
      // @ts-expect-error the service has no member "nope"
      const unknown = Chaos.layer(StoreTag, { nope: Chaos.stall })
      const right = Chaos.layer(StoreTag, { ping: Chaos.latency("1 millis"), get: [Chaos.stall, always] })
      assert.isDefined(wrong)
      assert.isDefined(unknown)
      assert.isDefined(right)
    })
  )

  it.effect("fails with InvalidChaosOptions naming the member and the rule", () =>
    Effect.gen(function* () {
      const build = (layer: Layer.Layer<StoreTag, Chaos.InvalidChaosOptions, StoreTag>) =>
        Effect.flip(Layer.build(layer.pipe(Layer.provide(StoreLive)))).pipe(
          Effect.scoped,
          Effect.map((e) => e.message)
        )
      assert.strictEqual(
        yield* build(Chaos.layer(StoreTag, { get: Chaos.fail({ rate: 2, error: () => new Boom({ n: 1 }) }) })),
        "Chaos.layer(test/Store).get: fail.rate must be a number from 0 to 1, got 2"
      )
      assert.strictEqual(
        yield* build(Chaos.layer(StoreTag, { ping: Chaos.stall }, { seed: -1 })),
        "Chaos.layer(test/Store): seed must be a whole number from 0 to 4294967295, got -1"
      )
      assert.strictEqual(
        yield* build(Chaos.layer(StoreTag, { ping: Chaos.stall }, { seed: 2 ** 32 })),
        "Chaos.layer(test/Store): seed must be a whole number from 0 to 4294967295, got 4294967296"
      )
      const named = { name: Chaos.stall } as unknown as Parameters<typeof Chaos.layer<StoreTag, Store>>[1]
      assert.match(
        yield* build(Chaos.layer(StoreTag, named)),
        /\.name: the service has no method or effect named "name"/
      )
    })
  )

  it.effect("with a seed, the same calls draw the same faults", () =>
    Effect.gen(function* () {
      const outcomes = (seed: number) =>
        Effect.gen(function* () {
          const store = yield* StoreTag
          const exits = yield* Effect.forEach(
            Array.from({ length: 64 }, (_, i) => i),
            () => Effect.exit(store.get("a"))
          )
          return exits.map(Exit.isFailure)
        }).pipe(
          Effect.provide(
            Chaos.layer(StoreTag, { get: Chaos.fail({ rate: 0.5, error: () => new Boom({ n: 2 }) }) }, { seed }).pipe(
              Layer.provide(StoreLive)
            )
          )
        )
      const a = yield* outcomes(7)
      assert.deepStrictEqual(yield* outcomes(7), a)
      assert.notDeepEqual(yield* outcomes(8), a)
      // About half fail.
      assert.isTrue(a.filter(Boolean).length > 16 && a.filter(Boolean).length < 48)
    })
  )
})

describe("Chaos.faultsTotal", () => {
  it.effect("counts the faults that applied, by kind", () =>
    Effect.gen(function* () {
      const count = (kind: string) => counterCount(Chaos.faultsTotal, { fault: kind })
      const [latency, fail, stall] = [yield* count("latency"), yield* count("fail"), yield* count("stall")]
      yield* Effect.exit(Chaos.inject(Effect.void, Chaos.latency("0 millis"), always))
      yield* Chaos.inject(Effect.void, Chaos.fail({ rate: 0, error: () => "never" }))
      const stalled = yield* Edition.forkChild(Chaos.inject(Effect.void, Chaos.stall))
      yield* yieldNow // let it start, and stall
      yield* Fiber.interrupt(stalled)
      assert.deepStrictEqual(
        [(yield* count("latency")) - latency, (yield* count("fail")) - fail, (yield* count("stall")) - stall],
        [1, 1, 1]
      )
    })
  )
})
