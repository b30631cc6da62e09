/**
 * Series that leave the registry with their owner, on whichever major this run is: updates read
 * back through Effect's own `Metric`, release takes them out, owners of one name share them, and
 * churn through many names leaves the registry as it was.
 */
import { MetricSeries } from "@circuitry/core"
import { assert, counterCount, describe, gaugeValue, histogramOf, it, metricSeries } from "@circuitry/testkit"
import { Effect, Exit, Scope } from "effect"

const calls = MetricSeries.counter({ name: "core_test_calls_total", description: "Calls, by owner" })
const level = MetricSeries.gauge({ name: "core_test_level", description: "A level, by owner" })
const latency = MetricSeries.histogram({
  name: "core_test_latency_seconds",
  description: "Latencies, by owner",
  boundaries: MetricSeries.exponentialBoundaries({ start: 0.001, factor: 10, count: 5 })
})

const seriesNamed = (owner: string) =>
  Effect.map(metricSeries, (all) =>
    all.filter((s) => s.name.startsWith("core_test_") && s.attributes.owner === owner).map((s) => s.name)
  )
const testSeries = Effect.map(metricSeries, (all) => all.filter((s) => s.name.startsWith("core_test_")).length)

describe("MetricSeries", () => {
  it("relies on what it expects of Effect's registry: series can be taken out, updates go straight to them", () => {
    assert.deepStrictEqual(MetricSeries.internals(), { removable: true, directUpdates: true })
  })

  it("makes exponential boundaries as Effect does: count - 1 finite ones", () => {
    assert.deepStrictEqual(MetricSeries.exponentialBoundaries({ start: 1, factor: 2, count: 5 }), [1, 2, 4, 8])
  })

  it.effect("an owner's updates are read through Effect's Metric, with the same attributes", () =>
    Effect.gen(function* () {
      const owner = MetricSeries.make()
      const ok = owner.series(calls, [
        ["owner", "read-back"],
        ["outcome", "ok"]
      ])
      ok.update(1)
      ok.update(2)
      owner.series(level, [["owner", "read-back"]]).update(7)
      const seconds = owner.series(latency, [["owner", "read-back"]])
      seconds.update(0.5)
      seconds.update(0.25)
      assert.strictEqual(yield* counterCount(calls, { owner: "read-back", outcome: "ok" }), 3)
      assert.strictEqual(yield* gaugeValue(level, { owner: "read-back" }), 7)
      assert.deepStrictEqual(yield* histogramOf(latency, { owner: "read-back" }), {
        count: 2,
        sum: 0.75,
        min: 0.25,
        max: 0.5
      })
      owner.release()
    })
  )

  it.effect("release takes the owner's series out; its updaters then record nowhere; a new owner starts afresh", () =>
    Effect.gen(function* () {
      const owner = MetricSeries.make()
      const ok = owner.series(calls, [["owner", "released"]])
      ok.update(5)
      owner.series(level, [["owner", "released"]]).update(1)
      assert.deepStrictEqual((yield* seriesNamed("released")).sort(), ["core_test_calls_total", "core_test_level"])
      owner.release()
      owner.release() // idempotent
      assert.isTrue(owner.isReleased)
      assert.deepStrictEqual(yield* seriesNamed("released"), [])
      ok.update(1)
      // a released owner makes no series
      owner.series(calls, [["owner", "released"]]).update(1)
      assert.deepStrictEqual(yield* seriesNamed("released"), [])
      const next = MetricSeries.make()
      next.series(calls, [["owner", "released"]]).update(1)
      assert.strictEqual(yield* counterCount(calls, { owner: "released" }), 1)
      next.release()
    })
  )

  it.effect("owners of one name share its series until the last one is released", () =>
    Effect.gen(function* () {
      const a = MetricSeries.make()
      const b = MetricSeries.make()
      a.series(calls, [["owner", "shared"]]).update(1)
      const fromB = b.series(calls, [["owner", "shared"]])
      fromB.update(1)
      assert.strictEqual(yield* counterCount(calls, { owner: "shared" }), 2)
      a.release()
      fromB.update(1)
      assert.strictEqual(yield* counterCount(calls, { owner: "shared" }), 3)
      b.release()
      assert.deepStrictEqual(yield* seriesNamed("shared"), [])
    })
  )

  it.effect("a scoped owner records into its fiber's registry and is released when its scope closes", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const owner = yield* Effect.provideService(MetricSeries.scoped, Scope.Scope, scope)
      owner.series(calls, [["owner", "scoped"]]).update(1)
      assert.strictEqual(yield* counterCount(calls, { owner: "scoped" }), 1)
      yield* Scope.close(scope, Exit.void)
      assert.isTrue(owner.isReleased)
      assert.deepStrictEqual(yield* seriesNamed("scoped"), [])
    })
  )

  it.effect("churn: 5,000 owners of their own names, 50 alive at a time, leave 50 owners' series, then none", () =>
    Effect.gen(function* () {
      const before = yield* testSeries
      const heldBefore = MetricSeries.heldCount()
      const alive: Array<MetricSeries.Owner> = []
      for (let i = 0; i < 5_000; i++) {
        const owner = MetricSeries.make()
        owner.series(calls, [["owner", `churn-${i}`]]).update(1)
        owner.series(latency, [["owner", `churn-${i}`]]).update(0.01)
        alive.push(owner)
        if (alive.length > 50) alive.shift()!.release()
      }
      assert.strictEqual((yield* testSeries) - before, 2 * 50)
      assert.strictEqual(MetricSeries.heldCount() - heldBefore, 2 * 50)
      assert.deepStrictEqual(yield* seriesNamed("churn-0"), [])
      assert.strictEqual(yield* counterCount(calls, { owner: "churn-4999" }), 1)
      for (const owner of alive) owner.release()
      assert.strictEqual(yield* testSeries, before)
      assert.strictEqual(MetricSeries.heldCount(), heldBefore)
    })
  )

  it("refuses a metric it did not make, saying so", () => {
    const owner = MetricSeries.make()
    const foreign = Object.create(calls) as typeof calls
    assert.throws(() => owner.series(foreign, [["owner", "foreign"]]), /not made by MetricSeries\.counter/)
    owner.release()
  })
})
