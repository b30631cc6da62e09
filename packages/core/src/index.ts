/**
 * @since 0.2.0
 */
export * as Edition from "./Edition.js"
