/**
 * @since 0.1.0
 */
export * as BreakerHttpClient from "./BreakerHttpClient.js"

/**
 * @since 0.1.0
 */
export * as BreakerHttpServer from "./BreakerHttpServer.js"

/**
 * @since 0.1.0
 */
export * as HealthRoute from "./HealthRoute.js"

/**
 * @since 0.2.0
 */
export * as HealthSources from "./HealthSources.js"

/**
 * @since 0.1.0
 */
export * as LimiterHttpClient from "./LimiterHttpClient.js"

/**
 * @since 0.1.0
 */
export * as LimiterHttpServer from "./LimiterHttpServer.js"

/**
 * @since 0.2.0
 */
export * as MetricsRoute from "./MetricsRoute.js"
