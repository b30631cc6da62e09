/**
 * LimiterHttpServer.shedding over real HTTP on 127.0.0.1: the refusal, and a client that goes
 * away. The overload run is in overload.test.ts.
 */
import { Shedder } from "@circuitry/limiter"
import { LimiterHttpServer } from "@circuitry/platform"
import { assert, describe, it } from "@effect/vitest"
import type * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import * as TestClock from "effect/TestClock"
import * as TestContext from "effect/TestContext"
import { stopsForAGoneClient, worksOnForAGoneClient } from "./disconnect.js"

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
      yield* stopsForAGoneClient((app) => serveTracked(app.pipe(LimiterHttpServer.shedding(shedder))))
    }).pipe(Effect.scoped)
  )

  it.live(
    "with interruptOnDisconnect: false (as @effect/platform runs handlers) the handler works on for a gone client",
    () =>
      Effect.gen(function* () {
        const shedder = yield* Shedder.make({ name: "disconnect-off", loop: false })
        yield* worksOnForAGoneClient((app) =>
          serveTracked(app.pipe(LimiterHttpServer.shedding(shedder, { interruptOnDisconnect: false })))
        )
      }).pipe(Effect.scoped)
  )
})
