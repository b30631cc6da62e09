/**
 * The HTTP modules the platform's tests use, on Effect 4: effect/http (the HTTP modules of
 * @effect/platform, folded into effect 4) and @effect/platform-node 4.1, under the names
 * http.effect3.ts gives on Effect 3. See http.effect3.ts.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpRouter from "effect/http/HttpRouter"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpServerError from "effect/http/HttpServerError"
import type * as HttpServer from "effect/http/HttpServer"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Effect from "effect/Effect"
import type * as NetAddress from "effect/net/NetAddress"

export * as HttpApi from "effect/http-api/HttpApi"
export * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
export * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
export * as HttpApiGroup from "effect/http-api/HttpApiGroup"
export * as HttpClient from "effect/http/HttpClient"
export * as HttpClientRequest from "effect/http/HttpClientRequest"
export type * as HttpClientResponse from "effect/http/HttpClientResponse"
export * as HttpRouter from "effect/http/HttpRouter"
export * as HttpServer from "effect/http/HttpServer"
export * as HttpServerRequest from "effect/http/HttpServerRequest"
export * as HttpServerResponse from "effect/http/HttpServerResponse"
export * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
export * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
// The PostgreSQL health test's SQL modules (effect/sql and @effect/sql-pg 4 on Effect 4).
export * as PgClient from "@effect/sql-pg/PgClient"
/** Whether an interrupted query waits for its cancel (@effect/sql-pg 4 answers an interrupted query without waiting for its cancel). */
export const pgInterruptWaitsForCancel: boolean = false
export * as SqlClient from "effect/sql/SqlClient"

/**
 * A handler: an effect that answers the request. Effect 4 has no `HttpApp` module; a handler is an
 * `Effect` of a response that needs the request (what `HttpEffect` works on).
 */
export type App<E = never, R = never> = Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  E,
  R | HttpServerRequest.HttpServerRequest
>

/** The Node HTTP client over node:http (`NodeHttpClient.layer` on Effect 3, `layerNodeHttp` on 4). */
export const clientLayer = NodeHttpClient.layerNodeHttp

/** The port a server on 127.0.0.1 listens on (a `TcpAddress` on Effect 3, an `InetAddress` on 4). */
export const portOf = (server: HttpServer.HttpServer["Service"]): number =>
  (server.address as NetAddress.InetAddress).port

/** A request's JSON body from any value (`bodyUnsafeJson` on Effect 3, `bodyJsonUnsafe` on 4). */
export const bodyJson: {
  (body: unknown): (self: HttpClientRequest.HttpClientRequest) => HttpClientRequest.HttpClientRequest
  (self: HttpClientRequest.HttpClientRequest, body: unknown): HttpClientRequest.HttpClientRequest
} = HttpClientRequest.bodyJsonUnsafe

/**
 * Routes as the major has them: a layer that adds routes to the `HttpRouter` on Effect 4 (what
 * `HealthRoute.router` and `MetricsRoute.router` return), an `HttpRouter` value on 3.
 */
export type Routes<E = never, R = never> = Layer.Layer<
  never,
  never,
  | HttpRouter.HttpRouter
  | HttpRouter.Request.From<"Requires", Exclude<R, HttpRouter.Provided>>
  | HttpRouter.Request.From<"Error", E>
>

/** One route (`HttpRouter.route(method)` on an empty router on Effect 3, `HttpRouter.add` on 4). */
export const route = <E, R>(method: "GET" | "POST", path: `/${string}`, handler: App<E, R>): Routes<E, R> =>
  HttpRouter.add(method, path, handler) as Routes<E, R>

/** Routers together (`HttpRouter.concat` on Effect 3, `Layer.mergeAll` on 4). */
export const routes = <E, R>(...routers: ReadonlyArray<Routes<E, R>>): Routes<E, R> =>
  Layer.mergeAll(...(routers as [Routes<E, R>, ...Array<Routes<E, R>>]))

/**
 * A client error's reason and cause, under Effect 3's names (Effect 4: the `reason`'s tag less
 * "Error", `TransportError` is "Transport").
 */
export const clientErrorOf = (error: unknown): { readonly reason: string; readonly cause: unknown } | undefined =>
  HttpClientError.isHttpClientError(error)
    ? { reason: error.reason._tag.replace(/Error$/, ""), cause: error.reason.cause }
    : undefined

/** The app a server runs for `T`, an app or routes (on Effect 4, routes' requirements and errors). */
export type AppOf<T> =
  T extends Layer.Layer<never, never, infer RIn>
    ? App<
        HttpRouter.Request.Only<"Error", RIn> | HttpServerError.HttpServerError,
        HttpRouter.Request.Only<"Requires", RIn>
      >
    : T extends App<infer E, infer R>
      ? App<E, R>
      : never

/** What a server runs: an app, or routes (on Effect 3 a router is an app; on 4, `HttpRouter.toHttpEffect`). */
export const toApp = <T extends App<any, any> | Routes<any, any>>(
  app: T
): Effect.Effect<AppOf<T>, never, Scope.Scope> =>
  (Layer.isLayer(app) ? HttpRouter.toHttpEffect(app) : Effect.succeed(app)) as unknown as Effect.Effect<
    AppOf<T>,
    never,
    Scope.Scope
  >
