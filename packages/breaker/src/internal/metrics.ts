/**
 * The breaker's metrics: metrics.effect4.ts on Effect 4 (core's `MetricSeries`: an owner per used
 * breaker, released with it), metrics.effect3.ts on Effect 3 (series put into and taken out of
 * Effect's global registry through its private map, tuned by hand: its header says why core's
 * `MetricSeries` is not used there, with the figures).
 */
export * from "#metrics"
