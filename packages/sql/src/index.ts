/**
 * @since 0.1.0
 */
export * as SqlBreakerStore from "./SqlBreakerStore.js"
