import * as Edition from "@circuitry/core/Edition"
import { BreakerRegistry, BreakerStore, CircuitBreaker, Policy } from "@circuitry/breaker"
import { assert, describe, hasTaker, it, logTo, Result, TestClock, withAttributes, yieldNow } from "@circuitry/testkit"
import { Effect, Metric, Option, Queue, Ref, Schedule, Stream } from "effect"
import { call, fail, succeed, tagOf } from "./utils.js"

/** A live config the test feeds, one value at a time. */
const liveConfig = Effect.gen(function* () {
  const queue = yield* Queue.unbounded<BreakerRegistry.RegistryOptions>()
  /**
   * Waits until the registry has taken every value and waits for the next: it applied them. Bounded
   * (10 s of real time); it lets the event loop turn, as a registry of many breakers does between slices.
   */
  const settled = Effect.gen(function* () {
    const end = performance.now() + 10_000
    while (performance.now() < end) {
      if (yield* hasTaker(queue)) return
      yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
    }
    return yield* Effect.die(new Error("the registry never took its config"))
  })
  const push = (options: unknown) =>
    Effect.andThen(Queue.offer(queue, options as BreakerRegistry.RegistryOptions), settled)
  return { stream: Stream.fromQueue(queue), push, settled }
})

const warnings = () => {
  const lines: Array<string> = []
  const layer = logTo(({ cause, level, messages }) => {
    if (level !== "Warn") return
    lines.push(`${messages.join(" ")} | ${String(cause)}`)
  })
  return { lines, layer }
}

const configs = (outcome: "applied" | "rejected") =>
  Effect.map(Metric.value(withAttributes(BreakerRegistry.configsTotal, { outcome })), (s) => s.count)

/** `count` calls: `failures` failures last. */
const feed = (breaker: CircuitBreaker.CircuitBreaker, count: number, failures: number) =>
  Effect.forEach(
    Array.from({ length: count }, (_, i) => i >= count - failures),
    (failing) => call(breaker, failing ? fail : succeed)
  )

const rate = (threshold: number, size: number) =>
  Policy.failureRate({ threshold, minimumCalls: size, window: Policy.countWindow(size) })

describe("BreakerRegistry config", () => {
  it.scoped("a new threshold applies to a live breaker, which keeps its window (100 calls, 30 failures)", () =>
    Effect.gen(function* () {
      const config = yield* liveConfig
      const registry = yield* BreakerRegistry.make({ defaults: { policy: rate(0.5, 100) }, config: config.stream })
      yield* config.settled
      const breaker = yield* registry.get("db")
      yield* feed(breaker, 100, 30)
      assert.deepStrictEqual((yield* breaker.snapshot).counts, {
        calls: 100,
        failures: 30,
        slowCalls: 0,
        consecutiveFailures: 30
      })
      assert.strictEqual(yield* tagOf(breaker), "Closed") // 30% < 50%
      const applied = yield* configs("applied")

      yield* config.push({ defaults: { policy: rate(0.25, 100) } })
      assert.strictEqual((yield* configs("applied")) - applied, 1)
      // The window is kept: 30 failures in 100 calls. The new threshold is judged at the next call.
      assert.deepStrictEqual((yield* breaker.snapshot).counts, {
        calls: 100,
        failures: 30,
        slowCalls: 0,
        consecutiveFailures: 30
      })
      assert.strictEqual(yield* tagOf(breaker), "Closed")
      yield* call(breaker, succeed) // the oldest call (a success) leaves: 30 of 100 >= 25%
      assert.strictEqual(yield* tagOf(breaker), "Open")
      // A breaker made after the change runs on it.
      const fresh = yield* registry.get("fresh")
      yield* feed(fresh, 100, 25)
      assert.strictEqual(yield* tagOf(fresh), "Open")
    })
  )

  it.scoped("with a shared store too: the breaker keeps its window, and its verdict reaches the store", () =>
    Effect.gen(function* () {
      const config = yield* liveConfig
      const registry = yield* BreakerRegistry.make({ defaults: { policy: rate(0.5, 10) }, config: config.stream })
      const breaker = yield* registry.get("db")
      yield* feed(breaker, 10, 3)
      yield* config.push({ defaults: { policy: rate(0.3, 10) } })
      assert.deepStrictEqual((yield* breaker.snapshot).counts.failures, 3)
      yield* call(breaker, succeed)
      assert.strictEqual(yield* tagOf(breaker), "Open")
      assert.isTrue((yield* breaker.snapshot).store?.connected)
    }).pipe(Effect.provide(BreakerStore.layerMemory))
  )

  it.scoped("a registry of many breakers is moved in slices, every breaker of it", () =>
    Effect.gen(function* () {
      const config = yield* liveConfig
      const registry = yield* BreakerRegistry.make({
        defaults: { policy: Policy.consecutiveFailures(2) },
        config: config.stream
      })
      const breakers = yield* Effect.forEach(Array.from({ length: 2_500 }), (_, i) => registry.get(`host-${i}`))
      yield* Effect.forEach(breakers, (breaker) => call(breaker, fail))
      yield* config.push({ defaults: { policy: Policy.consecutiveFailures(1) } })
      const tags = yield* Effect.forEach(breakers, (breaker) => Effect.andThen(call(breaker, succeed), tagOf(breaker)))
      // Each kept its one failure, and its success now is judged by consecutiveFailures(1): no trip.
      assert.isTrue(tags.every((tag) => tag === "Closed"))
      yield* Effect.forEach(breakers, (breaker) => call(breaker, fail))
      assert.isTrue((yield* Effect.forEach(breakers, tagOf)).every((tag) => tag === "Open"))
    })
  )

  it.scoped("a smaller count window keeps the most recent calls; a larger one keeps them all", () =>
    Effect.gen(function* () {
      const config = yield* liveConfig
      const registry = yield* BreakerRegistry.make({ defaults: { policy: rate(0.9, 100) }, config: config.stream })
      const breaker = yield* registry.get("db")
      yield* feed(breaker, 100, 30)
      yield* config.push({ defaults: { policy: rate(0.9, 40) } })
      assert.deepStrictEqual((yield* breaker.snapshot).counts, {
        calls: 40,
        failures: 30,
        slowCalls: 0,
        consecutiveFailures: 30
      })
      yield* config.push({ defaults: { policy: rate(0.9, 200) } })
      assert.deepStrictEqual((yield* breaker.snapshot).counts, {
        calls: 40,
        failures: 30,
        slowCalls: 0,
        consecutiveFailures: 30
      })
      // Another kind of window starts empty.
      yield* config.push({ defaults: { policy: Policy.consecutiveFailures(3) } })
      assert.deepStrictEqual((yield* breaker.snapshot).counts, {
        calls: 0,
        failures: 0,
        slowCalls: 0,
        consecutiveFailures: 0
      })
    })
  )

  it.scoped("a shorter time window keeps what is still inside it", () =>
    Effect.gen(function* () {
      const config = yield* liveConfig
      const timed = (duration: Edition.DurationInput) =>
        Policy.failureRate({ threshold: 0.9, minimumCalls: 1, window: Policy.timeWindow(duration) })
      const registry = yield* BreakerRegistry.make({ defaults: { policy: timed("60 seconds") }, config: config.stream })
      const breaker = yield* registry.get("db")
      yield* feed(breaker, 10, 0) // at 0 s
      yield* TestClock.adjust("40 seconds")
      yield* feed(breaker, 5, 2) // at 40 s
      yield* config.push({ defaults: { policy: timed("30 seconds") } })
      const counts = (yield* breaker.snapshot).counts
      assert.deepStrictEqual([counts.calls, counts.failures], [5, 2])
    })
  )

  it.scoped("a new openFor applies from the next open episode; the current one keeps its until", () =>
    Effect.gen(function* () {
      const config = yield* liveConfig
      const registry = yield* BreakerRegistry.make({
        defaults: { policy: Policy.consecutiveFailures(1), openFor: "10 seconds" },
        config: config.stream
      })
      const breaker = yield* registry.get("db")
      yield* call(breaker, fail)
      assert.deepStrictEqual(yield* breaker.state, CircuitBreaker.State.Open({ until: 10_000 }))
      yield* config.push({ defaults: { policy: Policy.consecutiveFailures(1), openFor: "1 minute" } })
      assert.deepStrictEqual(yield* breaker.state, CircuitBreaker.State.Open({ until: 10_000 }))
      yield* TestClock.adjust("10 seconds")
      yield* call(breaker, fail) // the probe fails: the next episode waits a minute
      assert.deepStrictEqual(yield* breaker.state, CircuitBreaker.State.Open({ until: 70_000 }))
    })
  )

  it.scoped("a schedule that did not change keeps its place", () =>
    Effect.gen(function* () {
      const config = yield* liveConfig
      const openFor = Schedule.exponential("1 second")
      const registry = yield* BreakerRegistry.make({
        defaults: { policy: Policy.consecutiveFailures(1), openFor },
        config: config.stream
      })
      const breaker = yield* registry.get("db")
      yield* call(breaker, fail) // 1 s
      yield* TestClock.adjust("1 second")
      yield* call(breaker, fail) // 2 s
      yield* config.push({ defaults: { policy: Policy.consecutiveFailures(2), openFor } })
      yield* TestClock.adjust("2 seconds")
      yield* call(breaker, fail) // 4 s: the schedule went on
      assert.deepStrictEqual(yield* breaker.state, CircuitBreaker.State.Open({ until: 3_000 + 4_000 }))
    })
  )

  it.scoped("overrides apply live, and a name left out goes back to the defaults; maxOpen can be set live", () =>
    Effect.gen(function* () {
      const config = yield* liveConfig
      const registry = yield* BreakerRegistry.make({
        defaults: { policy: Policy.consecutiveFailures(3) },
        overrides: { touchy: { policy: Policy.consecutiveFailures(1) } },
        config: config.stream
      })
      const touchy = yield* registry.get("touchy")
      const plain = yield* registry.get("plain")
      yield* config.push({ overrides: {} }) // the layer's defaults stay; touchy follows them now
      yield* call(touchy, fail)
      assert.strictEqual(yield* tagOf(touchy), "Closed")
      yield* config.push({ overrides: { plain: { policy: Policy.consecutiveFailures(1) } }, maxOpen: 1 })
      yield* call(plain, fail)
      assert.strictEqual(yield* tagOf(plain), "Open")
      yield* call(touchy, fail)
      yield* call(touchy, fail) // three in a row, but plain holds the one place
      assert.strictEqual(yield* tagOf(touchy), "Closed")
      assert.isTrue((yield* touchy.snapshot).capped)
    })
  )

  it.scoped("a config applied again counts each open breaker once", () =>
    Effect.gen(function* () {
      const config = yield* liveConfig
      const registry = yield* BreakerRegistry.make({
        defaults: { policy: Policy.consecutiveFailures(1) },
        maxOpen: 2,
        config: config.stream
      })
      const [a, b] = yield* Effect.forEach(["a", "b"], (name) => registry.get(name))
      yield* call(a!, fail)
      yield* config.push({ maxOpen: 2 })
      yield* config.push({ maxOpen: 2 })
      yield* call(b!, fail)
      assert.strictEqual(yield* tagOf(b!), "Open") // 1 open < 2
    })
  )

  it.scoped("a change of halfOpen.successesToClose alone applies", () =>
    Effect.gen(function* () {
      const config = yield* liveConfig
      const defaults = { policy: Policy.consecutiveFailures(1), openFor: "1 second" } as const
      const registry = yield* BreakerRegistry.make({ defaults, config: config.stream })
      const breaker = yield* registry.get("db")
      yield* config.push({ defaults: { ...defaults, halfOpen: { successesToClose: 2 } } })
      yield* call(breaker, fail)
      yield* TestClock.adjust("1 second")
      yield* call(breaker, succeed)
      assert.strictEqual(yield* tagOf(breaker), "HalfOpen") // one of two
      yield* call(breaker, succeed)
      assert.strictEqual(yield* tagOf(breaker), "Closed")
    })
  )

  it.scoped("a bad value is reported with its InvalidBreakerOptions and ignored: the config before it stays", () => {
    const { layer, lines } = warnings()
    return Effect.gen(function* () {
      const config = yield* liveConfig
      const registry = yield* BreakerRegistry.make({
        defaults: { policy: Policy.consecutiveFailures(2) },
        config: config.stream
      })
      const breaker = yield* registry.get("db")
      yield* call(breaker, fail)
      const rejected = yield* configs("rejected")

      yield* config.push({ defaults: { policy: Policy.consecutiveFailures(0) } })
      yield* config.push({ maxOpen: { fraction: 2 } })
      yield* config.push("not options")
      yield* config.push({ overrides: { x: 5 } })
      assert.strictEqual((yield* configs("rejected")) - rejected, 4)
      assert.strictEqual(lines.length, 4)
      assert.include(lines[0], "a config value was rejected; the config before it stays")
      assert.include(
        lines[0],
        'InvalidBreakerOptions: policy: consecutiveFailures threshold must be a whole number >= 1, got 0 (breaker "defaults")'
      )
      assert.include(lines[1], "maxOpen.fraction must be a number with 0 < fraction <= 1, got 2")
      assert.include(lines[2], 'registry options must be an object, got "not options"')
      assert.include(lines[3], 'overrides["x"] must be breaker options (an object), got 5')
      // The breaker still runs on consecutiveFailures(2), with its window.
      assert.strictEqual((yield* breaker.snapshot).counts.consecutiveFailures, 1)
      yield* call(breaker, fail)
      assert.strictEqual(yield* tagOf(breaker), "Open")
      // A good value after bad ones applies.
      yield* config.push({ defaults: { policy: Policy.consecutiveFailures(1) } })
      const other = yield* registry.get("other")
      yield* call(other, fail)
      assert.strictEqual(yield* tagOf(other), "Open")
    }).pipe(Effect.provide(layer))
  })

  it.scoped("a config stream that fails is reported; the last config stays", () => {
    const { layer, lines } = warnings()
    return Effect.gen(function* () {
      const registry = yield* BreakerRegistry.make({
        defaults: { policy: Policy.consecutiveFailures(5) },
        config: Stream.concat(
          Stream.make({ defaults: { policy: Policy.consecutiveFailures(1) } }),
          Stream.fail("config source down")
        )
      })
      for (let i = 0; i < 100 && lines.length === 0; i++) yield* yieldNow
      assert.strictEqual(lines.length, 1)
      assert.include(lines[0], "the config stream failed; the last config stays")
      assert.include(lines[0], "config source down")
      const breaker = yield* registry.get("db")
      yield* call(breaker, fail)
      assert.strictEqual(yield* tagOf(breaker), "Open")
    }).pipe(Effect.provide(layer))
  })

  it.effect("config must be a Stream", () =>
    Effect.gen(function* () {
      const error = yield* BreakerRegistry.make({ config: [{}] } as unknown as BreakerRegistry.RegistryOptions).pipe(
        Effect.scoped,
        Effect.flip
      )
      assert.strictEqual(error.message, "config must be a Stream of registry options, got [{}]")
    })
  )

  describe("watchConfig: one key, read by every member", () => {
    const json = (threshold: number) =>
      JSON.stringify({ defaults: { policy: { _tag: "ConsecutiveFailures", threshold } } })

    it.scoped("a change of the key reaches every member within `every`; a bad document is reported and skipped", () => {
      const { layer, lines } = warnings()
      return Effect.gen(function* () {
        const key = yield* Ref.make(Option.none<string>())
        const reads = yield* Ref.make(0)
        const load = Effect.andThen(
          Ref.update(reads, (n) => n + 1),
          Ref.get(key)
        )
        const member = () =>
          BreakerRegistry.make({
            defaults: { policy: Policy.consecutiveFailures(3) },
            config: BreakerRegistry.watchConfig(load, { every: "10 seconds" })
          })
        const fleet = [yield* member(), yield* member()]
        const breakers = yield* Effect.forEach(fleet, (registry) => registry.get("db"))
        yield* TestClock.adjust(0)
        assert.strictEqual(yield* Ref.get(reads), 2) // each member read the key at once
        yield* Ref.set(key, Option.some(json(1)))
        yield* TestClock.adjust("9 seconds")
        yield* call(breakers[0]!, fail)
        assert.strictEqual(yield* tagOf(breakers[0]!), "Closed") // not read yet: consecutiveFailures(3)
        yield* TestClock.adjust("1 second")
        for (const breaker of breakers) {
          yield* call(breaker, fail)
          assert.strictEqual(yield* tagOf(breaker), "Open")
        }
        // Not JSON: reported once (the document does not change), and the config before stays.
        yield* Ref.set(key, Option.some("{ not json"))
        yield* TestClock.adjust("30 seconds")
        assert.strictEqual(lines.filter((line) => line.includes("must be a JSON document")).length, 2) // one per member
        const other = yield* fleet[0]!.get("other")
        yield* call(other, fail)
        assert.strictEqual(yield* tagOf(other), "Open")
        // The key is gone: the layer's options again.
        yield* Ref.set(key, Option.none())
        yield* TestClock.adjust("10 seconds")
        const third = yield* fleet[1]!.get("third")
        yield* call(third, fail)
        assert.strictEqual(yield* tagOf(third), "Closed")
      }).pipe(Effect.provide(layer))
    })

    it.scoped("a read that fails is reported once per outage and tried again", () => {
      const { layer, lines } = warnings()
      return Effect.gen(function* () {
        const down = yield* Ref.make(true)
        const load = Effect.flatMap(Ref.get(down), (isDown) =>
          isDown ? Effect.fail("store down") : Effect.succeed(Option.some(json(1)))
        )
        const registry = yield* BreakerRegistry.make({ config: BreakerRegistry.watchConfig(load) })
        yield* TestClock.adjust("20 seconds") // five reads, all failing
        assert.strictEqual(lines.filter((line) => line.includes("could not be read")).length, 1)
        yield* Ref.set(down, false)
        yield* TestClock.adjust("5 seconds")
        const breaker = yield* registry.get("db")
        yield* call(breaker, fail)
        assert.strictEqual(yield* tagOf(breaker), "Open")
      }).pipe(Effect.provide(layer))
    })

    it("parseConfig reads policies by _tag; text that is not JSON is an InvalidBreakerOptions", () => {
      const parsed = BreakerRegistry.parseConfig(
        JSON.stringify({
          overrides: {
            a: { policy: { _tag: "FailureRate", threshold: 0.5, window: { _tag: "CountWindow", size: 10 } } }
          }
        })
      )
      assert.isTrue(Result.isSuccess(parsed))
      const policy = Result.getOrThrow(parsed).overrides!["a"]!.policy!
      assert.isTrue(Policy.isPolicy(policy))
      assert.strictEqual(policy.description, "failureRate(0.5, countWindow(10))")
      const bad = BreakerRegistry.parseConfig("{")
      const error = Option.getOrUndefined(Result.getFailure(bad))
      assert.isTrue(error?._tag === "InvalidBreakerOptions")
      assert.include(error?.message ?? "", "config must be a JSON document of registry options")
    })

    it.effect("a bad `every` fails the stream with InvalidBreakerOptions", () =>
      Effect.gen(function* () {
        const error = yield* Stream.runDrain(
          BreakerRegistry.watchConfig(Effect.succeed(Option.none()), { every: "-1 seconds" })
        ).pipe(Effect.flip)
        assert.strictEqual(error.message, 'watchConfig: every must be a finite duration > 0, got "-1 seconds"')
      })
    )
  })
})
