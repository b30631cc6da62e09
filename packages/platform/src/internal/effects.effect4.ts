/**
 * The few stream and scope forms the health route's live streams use, on Effect 4 (see
 * effects.effect3.ts).
 *
 * @internal
 */
import type * as Edition from "@circuitry/core/Edition"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/** A scope that can be closed (`Scope.CloseableScope` on Effect 3, `Scope.Closeable` on 4). @internal */
export type Closeable = Scope.Closeable

/** A child of `parent` whose finalizers run in order (`Scope.fork(parent, "sequential")` on 4). @internal */
export const forkScope = (parent: Scope.Scope): Effect.Effect<Closeable> => Scope.fork(parent, "sequential")

/** Runs `self` in `scope` (`Scope.extend` on Effect 3, `Scope.provide` on 4). @internal */
export const inScope = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  scope: Scope.Scope
): Effect.Effect<A, E, Exclude<R, Scope.Scope>> => Scope.provide(self, scope)

/** A stream made by a scoped effect, the scope closing with the stream (`Stream.unwrap` on 4). @internal */
export const unwrapScoped = <A, E2, R2, E, R>(
  effect: Effect.Effect<Stream.Stream<A, E2, R2>, E, R>
): Stream.Stream<A, E | E2, R2 | Exclude<R, Scope.Scope>> => Stream.unwrap(effect)

/** One element per chunk of `self`, made by `f` (`Stream.mapChunksEffect` on 3, `mapArrayEffect` on 4). @internal */
export const perChunk = <A, E, R, B, R2>(
  self: Stream.Stream<A, E, R>,
  f: Effect.Effect<B, never, R2>
): Stream.Stream<B, E, R | R2> => Stream.mapArrayEffect(self, () => Effect.map(f, Arr.of))

/** The next item of a subscription (a `Queue.Dequeue` on Effect 3: `Queue.take`; `PubSub.take` on 4). @internal */
export const take = <A>(subscription: Edition.Subscription<A>): Effect.Effect<A> => PubSub.take(subscription)
