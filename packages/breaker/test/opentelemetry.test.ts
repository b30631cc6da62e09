/**
 * The breaker's metrics through a real OpenTelemetry pipeline: @effect/opentelemetry's metrics
 * layer feeding the SDK's `InMemoryMetricExporter` through a `PeriodicExportingMetricReader`,
 * checked the way a Grafana user queries them (metric name, labels, values); and the recipe of
 * docs/observability.md (`NodeSdk.layer` with a span processor and a metric reader), checked on
 * the spans and metrics it exports.
 *
 * One source on both majors: the metrics layer, whose module @effect/opentelemetry renamed
 * (`Metrics` in 0.x for Effect 3, `OtelMetrics` in 4.x), comes from the pair `#test/otel`
 * (otel.effect{3,4}.ts); NodeSdk and Resource have the same names on both. On Effect 4 the run
 * takes @effect/opentelemetry 4.1.5 from editions/effect4 (its vitest.config.ts routes it as it
 * routes `effect`), and the OpenTelemetry SDK from the one install both majors share.
 */
import * as Edition from "@circuitry/core/Edition"
import { BreakerRegistry, CircuitBreaker, Policy } from "@circuitry/breaker"
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import * as Resource from "@effect/opentelemetry/Resource"
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  PeriodicExportingMetricReader
} from "@opentelemetry/sdk-metrics"
import type { DataPoint, Histogram, MetricData } from "@opentelemetry/sdk-metrics"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { assert, describe, it, result, TestClock } from "@circuitry/testkit"
import { Effect, Exit, Fiber, Layer, Scope } from "effect"
import { metricsLayer } from "#test/otel"
import { call, fail, succeed } from "./utils.js"

/** A fresh pipeline per test (a reader binds to one producer): the layer and a collect. */
const pipeline = () => {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })
  const layer = metricsLayer(() => reader).pipe(Layer.provide(Resource.layer({ serviceName: "circuitry-test" })))
  /** Collects once, through the reader, and returns what the exporter received. */
  const collect = Effect.promise(async () => {
    exporter.reset()
    await reader.forceFlush()
    return exporter.getMetrics().flatMap((m) => m.scopeMetrics.flatMap((s) => s.metrics))
  })
  return { layer, collect }
}

const metric = (all: ReadonlyArray<MetricData>, name: string) => {
  const found = all.find((m) => m.descriptor.name === name)
  if (found === undefined) throw new Error(`no ${name} in the export`)
  return found
}

/** The data points of a metric for one breaker, by their other labels. */
const pointsFor = (data: MetricData, breaker: string) =>
  (data.dataPoints as ReadonlyArray<DataPoint<unknown>>).filter((p) => p.attributes["breaker"] === breaker)

describe("OpenTelemetry export", () => {
  it.live("counters, the state gauge and the duration histogram reach an OpenTelemetry exporter", () =>
    Effect.gen(function* () {
      const { collect, layer } = pipeline()
      yield* Layer.build(layer)
      const name = "otel-payments"
      const breaker = yield* CircuitBreaker.make({ name, policy: Policy.consecutiveFailures(2), openFor: "1 hour" })
      yield* call(breaker, succeed)
      yield* call(breaker, fail)
      yield* call(breaker, fail) // opens
      yield* call(breaker, succeed) // rejected
      const all = yield* collect

      // sum(circuitry_breaker_calls_total{breaker="otel-payments"}) by (outcome)
      const calls = metric(all, "circuitry_breaker_calls_total")
      assert.strictEqual(calls.dataPointType, DataPointType.SUM)
      assert.isTrue(calls.dataPointType === DataPointType.SUM && calls.isMonotonic)
      const byOutcome = Object.fromEntries(pointsFor(calls, name).map((p) => [p.attributes["outcome"], p.value]))
      assert.deepStrictEqual(byOutcome, { success: 1, failure: 2, rejected: 1 })

      // circuitry_breaker_transitions_total{breaker, from, to}
      const transitions = pointsFor(metric(all, "circuitry_breaker_transitions_total"), name)
      assert.deepStrictEqual(
        transitions.map((p) => [p.attributes["from"], p.attributes["to"], p.value]),
        [["Closed", "Open", 1]]
      )

      // circuitry_breaker_state{breaker} == 1: open
      const state = metric(all, "circuitry_breaker_state")
      assert.strictEqual(state.dataPointType, DataPointType.GAUGE)
      assert.deepStrictEqual(
        pointsFor(state, name).map((p) => p.value),
        [1]
      )

      // histogram_quantile(0.99, rate(circuitry_breaker_call_duration_seconds_bucket[5m]))
      const duration = metric(all, "circuitry_breaker_call_duration_seconds")
      assert.strictEqual(duration.dataPointType, DataPointType.HISTOGRAM)
      const [point] = pointsFor(duration, name) as ReadonlyArray<DataPoint<Histogram>>
      assert.isDefined(point)
      assert.deepStrictEqual(
        point!.value.buckets.boundaries,
        [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
      )
      assert.strictEqual(point!.value.count, 3) // the rejected call did not run
      assert.strictEqual(point!.value.buckets.counts.length, 15)
      assert.strictEqual(
        point!.value.buckets.counts.reduce((a, b) => a + b, 0),
        3
      )
      assert.deepStrictEqual(Object.keys(point!.attributes), ["breaker"])
    }).pipe(Effect.scoped)
  )

  it.live("an evicted breaker's series leave the export", () =>
    Effect.gen(function* () {
      const { collect, layer } = pipeline()
      yield* Layer.build(layer)
      const scope = yield* Scope.make()
      const registry = yield* BreakerRegistry.make({ maxBreakers: 2 }).pipe(Effect.provideService(Scope.Scope, scope))
      for (const host of ["otel-a", "otel-b", "otel-c"]) yield* call(yield* registry.get(host), succeed)
      const exported = (all: ReadonlyArray<MetricData>) =>
        (metric(all, "circuitry_breaker_calls_total").dataPoints as ReadonlyArray<DataPoint<number>>)
          .map((p) => p.attributes["breaker"])
          .filter((b) => typeof b === "string" && b.startsWith("otel-"))
          .sort()
      assert.deepStrictEqual(exported(yield* collect), ["otel-b", "otel-c"])
      yield* Scope.close(scope, Exit.void)
      const after = (yield* collect).find((m) => m.descriptor.name === "circuitry_breaker_calls_total")
      assert.deepStrictEqual(after === undefined ? [] : exported([after]), [])
    }).pipe(Effect.scoped)
  )

  it.effect("the histogram buckets a slow call by its Clock duration", () =>
    Effect.gen(function* () {
      const { collect, layer } = pipeline()
      yield* Layer.build(layer)
      const name = "otel-slow"
      const breaker = yield* CircuitBreaker.make({ name })
      const fiber = yield* Edition.forkChild(call(breaker, Effect.sleep("1500 millis").pipe(Effect.andThen(succeed))))
      yield* TestClock.adjust("1500 millis")
      yield* Fiber.join(fiber)
      const all = yield* collect
      const [point] = pointsFor(metric(all, "circuitry_breaker_call_duration_seconds"), name) as ReadonlyArray<
        DataPoint<Histogram>
      >
      // 1.5 s: past the 1 s boundary, within 2.5 s (index 10 of the per-bucket counts).
      assert.strictEqual(point!.value.buckets.counts[10], 1)
      assert.strictEqual(point!.value.sum, 1.5)
    }).pipe(Effect.scoped)
  )

  it.live("the NodeSdk recipe: spans carry circuitry.breaker and its state, and the metrics reach the reader", () =>
    Effect.gen(function* () {
      const spans = new InMemorySpanExporter()
      const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
      const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })
      const telemetry = NodeSdk.layer(() => ({
        resource: { serviceName: "circuitry-test" },
        spanProcessor: new SimpleSpanProcessor(spans),
        metricReader: reader
      }))
      // Read before the layer shuts the SDK down: shutting down empties the in-memory exporters.
      const [exported, all] = yield* Effect.gen(function* () {
        const breaker = yield* CircuitBreaker.make({ name: "otel-sdk", policy: Policy.consecutiveFailures(1) })
        yield* result(CircuitBreaker.withBreaker(fail, breaker).pipe(Effect.withSpan("charge")))
        yield* result(CircuitBreaker.withBreaker(succeed, breaker).pipe(Effect.withSpan("charge")))
        yield* Effect.promise(() => reader.forceFlush())
        return [
          spans.getFinishedSpans().filter((span) => span.attributes["circuitry.breaker"] === "otel-sdk"),
          exporter.getMetrics().flatMap((m) => m.scopeMetrics.flatMap((s) => s.metrics))
        ] as const
      }).pipe(Effect.provide(telemetry))

      assert.deepStrictEqual(
        exported.map((span) => [span.name, span.attributes["circuitry.breaker.state"], span.status.code]),
        [
          ["charge", "Closed", 2], // ERROR: the call failed and opened the circuit
          ["charge", "Open", 2] // rejected by the open circuit
        ]
      )
      const byOutcome = Object.fromEntries(
        pointsFor(metric(all, "circuitry_breaker_calls_total"), "otel-sdk").map((p) => [
          p.attributes["outcome"],
          p.value
        ])
      )
      assert.deepStrictEqual(byOutcome, { failure: 1, rejected: 1 })
      assert.deepStrictEqual(
        pointsFor(metric(all, "circuitry_breaker_state"), "otel-sdk").map((p) => p.value),
        [1]
      )
    }).pipe(Effect.scoped)
  )
})
