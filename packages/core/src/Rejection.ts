/**
 * The one way a circuitry package recognises a rejection: an error that refused a call without
 * running it (`BreakerOpenError`, `LimiterRejectedError`, `LoadShedError`). A rejection carries `TypeId`, a
 * `Symbol.for` key, so that it is recognised across copies of the packages (two installs, or an
 * Effect 3 and an Effect 4 build in one app), where `instanceof` or a class identity would not be,
 * and a look-alike with the same `_tag` is not taken for one.
 *
 * @since 0.2.0
 */

/**
 * The key a rejection carries; its value is the key itself.
 *
 * @since 0.2.0
 * @category symbols
 */
export const TypeId: unique symbol = Symbol.for("@circuitry/core/Rejection")

/**
 * @since 0.2.0
 * @category symbols
 */
export type TypeId = typeof TypeId

/**
 * An error that refused a call without running it.
 *
 * @since 0.2.0
 * @category models
 */
export interface Rejection {
  readonly [TypeId]: TypeId
  /** Which error it is: `"BreakerOpenError"`, `"LimiterRejectedError"`, `"LoadShedError"`. */
  readonly _tag: string
  /** When the rejecting side expects to admit calls again, in milliseconds; 0 when it does not know. */
  readonly retryAfterMillis: number
}

/**
 * Whether a value is a rejection: it carries `TypeId`, whichever copy of the package made it.
 *
 * @since 0.2.0
 * @category guards
 * @example
 * ```ts
 * import { Rejection } from "@circuitry/core"
 *
 * const retryAfter = (error: unknown): number | undefined =>
 *   Rejection.isRejection(error) ? error.retryAfterMillis : undefined
 * ```
 */
export const isRejection = (u: unknown): u is Rejection =>
  typeof u === "object" && u !== null && (u as { readonly [TypeId]?: unknown })[TypeId] === TypeId

/**
 * Whether a value is a rejection with the given `_tag`: what each package's own guard
 * (`isBreakerOpenError`, `isLimiterRejectedError`, `isLoadShedError`) is made of.
 *
 * @since 0.2.0
 * @category guards
 * @example
 * ```ts
 * import { Rejection } from "@circuitry/core"
 *
 * const isMyRejection = (u: unknown) => Rejection.isTagged(u, "MyRejection")
 * ```
 */
export const isTagged = <Tag extends string>(u: unknown, tag: Tag): u is Rejection & { readonly _tag: Tag } =>
  isRejection(u) && u._tag === tag
