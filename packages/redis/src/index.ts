/**
 * @since 0.1.0
 */
export * as RedisBreakerStore from "./RedisBreakerStore.js"

/**
 * @since 0.1.0
 */
export * as RedisStore from "./RedisStore.js"
