/**
 * @since 0.1.0
 */
export * as BreakerHttpClient from "./BreakerHttpClient.js"
