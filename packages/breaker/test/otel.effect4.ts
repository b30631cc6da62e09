/**
 * @effect/opentelemetry's metrics layer on Effect 4 (4.x, the `OtelMetrics` module); otel.effect3.ts
 * has the same name for 0.x, where the module is `Metrics`. opentelemetry.test.ts imports it as
 * `#test/otel` (package.json "imports").
 */
import * as OtelMetrics from "@effect/opentelemetry/OtelMetrics"

/** Effect's metrics, read by an OpenTelemetry `MetricReader` (needs a `Resource`). */
export const metricsLayer = OtelMetrics.layer
