/**
 * The limiter's own lookup of a fiber's Clock, on Effect 3 (fiber.effect4.ts is the other
 * major's): groups/limiter.ts's floor reads the Clock through the very module the limiter uses
 * (packages/limiter/src/internal/fiber.effect3.ts), so that it pays what the limiter pays for it.
 * The bench is private and runs the sources, so it may reach into the limiter's internals.
 */
export { clockOf, withFiber } from "../../limiter/src/internal/fiber.effect3.js"
