/**
 * What every refusal of the server middlewares answers with, whether a limiter, a shedder or an
 * open circuit refused: problem details (RFC 9457) and the headers that tell a client when to
 * come back.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"

/** Whole seconds, rounded up and never 0: a client told 0 would come back at once. @internal */
export const retryAfterSeconds = (retryAfterMillis: number): number => Math.max(1, Math.ceil(retryAfterMillis / 1000))

/**
 * `Retry-After` (none when no time can be given, as for an isolated circuit), and no cache may keep
 * the refusal for a later request.
 *
 * @internal
 */
export const refusalHeaders = (retryAfterSeconds: number | undefined): Record<string, string> =>
  retryAfterSeconds === undefined
    ? { "cache-control": "no-store" }
    : { "retry-after": String(retryAfterSeconds), "cache-control": "no-store" }

/** @internal */
export const problemContentType = "application/problem+json"

/** The refusal as a response: the problem's own status, its body as JSON, and the headers. @internal */
export const problemResponse = (
  problem: { readonly status: number },
  retryAfterSeconds: number | undefined
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(problem, {
    status: problem.status,
    contentType: problemContentType,
    headers: refusalHeaders(retryAfterSeconds)
  })
