/**
 * The one stream form the health route's live streams use that is theirs alone, on Effect 3
 * (effects.effect4.ts has the same name on Effect 4); the general ones (`forkScope`, `inScope`,
 * `unwrapScoped`, `take`) are `@circuitry/core/Edition`'s. Sources import it from "#effects",
 * chosen and rewritten by the build as "#http" is.
 *
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

/** One element per chunk of `self`, made by `f` (`Stream.mapChunksEffect` on 3, `mapArrayEffect` on 4). @internal */
export const perChunk = <A, E, R, B, R2>(
  self: Stream.Stream<A, E, R>,
  f: Effect.Effect<B, never, R2>
): Stream.Stream<B, E, R | R2> => Stream.mapChunksEffect(self, () => Effect.map(f, Chunk.of))
