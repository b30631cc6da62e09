/**
 * Results on Effect 3 (`Either` under Effect 4's names), part of the edition layer: edition.effect3.ts
 * exports them. The Effect 4 file (edition.results.effect4.ts) has the same names.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

/**
 * A success or a failure, as a value (`Either` on Effect 3, `Result` on 4): the type, and the
 * functions on it under Effect 4's names. On Effect 3 a `Result` is yieldable in `Effect.gen`; on
 * 4 it is not: give it to `fromResult` there.
 *
 * @since 0.2.0
 * @category results
 */
export type Result<A, E = never> = Either.Either<A, E>

/**
 * The functions on a `Result`, under Effect 4's names (`Either.right`, `left`, `isLeft`,
 * `mapLeft`, ... on Effect 3). `failureOf` / `successOf` read a result already told apart
 * (`.left` / `.right` on Effect 3, `.failure` / `.success` on 4).
 *
 * @since 0.2.0
 * @category results
 */
export const Result = {
  succeed: Either.right,
  fail: Either.left,
  isFailure: Either.isLeft,
  isSuccess: Either.isRight,
  failureOf: <A, E>(self: Either.Left<E, A>): E => self.left,
  successOf: <A, E>(self: Either.Right<E, A>): A => self.right,
  map: Either.map,
  mapError: Either.mapLeft,
  flatMap: Either.flatMap,
  match: <A, E, B, C = B>(
    self: Either.Either<A, E>,
    options: { readonly onFailure: (error: E) => B; readonly onSuccess: (value: A) => C }
  ): B | C => Either.match(self, { onLeft: options.onFailure, onRight: options.onSuccess }),
  gen: Either.gen,
  getOrThrow: Either.getOrThrow,
  getOrUndefined: Either.getOrUndefined,
  try: Either.try
}

/**
 * A result as an effect: its success, or its failure as the effect's failure.
 *
 * @since 0.2.0
 * @category results
 */
export const fromResult = <A, E>(self: Result<A, E>): Effect.Effect<A, E> => self

/**
 * An effect's outcome as a value, failures included (`Effect.either` on Effect 3, `Effect.result`
 * on 4).
 *
 * @since 0.2.0
 * @category results
 */
export const result: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<Result<A, E>, never, R> = Effect.either
