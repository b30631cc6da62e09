import { HttpServerRequest, NodeHttpServer, portOf, type App } from "#test/http"
import * as Edition from "@circuitry/core/Edition"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"

export interface Served {
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  readonly port: number
  /** The paths of every request the server received, in order. */
  readonly received: Array<string>
}

/** A real Node HTTP server on 127.0.0.1, on a free port, for the life of the scope. */
export const serve = <E, R>(
  app: App<E, R>
): Effect.Effect<Served, never, Scope.Scope | Exclude<R, HttpServerRequest.HttpServerRequest>> =>
  Effect.gen(function* () {
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
  })

/** A port on 127.0.0.1 that nothing listens on: connections to it are refused. */
export const closedPort: Effect.Effect<number> = Edition.callback<number, never>((resume) => {
  const server = Http.createServer()
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as { port: number }).port
    server.close(() => resume(Effect.succeed(port)))
  })
})
