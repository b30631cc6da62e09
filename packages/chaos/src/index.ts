/**
 * @since 0.1.0
 */
export * as Chaos from "./Chaos.js"

/**
 * @since 0.1.0
 */
export * as Scenario from "./Scenario.js"
