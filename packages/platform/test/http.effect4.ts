/**
 * The HTTP modules the platform's tests use, on Effect 4: effect/http (the HTTP modules of
 * @effect/platform, folded into effect 4) and @effect/platform-node 4.1, under the names
 * http.effect3.ts gives on Effect 3. See http.effect3.ts.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpServer from "effect/http/HttpServer"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as Effect from "effect/Effect"
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
