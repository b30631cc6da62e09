/**
 * The HTTP modules the platform's tests use, on Effect 3: @effect/platform 0.97 and
 * @effect/platform-node 0.108 (http.effect4.ts has the same names over effect/http and
 * @effect/platform-node 4.1). A test imports them from "#test/http", a subpath import of this
 * package's package.json chosen by the "@circuitry/effect4" condition, as core's "#edition" is; no
 * test names a module of one major. Where a name or a shape differs, a helper here says so.
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"

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
