/**
 * @since 0.1.0
 */
export * as RedisBreakerStore from "./RedisBreakerStore.js"

/**
 * @since 0.1.0
 */
export * as RedisStore from "./RedisStore.js"

/**
 * @since 0.1.0
 */
export * as RedisRetryBudget from "./RedisRetryBudget.js"
