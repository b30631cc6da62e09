/**
 * Bounded metric memory: a limiter's series leave the metric registry with it (dropped by its
 * LimiterRegistry, or its scope closed), and a shedder's when its scope closes. Before, every
 * series a limiter ever recorded stayed in the registry for the life of the process.
 */
import { Limit, Limiter, LimiterRegistry, Shedder } from "@circuitry/limiter"
import { assert, counterCount, describe, it, metricSeries } from "@circuitry/testkit"
import { Effect, Exit, Scope } from "effect"

const seriesOf = (prefix: string) => Effect.map(metricSeries, (all) => all.filter((s) => s.name.startsWith(prefix)))
const limiterSeries = seriesOf("circuitry_limiter_")
const named = (name: string) =>
  Effect.map(limiterSeries, (all) => all.filter((s) => s.attributes.limiter === name).map((s) => s.name))

describe("metric series", () => {
  it.effect(
    "a registry bounds its metric series: 10,000 names through maxLimiters 100 leave the 100 held limiters' series",
    () =>
      Effect.gen(function* () {
        const before = (yield* limiterSeries).length
        const scope = yield* Scope.make()
        const registry = yield* LimiterRegistry.make({
          maxLimiters: 100,
          defaults: { limit: Limit.fixed(10) }
        }).pipe(Effect.provideService(Scope.Scope, scope))
        for (let i = 0; i < 10_000; i++) {
          const limiter = yield* registry.get(`churn-${i}`)
          yield* Effect.exit(limiter.execute(i % 10 === 0 ? Effect.fail("boom") : Effect.void))
        }
        // Each held limiter has its limit and in-flight gauges, its round-trip histogram and the
        // counter of its one call's outcome.
        assert.strictEqual((yield* limiterSeries).length - before, 4 * 100)
        assert.deepStrictEqual(yield* named("churn-0"), [])
        assert.deepStrictEqual((yield* named("churn-9999")).length, 4)
        assert.strictEqual(yield* counterCount(Limiter.callsTotal, { limiter: "churn-9990", outcome: "failure" }), 1)
        yield* Scope.close(scope, Exit.void)
        assert.strictEqual((yield* limiterSeries).length, before)
      }),
    120_000
  )

  it.effect("limiters sharing a name share its series until the last one is released", () =>
    Effect.gen(function* () {
      const name = "shared-name"
      const first = yield* Scope.make()
      const second = yield* Scope.make()
      const a = yield* Limiter.make({ name, limit: Limit.fixed(1) }).pipe(Effect.provideService(Scope.Scope, first))
      const b = yield* Limiter.make({ name, limit: Limit.fixed(1) }).pipe(Effect.provideService(Scope.Scope, second))
      yield* a.execute(Effect.void)
      yield* b.execute(Effect.void)
      const successes = counterCount(Limiter.callsTotal, { limiter: name, outcome: "success" })
      assert.strictEqual(yield* successes, 2)
      yield* Scope.close(first, Exit.void)
      yield* b.execute(Effect.void)
      assert.strictEqual(yield* successes, 3)
      // a limiter used after its release keeps limiting, and records nowhere
      yield* a.execute(Effect.void)
      assert.strictEqual(yield* successes, 3)
      yield* Scope.close(second, Exit.void)
      assert.deepStrictEqual(yield* named(name), [])
    })
  )

  it.effect("a shedder's series leave the registry when its scope closes", () =>
    Effect.gen(function* () {
      const shedderSeries = Effect.map(seriesOf("circuitry_shedder_"), (all) =>
        all.filter((s) => s.attributes.shedder === "scoped")
      )
      const scope = yield* Scope.make()
      const shedder = yield* Shedder.make({ name: "scoped", loop: false }).pipe(
        Effect.provideService(Scope.Scope, scope)
      )
      yield* shedder.admit(5)
      assert.isAbove((yield* shedderSeries).length, 0)
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(yield* shedderSeries, [])
    })
  )
})
