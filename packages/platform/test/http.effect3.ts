/**
 * The HTTP modules the platform's tests use, on Effect 3: @effect/platform 0.97 and
 * @effect/platform-node 0.108 (http.effect4.ts has the same names over effect/http and
 * @effect/platform-node 4.1). A test imports them from "#test/http", a subpath import of this
 * package's package.json chosen by the "@circuitry/effect4" condition, as core's "#edition" is; no
 * test names a module of one major. Where a name or a shape differs, a helper here says so.
 */
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpServer from "@effect/platform/HttpServer"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

export * as HttpApi from "@effect/platform/HttpApi"
export * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
export * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
export * as HttpApiGroup from "@effect/platform/HttpApiGroup"
export * as HttpClient from "@effect/platform/HttpClient"
export * as HttpClientRequest from "@effect/platform/HttpClientRequest"
export type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
export * as HttpRouter from "@effect/platform/HttpRouter"
export * as HttpServer from "@effect/platform/HttpServer"
export * as HttpServerRequest from "@effect/platform/HttpServerRequest"
export * as HttpServerResponse from "@effect/platform/HttpServerResponse"
export * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
export * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
// The PostgreSQL health test's SQL modules (@effect/sql and @effect/sql-pg 0.5x on Effect 3).
export * as PgClient from "@effect/sql-pg/PgClient"
/** Whether an interrupted query waits for its cancel (@effect/sql-pg 0.53 waits for `pg_cancel_backend`, which needs a pool connection). */
export const pgInterruptWaitsForCancel: boolean = true
export * as SqlClient from "@effect/sql/SqlClient"

/** A handler: an effect that answers the request (`HttpApp.Default` on Effect 3). */
export type App<E = never, R = never> = HttpApp.Default<E, R>

/** The Node HTTP client over node:http (`NodeHttpClient.layer` on Effect 3, `layerNodeHttp` on 4). */
export const clientLayer = NodeHttpClient.layer

/** The port a server on 127.0.0.1 listens on (a `TcpAddress` on Effect 3, an `InetAddress` on 4). */
export const portOf = (server: HttpServer.HttpServer): number => (server.address as HttpServer.TcpAddress).port

/** A request's JSON body from any value (`bodyUnsafeJson` on Effect 3, `bodyJsonUnsafe` on 4). */
export const bodyJson: {
  (body: unknown): (self: HttpClientRequest.HttpClientRequest) => HttpClientRequest.HttpClientRequest
  (self: HttpClientRequest.HttpClientRequest, body: unknown): HttpClientRequest.HttpClientRequest
} = HttpClientRequest.bodyUnsafeJson

/**
 * Routes as the major has them: an `HttpRouter` value on Effect 3 (what `HealthRoute.router` and
 * `MetricsRoute.router` return), a layer of routes on 4.
 */
export type Routes<E = never, R = never> = HttpRouter.HttpRouter<E, R>

/** One route (`HttpRouter.route(method)` on an empty router on Effect 3, `HttpRouter.add` on 4). */
export const route = <E, R>(method: "GET" | "POST", path: `/${string}`, handler: App<E, R>): Routes<E, R> =>
  HttpRouter.route(method)(path, handler)(HttpRouter.empty) as Routes<E, R>

/** Routers together (`HttpRouter.concat` on Effect 3, `Layer.mergeAll` on 4). */
export const routes = <E, R>(...routers: ReadonlyArray<Routes<E, R>>): Routes<E, R> =>
  routers.reduce<Routes<E, R>>((all, router) => HttpRouter.concat(all, router), HttpRouter.empty)

/** A client error's reason and cause (Effect 3: a `RequestError` / `ResponseError` `reason` string). */
export const clientErrorOf = (error: unknown): { readonly reason: string; readonly cause: unknown } | undefined =>
  HttpClientError.isHttpClientError(error) ? { reason: error.reason, cause: error.cause } : undefined

/** The app a server runs for `T`, an app or routes (on Effect 3 a router is an app). */
export type AppOf<T> = T extends App<infer E, infer R> ? App<E, R> : never

/** What a server runs: an app, or routes (on Effect 3 a router is an app; on 4, `HttpRouter.toHttpEffect`). */
export const toApp = <T extends App<any, any> | Routes<any, any>>(
  app: T
): Effect.Effect<AppOf<T>, never, Scope.Scope> => Effect.succeed(app as unknown as AppOf<T>)
