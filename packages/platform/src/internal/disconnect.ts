/** How LimiterHttpServer's middlewares let a client that has gone stop the work done for it. */
import * as Effect from "effect/Effect"
import type * as LHS from "../LimiterHttpServer.js"

/**
 * `@effect/platform` runs every handler uninterruptibly, so the interruption that
 * `@effect/platform-node` sends when the client's connection closes is not heard: reopen it, for
 * `served` (a handler, or a wait for a slot and then the handler) unless the options say not to.
 *
 * @internal
 */
export const interruptibleOnDisconnect = <A, E, R>(
  served: Effect.Effect<A, E, R>,
  options?: LHS.DisconnectOptions
): Effect.Effect<A, E, R> => (options?.interruptOnDisconnect === false ? served : Effect.interruptible(served))
