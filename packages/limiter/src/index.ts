/**
 * @since 0.1.0
 */
export * as Limit from "./Limit.js"

/**
 * @since 0.1.0
 */
export * as Limiter from "./Limiter.js"

/**
 * @since 0.1.0
 */
export * as LimiterRegistry from "./LimiterRegistry.js"

/**
 * @since 0.2.0
 */
export * as Shedder from "./Shedder.js"
