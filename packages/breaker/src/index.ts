/**
 * @since 0.1.0
 */
export * as BreakerRegistry from "./BreakerRegistry.js"

/**
 * @since 0.1.0
 */
export * as BreakerStore from "./BreakerStore.js"

/**
 * @since 0.1.0
 */
export * as CircuitBreaker from "./CircuitBreaker.js"

/**
 * @since 0.1.0
 */
export * as Policy from "./Policy.js"

/**
 * @since 0.1.0
 */
export * as BreakerStoreKit from "./BreakerStoreKit.js"

/**
 * @since 0.1.0
 */
export * as OptionRules from "./OptionRules.js"

/**
 * @since 0.2.0
 */
export * as LoopStall from "./LoopStall.js"
