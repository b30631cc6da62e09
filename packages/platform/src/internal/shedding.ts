/** The shedding middleware: a request's wait since the Node server heard it, judged by a Shedder. */
import { Shedder } from "@circuitry/limiter"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Http from "node:http"
import type * as LHS from "../LimiterHttpServer.js"
import { interruptibleOnDisconnect } from "./disconnect.js"
import * as refusal from "./refusal.js"

/** When each request reached the process (`performance.now()`), by its Node `IncomingMessage`. */
const arrivals = new WeakMap<object, number>()

const stamp = (request: Http.IncomingMessage): void => {
  arrivals.set(request, performance.now())
}

/** A refusal written straight to Node's response: no fiber, no middleware, no handler. */
const refuse = (response: Http.ServerResponse, error: Shedder.LoadShedError, options?: LHS.SheddingOptions) => {
  const body = JSON.stringify(shedProblem(error, options))
  response.writeHead(503, {
    "content-type": refusal.problemContentType,
    "content-length": Buffer.byteLength(body),
    ...refusal.refusalHeaders(shedRetryAfterSeconds(error))
  })
  response.end(body)
}

/** @internal */
export const trackArrivals = <S extends Http.Server>(server: S, options?: LHS.ArrivalOptions): S => {
  if (options === undefined) {
    // First among the listeners: before @effect/platform-node's handler forks the request's fiber.
    server.prependListener("request", stamp)
    return server
  }
  // A request refused on arrival must reach no listener, so the refusal sits in front of them all.
  const emit = server.emit
  server.emit = function (this: S, event: string | symbol, ...args: Array<any>): boolean {
    if (event === "request") {
      const refused = options.shedder?.unsafeAdmit(0)
      if (refused !== undefined) {
        refuse(args[1], refused, options)
        return true
      }
      stamp(args[0])
    }
    return (emit as (...a: Array<unknown>) => boolean).call(this, event, ...args)
  } as S["emit"]
  return server
}

/** @internal */
export const waitedMillis = (request: HttpServerRequest.HttpServerRequest): number => {
  const arrived =
    typeof request.source === "object" && request.source !== null ? arrivals.get(request.source) : undefined
  return arrived === undefined ? 0 : Math.max(0, performance.now() - arrived)
}

/** @internal */
export const shedRetryAfterSeconds = (error: Shedder.LoadShedError): number =>
  refusal.retryAfterSeconds(error.retryAfterMillis)

/** @internal */
export const shedProblem = (error: Shedder.LoadShedError, options?: LHS.SheddingOptions): LHS.ShedProblem => ({
  type: options?.type ?? "about:blank",
  title: options?.title ?? "Service Unavailable",
  status: 503,
  detail: `Shedder "${error.shedder}" refused a request that waited ${Math.round(error.waitedMillis)} ms before its handler (${error.reason === "standing" ? "a standing queue" : "longer than a burst may"}); retry after ${shedRetryAfterSeconds(error)} s.`,
  shedder: error.shedder,
  reason: error.reason,
  waitedMillis: Math.round(error.waitedMillis)
})

/** @internal */
export const shedResponse = (
  error: Shedder.LoadShedError,
  options?: LHS.SheddingOptions
): HttpServerResponse.HttpServerResponse =>
  refusal.problemResponse(shedProblem(error, options), shedRetryAfterSeconds(error))

/** @internal */
export const shedding =
  <I = never>(shedder: Shedder.Shedder | Context.Tag<I, Shedder.Shedder>, options?: LHS.SheddingOptions) =>
  <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | I | HttpServerRequest.HttpServerRequest> => {
    const served = interruptibleOnDisconnect(app, options)
    const judged = (s: Shedder.Shedder, request: HttpServerRequest.HttpServerRequest) =>
      Effect.matchEffect(s.admit(waitedMillis(request)), {
        onFailure: (error) => Effect.succeed(shedResponse(error, options)),
        onSuccess: () => served
      })
    return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      Shedder.isShedder(shedder)
        ? judged(shedder, request)
        : Effect.flatMap(shedder as Context.Tag<I, Shedder.Shedder>, (s) => judged(s, request))
    )
  }
