/**
 * Effects, fibers, queues, deferreds and semaphores on Effect 3, part of the edition layer:
 * edition.effect3.ts exports them. The Effect 4 file (edition.fibers.effect4.ts) has the same names.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import type * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import { dual } from "effect/Function"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
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
 * The next item of a subscription, waiting for one (`Queue.take` on Effect 3, `PubSub.take` on 4).
 *
 * @since 0.2.0
 * @category queues
 */
export const take = <A>(subscription: Subscription<A>): Effect.Effect<A> => Queue.take(subscription)

/**
 * A scope that can be closed (`Scope.CloseableScope` on Effect 3, `Scope.Closeable` on 4).
 *
 * @since 0.2.0
 * @category scopes
 */
export type Closeable = Scope.CloseableScope

/**
 * A child scope of `parent`, closed with it, whose finalizers run one after another
 * (`Scope.fork(parent, ExecutionStrategy.sequential)` on Effect 3, `Scope.fork(parent, "sequential")` on 4).
 *
 * @since 0.2.0
 * @category scopes
 */
export const forkScope = (parent: Scope.Scope): Effect.Effect<Closeable> =>
  Scope.fork(parent, ExecutionStrategy.sequential)

/**
 * `self` run in `scope`, which it does not close (`Scope.extend` on Effect 3, `Scope.provide` on 4).
 *
 * @since 0.2.0
 * @category scopes
 */
export const inScope: {
  (scope: Scope.Scope): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, Exclude<R, Scope.Scope>>
  <A, E, R>(self: Effect.Effect<A, E, R>, scope: Scope.Scope): Effect.Effect<A, E, Exclude<R, Scope.Scope>>
} = dual(2, <A, E, R>(self: Effect.Effect<A, E, R>, scope: Scope.Scope): Effect.Effect<A, E, Exclude<R, Scope.Scope>> =>
  Scope.extend(self, scope)
)

/**
 * A stream made by a scoped effect, the scope closing with the stream (`Stream.unwrapScoped` on
 * Effect 3, `Stream.unwrap` on 4).
 *
 * @since 0.2.0
 * @category streams
 */
export const unwrapScoped = <A, E2, R2, E, R>(
  effect: Effect.Effect<Stream.Stream<A, E2, R2>, E, R>
): Stream.Stream<A, E | E2, R2 | Exclude<R, Scope.Scope>> => Stream.unwrapScoped(effect)

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
