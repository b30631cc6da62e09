/**
 * The breaker's metrics: metrics.effect3.ts on Effect 3 (series put into and taken out of Effect's
 * global registry through its private map), metrics.effect4.ts on Effect 4 (series in the
 * `Metric.MetricRegistry`, taken out with `Metric.removeUnsafe`).
 */
export * from "#metrics"
