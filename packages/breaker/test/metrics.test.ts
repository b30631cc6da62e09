import * as Edition from "@circuitry/core/Edition"
import { BreakerRegistry, CircuitBreaker, Policy } from "@circuitry/breaker"
import {
  assert,
  describe,
  isHistogramState,
  it,
  metricSeries,
  result,
  TestClock,
  withAttributes
} from "@circuitry/testkit"
import { Effect, Exit, Fiber, Metric, Scope } from "effect"
import { call, fail, succeed } from "./utils.js"

/** The series of `metric` in Effect's global registry, with their tags. */
const series = (metric: string) => Effect.map(metricSeries, (all) => all.filter((one) => one.name === metric))

const breakerSeries = Effect.map(metricSeries, (all) => all.filter((one) => one.name.startsWith("circuitry_breaker_")))

const calls = (breaker: string, outcome: string) =>
  Metric.value(withAttributes(CircuitBreaker.callsTotal, { breaker, outcome })).pipe(Effect.map((state) => state.count))

describe("metrics", () => {
  it.scoped("count calls by outcome, transitions and the current state, labelled by breaker", () =>
    Effect.gen(function* () {
      const name = "metrics-test"
      const breaker = yield* CircuitBreaker.make({ name, policy: Policy.consecutiveFailures(2), openFor: "1 second" })
      yield* call(breaker, succeed)
      yield* call(breaker, fail)
      yield* call(breaker, fail) // opens
      yield* call(breaker, succeed) // rejected
      yield* call(breaker, CircuitBreaker.repairing(succeed)) // repair while open
      // Inspecting records nothing.
      yield* breaker.state
      yield* breaker.isCallAllowed
      yield* breaker.snapshot
      assert.strictEqual(yield* calls(name, "success"), 1)
      assert.strictEqual(yield* calls(name, "failure"), 2)
      assert.strictEqual(yield* calls(name, "rejected"), 1)
      assert.strictEqual(yield* calls(name, "repair"), 1)
      const gauge = Metric.value(withAttributes(CircuitBreaker.stateGauge, { breaker: name }))
      assert.strictEqual((yield* gauge).value, 1)
      yield* TestClock.adjust("1 second")
      yield* call(breaker, succeed) // probe closes it
      assert.strictEqual((yield* gauge).value, 0)
      assert.strictEqual(yield* calls(name, "success"), 2)
      const opened = Metric.value(
        withAttributes(CircuitBreaker.transitionsTotal, { breaker: name, from: "Closed", to: "Open" })
      )
      assert.strictEqual((yield* opened).count, 1)
    })
  )

  it.scoped("the caller's span is annotated with the breaker's name and the state it found", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({ name: "traced", policy: Policy.consecutiveFailures(1) })
      const attributes = (effect: Effect.Effect<unknown, unknown>) =>
        Effect.gen(function* () {
          yield* result(CircuitBreaker.withBreaker(effect, breaker))
          const span = yield* Effect.currentSpan
          return Object.fromEntries(span.attributes)
        }).pipe(Effect.withSpan("call"))
      assert.deepStrictEqual(yield* attributes(fail), {
        "circuitry.breaker": "traced",
        "circuitry.breaker.state": "Closed"
      })
      assert.deepStrictEqual(yield* attributes(succeed), {
        "circuitry.breaker": "traced",
        "circuitry.breaker.state": "Open"
      })
    })
  )

  it.effect(
    "a registry bounds its metric series: 100,000 names through maxBreakers 1000 leave at most 1000 breakers' series",
    () =>
      Effect.gen(function* () {
        const before = (yield* breakerSeries).length
        const scope = yield* Scope.make()
        const registry = yield* BreakerRegistry.make({ maxBreakers: 1000 }).pipe(
          Effect.provideService(Scope.Scope, scope)
        )
        for (let i = 0; i < 100_000; i++) {
          yield* call(yield* registry.get(`churn-${i}`), i % 10 === 0 ? fail : succeed)
        }
        // Each held breaker has its success and failure counters and its duration histogram at most.
        const held = (yield* breakerSeries).length - before
        assert.isAtMost(held, 3 * 1000)
        assert.isAtLeast(held, 2 * 1000)
        assert.strictEqual(
          (yield* series("circuitry_breaker_call_duration_seconds")).filter((p) =>
            Object.values(p.attributes).includes("churn-0")
          ).length,
          0
        )
        yield* Scope.close(scope, Exit.void)
        assert.strictEqual((yield* breakerSeries).length, before)
      })
  )

  it.effect("breakers sharing a name share its series until the last one is released", () =>
    Effect.gen(function* () {
      const name = "shared-name"
      const first = yield* Scope.make()
      const second = yield* Scope.make()
      const a = yield* CircuitBreaker.make({ name }).pipe(Effect.provideService(Scope.Scope, first))
      const b = yield* CircuitBreaker.make({ name }).pipe(Effect.provideService(Scope.Scope, second))
      yield* call(a, succeed)
      yield* call(b, succeed)
      assert.strictEqual(yield* calls(name, "success"), 2)
      yield* Scope.close(first, Exit.void)
      yield* call(b, succeed)
      assert.strictEqual(yield* calls(name, "success"), 3)
      yield* Scope.close(second, Exit.void)
      const left = (yield* breakerSeries).filter((p) => p.attributes["breaker"] === name)
      assert.deepStrictEqual(left, [])
    })
  )

  it.effect("a breaker used after its release (a caller still holds it) records nowhere, used before it or not", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const used = yield* CircuitBreaker.make({ name: "released-used" }).pipe(Effect.provideService(Scope.Scope, scope))
      const idle = yield* CircuitBreaker.make({ name: "released-idle" }).pipe(Effect.provideService(Scope.Scope, scope))
      yield* call(used, succeed)
      yield* Scope.close(scope, Exit.void)
      for (const breaker of [used, idle]) {
        yield* call(breaker, succeed)
        yield* call(breaker, fail)
        yield* breaker.isolate
        yield* call(breaker, succeed) // rejected
      }
      const left = (yield* breakerSeries).filter((p) => p.attributes["breaker"]?.startsWith("released-"))
      assert.deepStrictEqual(left, [])
    })
  )

  it.scoped("call durations go into a histogram in seconds, with buckets from 1 ms to 30 s", () =>
    Effect.gen(function* () {
      const name = "durations"
      const breaker = yield* CircuitBreaker.make({ name, policy: Policy.consecutiveFailures(10) })
      const slow = (millis: number, fails = false) => Effect.sleep(millis).pipe(Effect.andThen(fails ? fail : succeed))
      for (const [millis, fails] of [
        [3, false],
        [40, false],
        [40, true],
        [12_000, false]
      ] as const) {
        const fiber = yield* Edition.forkChild(call(breaker, slow(millis, fails)))
        yield* TestClock.adjust(millis)
        yield* Fiber.join(fiber)
      }
      const state = yield* Metric.value(withAttributes(CircuitBreaker.callDuration, { breaker: name }))
      assert.isTrue(isHistogramState(state))
      assert.strictEqual(state.count, 4)
      assert.closeTo(state.sum, 12.083, 1e-9)
      assert.strictEqual(state.min, 0.003)
      assert.strictEqual(state.max, 12)
      const cumulative = new Map(state.buckets)
      assert.strictEqual(cumulative.get(0.001), 0)
      assert.strictEqual(cumulative.get(0.005), 1)
      assert.strictEqual(cumulative.get(0.025), 1)
      assert.strictEqual(cumulative.get(0.05), 3)
      assert.strictEqual(cumulative.get(10), 3)
      assert.strictEqual(cumulative.get(30), 4)
      assert.strictEqual(yield* calls(name, "failure"), 1)
    })
  )

  it.scoped("a histogram whose calls all fell in one bucket reports every bucket, cumulated", () =>
    Effect.gen(function* () {
      const name = "one-bucket"
      const breaker = yield* CircuitBreaker.make({ name })
      for (let i = 0; i < 3; i++) {
        const fiber = yield* Edition.forkChild(call(breaker, Effect.sleep(3).pipe(Effect.andThen(succeed))))
        yield* TestClock.adjust(3)
        yield* Fiber.join(fiber)
      }
      const state = yield* Metric.value(withAttributes(CircuitBreaker.callDuration, { breaker: name }))
      assert.strictEqual(state.count, 3)
      assert.strictEqual(state.min, 0.003)
      assert.strictEqual(state.max, 0.003)
      assert.closeTo(state.sum, 0.009, 1e-12)
      assert.strictEqual(state.buckets.length, 15)
      const cumulative = new Map(state.buckets)
      assert.strictEqual(cumulative.get(0.0025), 0)
      assert.strictEqual(cumulative.get(0.005), 3)
      assert.strictEqual(cumulative.get(30), 3)
      assert.strictEqual(cumulative.get(Infinity), 3)
      // The series Effect's registry exports is the one `Metric.value` found (one per name and tags).
      const exported = (yield* series("circuitry_breaker_call_duration_seconds")).filter(
        (p) => p.attributes["breaker"] === name
      )
      assert.strictEqual(exported.length, 1)
      assert.deepStrictEqual(exported[0]!.state, state)
    })
  )
})
