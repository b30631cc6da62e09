/**
 * Results on Effect 4 (`Result`), part of the edition layer: edition.effect4.ts exports them. The
 * Effect 3 file (edition.results.effect3.ts) has the same names.
 */
import * as Effect from "effect/Effect"
import * as EffectResult from "effect/Result"

/**
 * A success or a failure, as a value (`Either` on Effect 3, `Result` on 4): the type, and the
 * functions on it under Effect 4's names. On Effect 3 a `Result` is yieldable in `Effect.gen`; on
 * 4 it is not: give it to `fromResult` there.
 *
 * @since 0.2.0
 * @category results
 */
export type Result<A, E = never> = EffectResult.Result<A, E>

/**
 * The functions on a `Result`, under Effect 4's names (`Either.right`, `left`, `isLeft`,
 * `mapLeft`, ... on Effect 3). `failureOf` / `successOf` read a result already told apart
 * (`.left` / `.right` on Effect 3, `.failure` / `.success` on 4).
 *
 * @since 0.2.0
 * @category results
 */
export const Result = {
  succeed: EffectResult.succeed,
  fail: EffectResult.fail,
  isFailure: EffectResult.isFailure,
  isSuccess: EffectResult.isSuccess,
  failureOf: <A, E>(self: EffectResult.Failure<A, E>): E => self.failure,
  successOf: <A, E>(self: EffectResult.Success<A, E>): A => self.success,
  map: EffectResult.map,
  mapError: EffectResult.mapError,
  flatMap: EffectResult.flatMap,
  match: <A, E, B, C = B>(
    self: EffectResult.Result<A, E>,
    options: { readonly onFailure: (error: E) => B; readonly onSuccess: (value: A) => C }
  ): B | C => EffectResult.match(self, options),
  gen: EffectResult.gen,
  getOrThrow: EffectResult.getOrThrow,
  getOrUndefined: EffectResult.getOrUndefined,
  try: EffectResult.try
}

/**
 * A result as an effect: its success, or its failure as the effect's failure.
 *
 * @since 0.2.0
 * @category results
 */
export const fromResult = <A, E>(self: Result<A, E>): Effect.Effect<A, E> => Effect.fromResult(self)

/**
 * An effect's outcome as a value, failures included (`Effect.either` on Effect 3, `Effect.result`
 * on 4).
 *
 * @since 0.2.0
 * @category results
 */
export const result: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<Result<A, E>, never, R> = Effect.result
