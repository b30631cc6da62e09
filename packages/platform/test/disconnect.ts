/**
 * A client that goes away while its handler runs, over real HTTP on 127.0.0.1: the checks that
 * LimiterHttpServer's middlewares (`shedding`, `middleware`) each pass, with and without
 * `interruptOnDisconnect`.
 */
import { assert } from "@effect/vitest"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Net from "node:net"

/**
 * Sends a GET for `path` on a raw socket of its own, waits for `reached` (the handler started, the
 * request is queued), then closes the connection as a client that gives up does.
 */
export const disconnectAfter = <E, R>(port: number, path: string, reached: Effect.Effect<void, E, R>) =>
  Effect.gen(function* () {
    const socket = Net.connect(port, "127.0.0.1")
    socket.on("connect", () => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`))
    yield* reached
    socket.destroy()
  })

/** A turn of the event loop: what an I/O wait gives the loop, so that it can hear a closed connection. */
const turn = Effect.async<void>((resume) => {
  setImmediate(() => resume(Effect.void))
})

/** A handler that works in 1 ms slices until `release`, counting its slices, and says when it stops. */
const slicedWork = (release: Deferred.Deferred<void>) =>
  Effect.gen(function* () {
    const started = yield* Deferred.make<void>()
    const interrupted = yield* Deferred.make<number>()
    const work = { slices: 0 }
    const waiting: Array<readonly [number, Deferred.Deferred<void>]> = []
    /** Resolves once the handler has done `n` slices. */
    const reached = (n: number) =>
      Effect.flatMap(Deferred.make<void>(), (d) => {
        waiting.push([n, d])
        return Deferred.await(d)
      })
    const app = Effect.gen(function* () {
      yield* Deferred.succeed(started, undefined)
      while (!(yield* Deferred.isDone(release))) {
        const start = performance.now()
        while (performance.now() - start < 1) {
          // a slice of CPU
        }
        work.slices++
        for (const [n, d] of waiting) if (work.slices >= n) yield* Deferred.succeed(d, undefined)
        yield* turn
      }
      return HttpServerResponse.text("done")
    }).pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, work.slices)))
    return { app, started, interrupted, work, reached }
  })

/** Serves `app` on a free port of 127.0.0.1 behind the middleware under test, for the life of the scope. */
export type Guarded = (
  app: HttpApp.Default<never, HttpServerRequest.HttpServerRequest>
) => Effect.Effect<number, never, Scope.Scope>

/** The client disconnects while its handler works: the handler stops at its next turn of the loop. */
export const stopsForAGoneClient = (serve: Guarded) =>
  Effect.gen(function* () {
    const release = yield* Deferred.make<void>()
    const { app, interrupted, started, work } = yield* slicedWork(release)
    const port = yield* serve(app)
    yield* disconnectAfter(port, "/work", Deferred.await(started))
    const slicesAtInterrupt = yield* Deferred.await(interrupted).pipe(Effect.timeout("5 seconds"))
    assert.strictEqual(work.slices, slicesAtInterrupt) // no slice after the interruption
    yield* Deferred.succeed(release, undefined)
  })

/**
 * With `interruptOnDisconnect: false` (as @effect/platform runs handlers): the handler works on, 20
 * slices past the moment the server heard the connection close, uninterrupted.
 */
export const worksOnForAGoneClient = (serve: Guarded) =>
  Effect.gen(function* () {
    const release = yield* Deferred.make<void>()
    const { app, interrupted, reached, started, work } = yield* slicedWork(release)
    const closed = yield* Deferred.make<number>()
    const port = yield* serve(
      Effect.zipRight(
        // hear the close as @effect/platform-node does, to know when the client has gone
        Effect.flatMap(
          Effect.map(HttpServerRequest.HttpServerRequest, NodeHttpServerRequest.toServerResponse),
          (response) =>
            Effect.sync(() => response.on("close", () => Deferred.unsafeDone(closed, Effect.succeed(work.slices))))
        ),
        app
      )
    )
    yield* disconnectAfter(port, "/work", Deferred.await(started))
    const slicesAtClose = yield* Deferred.await(closed).pipe(Effect.timeout("5 seconds"))
    yield* reached(slicesAtClose + 20).pipe(Effect.timeout("5 seconds"))
    assert.isFalse(yield* Deferred.isDone(interrupted))
    yield* Deferred.succeed(release, undefined)
  })
