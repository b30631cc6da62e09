/**
 * @effect/opentelemetry's metrics layer on Effect 3 (0.x, the `Metrics` module); otel.effect4.ts
 * has the same name for 4.x, where the module is `OtelMetrics`. opentelemetry.test.ts imports it
 * as `#test/otel` (package.json "imports").
 */
import * as Metrics from "@effect/opentelemetry/Metrics"

/** Effect's metrics, read by an OpenTelemetry `MetricReader` (needs a `Resource`). */
export const metricsLayer = Metrics.layer
