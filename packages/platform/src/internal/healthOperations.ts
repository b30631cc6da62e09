/**
 * The health route's operations: isolate, reset and extend an open circuit, by breaker name, each
 * decided by the application's `authorize` hook. The order of the checks is deliberate: a body that
 * is not JSON (415) or is malformed (400) is refused first, revealing nothing, then the hook decides (401/403), and only then
 * does the caller learn whether the breaker exists (404), so that names are not probed anonymously.
 */
import * as Edition from "@circuitry/core/Edition"
import { OptionRules } from "@circuitry/core"
import type { CircuitBreaker } from "@circuitry/breaker"
import { HttpServerRequest, jsonUnsafe, type Route } from "#http"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Authorization, Authorize, Operation } from "../HealthRoute.js"
import type { List } from "./healthSources.js"

/** @internal */
export const allowed = (identity: string): Authorization => ({ _tag: "Allowed", identity })
/** @internal */
export const denied = (identity: string): Authorization => ({ _tag: "Denied", identity })
/** @internal */
export const unauthenticated = (challenge?: string): Authorization =>
  challenge === undefined ? { _tag: "Unauthenticated" } : { _tag: "Unauthenticated", challenge }

const titles: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  415: "Unsupported Media Type"
}

const problem = (status: number, detail: string, headers: Record<string, string> = {}) =>
  jsonUnsafe(
    { type: "about:blank", title: titles[status], status, detail },
    { status, contentType: "application/problem+json", headers: { "cache-control": "no-store", ...headers } }
  )

class BadRequest {
  constructor(readonly detail: string) {}
}

const Target = Schema.Struct({ breaker: Schema.NonEmptyString })
const Extend = Schema.Struct({
  breaker: Schema.NonEmptyString,
  for: Schema.optional(Schema.String),
  until: Schema.optional(Schema.String)
})

/** A body that is JSON but not of the shape (`ParseError` on Effect 3, `SchemaError` on 4), or not JSON. */
const badBody =
  (shape: string) =>
  (error: { readonly _tag: string; readonly message: string }): BadRequest =>
    error._tag === "ParseError" || error._tag === "SchemaError"
      ? new BadRequest(`The body must be ${shape}: ${error.message}`)
      : new BadRequest(`The body must be JSON: ${error.message}`)

const targetBody = HttpServerRequest.schemaBodyJson(Target).pipe(
  Effect.mapError(badBody(`{ "breaker": a non-empty string }`))
)
const extendBody = HttpServerRequest.schemaBodyJson(Extend).pipe(
  Effect.mapError(badBody(`{ "breaker": a non-empty string, "for"?: a duration, "until"?: an ISO 8601 instant }`))
)

const positiveMillis = Schema.decodeUnknownOption(OptionRules.PositiveMillis)

/** `for` (a duration > 0) or `until` (an ISO 8601 instant in the future), exactly one of them. */
const untilOf = (input: typeof Extend.Type, now: number): Edition.Result<number, BadRequest> => {
  const bad = (detail: string) => Edition.Result.fail(new BadRequest(detail))
  if ((input.for === undefined) === (input.until === undefined)) {
    return bad(`Give exactly one of "for" (a duration, e.g. "5 minutes") and "until" (an ISO 8601 instant).`)
  }
  if (input.for !== undefined) {
    const millis = positiveMillis(input.for)
    if (Option.isNone(millis)) {
      return bad(`"for" must be a finite duration > 0 such as "5 minutes", got ${JSON.stringify(input.for)}.`)
    }
    return Edition.Result.succeed(now + millis.value)
  }
  const until = Date.parse(input.until!)
  if (Number.isNaN(until)) return bad(`"until" must be an ISO 8601 instant, got ${JSON.stringify(input.until)}.`)
  if (until <= now)
    return bad(`"until" must be in the future, got ${input.until} (now ${new Date(now).toISOString()}).`)
  return Edition.Result.succeed(until)
}

const verbs: Record<Operation["_tag"], string> = { Isolate: "isolated", Reset: "reset", ExtendOpen: "extended" }
const paths: Record<Operation["_tag"], string> = { Isolate: "isolate", Reset: "reset", ExtendOpen: "extend-open" }

const run = <R, L>(
  authorize: Authorize<R>,
  list: List<L>,
  parse: (now: number) => Effect.Effect<Operation, BadRequest, HttpServerRequest.HttpServerRequest>
) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    // Only JSON: a cross-site HTML form cannot send it without a CORS preflight, so a hook that
    // trusts a cookie is not open to cross-site request forgery through these routes.
    const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
    if (type !== "application/json") {
      return problem(415, `The body must be application/json, got ${type === "" ? "no content type" : type}.`)
    }
    const parsed = yield* Edition.result(Effect.flatMap(Clock.currentTimeMillis, parse))
    if (Edition.Result.isFailure(parsed)) return problem(400, Edition.Result.failureOf(parsed).detail)
    const operation = Edition.Result.successOf(parsed)
    const verdict = yield* authorize(request, operation)
    const log = Effect.annotateLogs({ operation: operation._tag, breaker: operation.breaker })
    if (verdict._tag === "Unauthenticated") {
      yield* Effect.logWarning("health route: unauthenticated operation refused").pipe(log)
      const headers: Record<string, string> =
        verdict.challenge === undefined ? {} : { "www-authenticate": verdict.challenge }
      return problem(401, `Operations need an authenticated caller.`, headers)
    }
    if (verdict._tag === "Denied") {
      yield* Effect.logWarning("health route: operation denied").pipe(
        log,
        Effect.annotateLogs("identity", verdict.identity)
      )
      return problem(403, `${verdict.identity} may not ${paths[operation._tag]} "${operation.breaker}".`)
    }
    // The breakers held, not a registry's `get`: an operation must not create the breaker it names.
    // Breakers of one name (a registry's and one handed to the route) are one circuit to an operator.
    const named = (yield* list).filter((b) => b.name === operation.breaker)
    const breaker = named[0]
    if (breaker === undefined) return problem(404, `No breaker named "${operation.breaker}" on this route.`)
    for (const each of named) {
      const applied = yield* apply(each, operation, verdict.identity)
      if (applied !== undefined) return problem(409, applied)
    }
    const snapshot = yield* breaker.snapshot
    const at = yield* Clock.currentTimeMillis
    yield* Effect.logInfo(`health route: ${verdict.identity} ${verbs[operation._tag]} "${breaker.name}"`).pipe(
      log,
      Effect.annotateLogs("identity", verdict.identity)
    )
    return jsonUnsafe(
      {
        operation: operation._tag,
        breaker: breaker.name,
        by: verdict.identity,
        at: new Date(at).toISOString(),
        state: snapshot.state._tag,
        openUntil: snapshot.state._tag === "Open" ? new Date(snapshot.state.until).toISOString() : null
      },
      { headers: { "cache-control": "no-store" } }
    )
  })

/**
 * Applies the operation in the name of `by` (the identity the hook allowed), which the transition
 * and, with a shared store, the fleet's verdict carry; a string is why it could not be (409).
 */
const apply = (
  breaker: CircuitBreaker.CircuitBreaker<unknown>,
  operation: Operation,
  by: string
): Effect.Effect<string | undefined> => {
  switch (operation._tag) {
    case "Isolate":
      return Effect.as(breaker.isolateBy(by), undefined)
    case "Reset":
      return Effect.as(breaker.resetBy(by), undefined)
    case "ExtendOpen":
      return Effect.flatMap(breaker.state, (state) =>
        state._tag === "Open"
          ? Effect.as(breaker.extendOpen(operation.until, { by }), undefined)
          : Effect.succeed(`Circuit "${breaker.name}" is ${state._tag}, not Open: there is no open time to extend.`)
      )
  }
}

/** @internal */
export const routes = <R, L>(
  path: `/${string}`,
  authorize: Authorize<R>,
  list: List<L>
): ReadonlyArray<Route<R | L | HttpServerRequest.HttpServerRequest>> => [
  {
    method: "POST",
    path: `${path}/isolate`,
    handler: run(authorize, list, () =>
      Effect.map(targetBody, ({ breaker }) => ({ _tag: "Isolate" as const, breaker }))
    )
  },
  {
    method: "POST",
    path: `${path}/reset`,
    handler: run(authorize, list, () => Effect.map(targetBody, ({ breaker }) => ({ _tag: "Reset" as const, breaker })))
  },
  {
    method: "POST",
    path: `${path}/extend-open`,
    handler: run(authorize, list, (now) =>
      Effect.flatMap(extendBody, (input) =>
        Effect.map(Edition.fromResult(untilOf(input, now)), (until) => ({
          _tag: "ExtendOpen" as const,
          breaker: input.breaker,
          until
        }))
      )
    )
  }
]
