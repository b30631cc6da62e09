/**
 * @since 0.1.0
 */
export * as Hedging from "./Hedging.js"

/**
 * @since 0.1.0
 */
export * as Retry from "./Retry.js"

/**
 * @since 0.1.0
 */
export * as RetryBudget from "./RetryBudget.js"
