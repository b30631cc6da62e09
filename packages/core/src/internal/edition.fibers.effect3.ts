/**
 * Effects, fibers, queues, deferreds and semaphores on Effect 3, part of the edition layer:
 * edition.effect3.ts exports them. The Effect 4 file (edition.fibers.effect4.ts) has the same names.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type * as Queue from "effect/Queue"
import type { Fiber } from "./edition.effect3.js"

/**
 * Recovers from any cause: failures, defects and interruptions (`Effect.catchAllCause` on Effect
 * 3, `Effect.catchCause` on 4).
 *
 * @since 0.2.0
 * @category effects
 */
export const catchCause: <A, E, R, A2, E2, R2>(
  self: Effect.Effect<A, E, R>,
  f: (cause: Cause.Cause<E>) => Effect.Effect<A2, E2, R2>
) => Effect.Effect<A | A2, E2, R | R2> = Effect.catchAllCause

/**
 * Forks an effect into a fiber of its own, not the current fiber's child: it outlives the fiber
 * that started it (`Effect.forkDaemon` on Effect 3, `Effect.forkDetach` on 4).
 *
 * @since 0.2.0
 * @category fibers
 */
export const forkDetach: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<Fiber<A, E>, never, R> =
  Effect.forkDaemon

/**
 * `self`, whose interruption returns at once and finishes in the background (`Effect.disconnect`
 * on Effect 3; on 4, which has none, `self` runs in a detached fiber that an interrupted caller
 * interrupts without waiting for it).
 *
 * @since 0.2.0
 * @category fibers
 */
export const disconnect: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> = Effect.disconnect

/**
 * What a pubsub subscription reads from (`Queue.Dequeue` on Effect 3, `PubSub.Subscription` on 4).
 *
 * @since 0.2.0
 * @category queues
 */
export type Subscription<A> = Queue.Dequeue<A>

/**
 * A deferred made synchronously, to complete from synchronous code with `completeUnsafe`.
 *
 * @since 0.2.0
 * @category deferreds
 */
export const deferredUnsafe = <A, E = never>(): Deferred.Deferred<A, E> => Deferred.unsafeMake<A, E>(FiberId.none)

/**
 * Completes a deferred synchronously (`Deferred.unsafeDone` on Effect 3, `doneUnsafe` on 4).
 *
 * @since 0.2.0
 * @category deferreds
 */
export const completeUnsafe = <A, E>(self: Deferred.Deferred<A, E>, exit: Exit.Exit<A, E>): void =>
  Deferred.unsafeDone(self, exit)

/**
 * A semaphore of `permits` (`Effect.makeSemaphore` on Effect 3, `Semaphore.make` on 4).
 *
 * @since 0.2.0
 * @category concurrency
 */
export const makeSemaphore = (permits: number): Effect.Effect<Semaphore> => Effect.makeSemaphore(permits)

/**
 * A semaphore (`Effect.Semaphore` on Effect 3, `Semaphore.Semaphore` on 4).
 *
 * @since 0.2.0
 * @category concurrency
 */
export type Semaphore = Effect.Semaphore

/**
 * The failure of a timed-out effect (`Cause.TimeoutException` on Effect 3, `Cause.TimeoutError`
 * on 4), and a way to make one.
 *
 * @since 0.2.0
 * @category causes
 */
export type TimeoutError = Cause.TimeoutException

/**
 * A new `TimeoutError`.
 *
 * @since 0.2.0
 * @category causes
 */
export const timeoutError = (): TimeoutError => new Cause.TimeoutException()

/**
 * `self` on the live clock, whatever Clock the caller has (a `TestClock` in tests): for timers that
 * measure something outside the program in real time, such as a network connection's liveness
 * (`Effect.withClock(Clock.make())` on Effect 3; the `Clock.Clock` reference's default on 4).
 *
 * @since 0.2.0
 * @category time
 */
export const withLiveClock = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withClock(self, Clock.make())
