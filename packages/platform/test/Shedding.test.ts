/**
 * LimiterHttpServer.shedding over real HTTP on 127.0.0.1: the refusal, and a client that goes
 * away. The overload run is in overload.test.ts.
 */
import { Shedder } from "@circuitry/limiter"
import { LimiterHttpServer } from "@circuitry/platform"
import { assert, describe, it } from "@effect/vitest"
import type * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import * as TestClock from "effect/TestClock"
import * as TestContext from "effect/TestContext"
import { disconnectAfter } from "./utils.js"

/** A Node server on a free port of 127.0.0.1 that tracks arrivals, for the life of the scope. */
const serveTracked = <E, R>(app: HttpApp.Default<E, R>, arrivals?: LimiterHttpServer.ArrivalOptions) =>
  Effect.gen(function* () {
    const server = yield* NodeHttpServer.make(() => LimiterHttpServer.trackArrivals(Http.createServer(), arrivals), {
      port: 0,
      host: "127.0.0.1"
    }).pipe(Effect.orDie)
    yield* server.serve(app)
    return (server.address as HttpServer.TcpAddress).port
  })

/** One GET on a connection of its own; resolves with the status, headers and body. */
const get = (port: number, path: string) =>
  Effect.async<{ status: number; headers: Http.IncomingHttpHeaders; body: string }>((resume) => {
    Http.get({ host: "127.0.0.1", port, path, agent: false }, (response) => {
      let body = ""
      response.setEncoding("utf8")
      response.on("data", (chunk) => (body += chunk))
      response.on("end", () =>
        resume(Effect.succeed({ status: response.statusCode!, headers: response.headers, body }))
      )
    })
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

describe("LimiterHttpServer.shedding", () => {
  it.live(
    "a shed request gets 503 problem+json with Retry-After, from the middleware or on arrival, and no handler runs",
    () =>
      Effect.gen(function* () {
        // The shedder lives on a TestClock: its sampler's timer fires at 0 and its read never comes
        // back, so once the clock is a second on, every request is judged a second late.
        const shedder = yield* Effect.gen(function* () {
          const shedder = yield* Shedder.make({ name: "api", loop: Effect.never })
          yield* TestClock.adjust("1 second")
          return shedder
        }).pipe(Effect.provide(TestContext.TestContext))
        const runs = { count: 0 }
        const app = Effect.sync(() => {
          runs.count++
          return HttpServerResponse.text("served")
        })
        const inMiddleware = yield* serveTracked(app.pipe(LimiterHttpServer.shedding(shedder)))
        const onArrival = yield* serveTracked(app, { shedder })
        for (const port of [inMiddleware, onArrival]) {
          const refused = yield* get(port, "/work")
          assert.strictEqual(refused.status, 503)
          assert.strictEqual(refused.headers["content-type"], "application/problem+json")
          assert.strictEqual(refused.headers["retry-after"], "1")
          assert.strictEqual(refused.headers["cache-control"], "no-store")
          const body = JSON.parse(refused.body)
          assert.deepStrictEqual(
            { ...body, waitedMillis: body.waitedMillis >= 980 },
            {
              type: "about:blank",
              title: "Service Unavailable",
              status: 503,
              detail: body.detail,
              shedder: "api",
              reason: "overdue",
              waitedMillis: true
            }
          )
          assert.match(
            body.detail,
            /^Shedder "api" refused a request that waited \d+ ms before its handler \(longer than a burst may\); retry after 1 s\.$/
          )
        }
        assert.strictEqual(runs.count, 0)
      }).pipe(Effect.scoped)
  )

  it.live("a client that disconnects stops its handler at its next turn of the loop", () =>
    Effect.gen(function* () {
      const shedder = yield* Shedder.make({ name: "disconnect", loop: false })
      const release = yield* Deferred.make<void>()
      const { app, interrupted, started, work } = yield* slicedWork(release)
      const port = yield* serveTracked(app.pipe(LimiterHttpServer.shedding(shedder)))
      yield* disconnectAfter(port, "/work", Deferred.await(started))
      const slicesAtInterrupt = yield* Deferred.await(interrupted).pipe(Effect.timeout("5 seconds"))
      assert.strictEqual(work.slices, slicesAtInterrupt) // no slice after the interruption
      yield* Deferred.succeed(release, undefined)
    }).pipe(Effect.scoped)
  )

  it.live(
    "with interruptOnDisconnect: false (as @effect/platform runs handlers) the handler works on for a gone client",
    () =>
      Effect.gen(function* () {
        const shedder = yield* Shedder.make({ name: "disconnect-off", loop: false })
        const release = yield* Deferred.make<void>()
        const { app, interrupted, reached, started, work } = yield* slicedWork(release)
        const closed = yield* Deferred.make<number>()
        const port = yield* serveTracked(
          Effect.zipRight(
            // hear the close as @effect/platform-node does, to know when the client has gone
            Effect.flatMap(
              Effect.map(HttpServerRequest.HttpServerRequest, NodeHttpServerRequest.toServerResponse),
              (response) =>
                Effect.sync(() => response.on("close", () => Deferred.unsafeDone(closed, Effect.succeed(work.slices))))
            ),
            app
          ).pipe(LimiterHttpServer.shedding(shedder, { interruptOnDisconnect: false }))
        )
        yield* disconnectAfter(port, "/work", Deferred.await(started))
        const slicesAtClose = yield* Deferred.await(closed).pipe(Effect.timeout("5 seconds"))
        yield* reached(slicesAtClose + 20).pipe(Effect.timeout("5 seconds"))
        assert.isFalse(yield* Deferred.isDone(interrupted))
        yield* Deferred.succeed(release, undefined)
      }).pipe(Effect.scoped)
  )
})
