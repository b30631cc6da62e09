/**
 * `layerPg`'s release: the client it opened is closed with a deadline, so that a database that
 * does not answer never holds an application's shutdown.
 */
import * as Edition from "@circuitry/core/Edition"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"

/**
 * How long `layerPg`'s release waits for its client to close. Against a database that does not
 * answer, the driver first finishes each statement still in flight (`@effect/sql-pg` 4.x waits up
 * to 5 s for its cancel, and its pool's shutdown for that; 0.x gives up on its pool after 1 s):
 * past the deadline, that goes on in the background.
 *
 * @internal
 */
export const CLOSE_DEADLINE = Duration.seconds(1)

/**
 * Runs `close` in the background, waiting for it at most CLOSE_DEADLINE, in real time (it times a
 * real connection, whatever the application's Clock).
 *
 * @internal
 */
export const closeWithin = (close: Effect.Effect<void>): Effect.Effect<void> =>
  Effect.flatMap(Edition.forkDetach(close), (closing) =>
    Fiber.join(closing).pipe(Effect.interruptible, Effect.timeoutOption(CLOSE_DEADLINE), Effect.asVoid)
  ).pipe(Edition.withLiveClock)
