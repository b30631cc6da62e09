/**
 * BreakerHttpServer.layerHttpApi on Effect 4: a global `HttpRouter` middleware, merged with
 * `HttpApiBuilder.layer(api)` and served by `HttpRouter.serve`. An endpoint that does not declare
 * BreakerOpenError and dies with it (`Effect.orDie`) answers the 503 problem (Effect 3's HttpApi is
 * another API: BreakerHttpServer.httpApi.effect3.test.ts).
 */
import { TestClock, assert, describe, it } from "@circuitry/testkit"
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpClient,
  HttpRouter,
  HttpServer,
  NodeHttpServer,
  portOf
} from "#test/http"
import { BreakerRegistry } from "@circuitry/breaker"
import { BreakerHttpServer } from "@circuitry/platform"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Http from "node:http"
import { Env, open, openProblem, read } from "./breakerServer.js"

describe("BreakerHttpServer.layerHttpApi", () => {
  it.scoped("HttpApi: an undeclared BreakerOpenError (orDie) becomes the 503; other answers pass", () =>
    Effect.gen(function* () {
      const Api = HttpApi.make("api").add(
        HttpApiGroup.make("payments").add(HttpApiEndpoint.get("refund", "/refund", { success: Schema.String }))
      )
      const PaymentsLive = HttpApiBuilder.group(Api, "payments", (handlers) =>
        handlers.handle("refund", () =>
          Effect.succeed("refunded").pipe(BreakerRegistry.withBreakerFor("payments"), Effect.orDie)
        )
      )
      const registry = yield* BreakerRegistry.BreakerRegistry
      const context = yield* Layer.build(
        HttpRouter.serve(
          Layer.mergeAll(HttpApiBuilder.layer(Api).pipe(Layer.provide(PaymentsLive)), BreakerHttpServer.layerHttpApi()),
          { disableLogger: true }
        ).pipe(
          Layer.provide(Layer.succeed(BreakerRegistry.BreakerRegistry, registry)),
          Layer.provideMerge(NodeHttpServer.layer(() => Http.createServer(), { port: 0, host: "127.0.0.1" }))
        )
      )
      const url = `http://127.0.0.1:${portOf(Context.get(context, HttpServer.HttpServer))}`
      const client = yield* HttpClient.HttpClient

      assert.strictEqual((yield* read(yield* client.get(`${url}/refund`))).body, JSON.stringify("refunded"))
      yield* open("payments")
      yield* TestClock.adjust("10500 millis")
      assert.deepStrictEqual(yield* read(yield* client.get(`${url}/refund`)), {
        status: 503,
        contentType: "application/problem+json",
        retryAfter: "20",
        cacheControl: "no-store",
        body: openProblem("1970-01-01T00:00:30.000Z", 20)
      })
    }).pipe(Effect.provide(Env))
  )
})
