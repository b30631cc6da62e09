/**
 * @since 0.1.0
 */
export * as Cache from "./Cache.js"

/**
 * @since 0.1.0
 */
export * as CacheStore from "./CacheStore.js"

/**
 * @since 0.1.0
 */
export * as LayeredStore from "./LayeredStore.js"

/**
 * @since 0.1.0
 */
export * as MemoryStore from "./MemoryStore.js"
