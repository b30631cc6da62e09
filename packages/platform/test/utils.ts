import { HttpServerRequest, NodeHttpServer, portOf, toApp, type App, type AppOf, type Routes } from "#test/http"
import * as Edition from "@circuitry/core/Edition"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"

/** What an app needs besides the request. */
type Needs<A> = A extends App<any, infer R> ? R : never

export interface Served {
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  readonly port: number
  /** The paths of every request the server received, in order. */
  readonly received: Array<string>
}

/**
 * A real Node HTTP server on 127.0.0.1, on a free port, for the life of the scope, serving an app or
 * routes (a router on Effect 3, a layer of routes on 4), with `around` (a middleware) around it.
 */
export const serve = <T extends App<any, any> | Routes<any, any>, A extends App<any, any> = AppOf<T>>(
  routes: T,
  around?: (app: AppOf<T>) => A
): Effect.Effect<Served, never, Scope.Scope | Exclude<Needs<A>, HttpServerRequest.HttpServerRequest>> =>
  Effect.gen(function* () {
    const inner = yield* toApp(routes)
    const app: App<unknown, unknown> = around === undefined ? inner : around(inner)
    const server = yield* NodeHttpServer.make(() => Http.createServer(), { port: 0, host: "127.0.0.1" }).pipe(
      Effect.orDie
    )
    const received: Array<string> = []
    const counted = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      received.push(new URL(request.url, "http://x").pathname)
      return app
    })
    yield* server.serve(counted)
    const port = portOf(server)
    return { url: `http://127.0.0.1:${port}`, port, received }
  }) as Effect.Effect<Served, never, Scope.Scope | Exclude<Needs<A>, HttpServerRequest.HttpServerRequest>>

/** A port on 127.0.0.1 that nothing listens on: connections to it are refused. */
export const closedPort: Effect.Effect<number> = Edition.callback<number, never>((resume) => {
  const server = Http.createServer()
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as { port: number }).port
    server.close(() => resume(Effect.succeed(port)))
  })
})
