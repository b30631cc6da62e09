/**
 * Rejections from further down: a `BreakerOpenError` from `@circuitry/breaker` or a
 * `LimiterRejectedError` from `@circuitry/limiter`. They are recognised by their `_tag` and a
 * numeric `retryAfterMillis`, so that this package depends on neither.
 */

/** @internal */
export interface Rejection {
  readonly _tag: "BreakerOpenError" | "LimiterRejectedError"
  /** When the rejecting side expects to admit calls again; 0 when it does not know. */
  readonly retryAfterMillis: number
}

/** @internal */
export const isRejection = (u: unknown): u is Rejection => {
  if (typeof u !== "object" || u === null) return false
  const tag = (u as { readonly _tag?: unknown })._tag
  return (
    (tag === "BreakerOpenError" || tag === "LimiterRejectedError") &&
    typeof (u as { readonly retryAfterMillis?: unknown }).retryAfterMillis === "number"
  )
}
