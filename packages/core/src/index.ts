/**
 * @since 0.2.0
 */
export * as Edition from "./Edition.js"

/**
 * @since 0.2.0
 */
export * as Heap from "./Heap.js"

/**
 * @since 0.2.0
 */
export * as MetricSeries from "./MetricSeries.js"

/**
 * @since 0.2.0
 */
export * as OptionRules from "./OptionRules.js"

/**
 * @since 0.2.0
 */
export * as Rejection from "./Rejection.js"
