/**
 * The one stream form the health route's live streams use that is theirs alone, on Effect 4 (see
 * effects.effect3.ts).
 *
 * @internal
 */
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

/** One element per chunk of `self`, made by `f` (`Stream.mapChunksEffect` on 3, `mapArrayEffect` on 4). @internal */
export const perChunk = <A, E, R, B, R2>(
  self: Stream.Stream<A, E, R>,
  f: Effect.Effect<B, never, R2>
): Stream.Stream<B, E, R | R2> => Stream.mapArrayEffect(self, () => Effect.map(f, Arr.of))
