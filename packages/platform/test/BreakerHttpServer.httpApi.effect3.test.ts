/**
 * BreakerHttpServer.layerHttpApi on Effect 3: `HttpApiBuilder.middleware`, provided next to
 * `HttpApiBuilder.api`, runs before the API encodes errors, so a declared BreakerOpenError and an
 * undeclared one (a defect) both become the 503 (Effect 4's HttpApi is another API:
 * BreakerHttpServer.httpApi.effect4.test.ts).
 */
import { TestClock, assert, describe, it } from "@circuitry/testkit"
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpClient,
  HttpServer,
  NodeHttpServer,
  portOf
} from "#test/http"
import { BreakerRegistry, CircuitBreaker } from "@circuitry/breaker"
import { BreakerHttpServer } from "@circuitry/platform"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Http from "node:http"
import { Env, open, openProblem, read } from "./breakerServer.js"

describe("BreakerHttpServer.layerHttpApi", () => {
  it.scoped("HttpApi: a declared BreakerOpenError and an undeclared one (orDie) both become the 503", () =>
    Effect.gen(function* () {
      class Api extends HttpApi.make("api").add(
        HttpApiGroup.make("payments")
          .add(
            HttpApiEndpoint.get("charge", "/charge")
              .addSuccess(Schema.String)
              .addError(CircuitBreaker.BreakerOpenError, { status: 503 })
          )
          .add(HttpApiEndpoint.get("refund", "/refund").addSuccess(Schema.String))
      ) {}
      const PaymentsLive = HttpApiBuilder.group(Api, "payments", (handlers) =>
        handlers
          .handle("charge", () => Effect.succeed("charged").pipe(BreakerRegistry.withBreakerFor("payments")))
          .handle("refund", () =>
            Effect.succeed("refunded").pipe(BreakerRegistry.withBreakerFor("payments"), Effect.orDie)
          )
      )
      const registry = yield* BreakerRegistry.BreakerRegistry
      const context = yield* Layer.build(
        HttpApiBuilder.serve().pipe(
          Layer.provide(BreakerHttpServer.layerHttpApi()),
          Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(PaymentsLive))),
          Layer.provide(Layer.succeed(BreakerRegistry.BreakerRegistry, registry)),
          Layer.provideMerge(NodeHttpServer.layer(() => Http.createServer(), { port: 0, host: "127.0.0.1" }))
        )
      )
      const url = `http://127.0.0.1:${portOf(Context.get(context, HttpServer.HttpServer))}`
      const client = yield* HttpClient.HttpClient

      assert.strictEqual((yield* read(yield* client.get(`${url}/charge`))).body, JSON.stringify("charged"))
      yield* open("payments")
      yield* TestClock.adjust("10500 millis")
      for (const path of ["/charge", "/refund"]) {
        assert.deepStrictEqual(yield* read(yield* client.get(`${url}${path}`)), {
          status: 503,
          contentType: "application/problem+json",
          retryAfter: "20",
          cacheControl: "no-store",
          body: openProblem("1970-01-01T00:00:30.000Z", 20)
        })
      }
    }).pipe(Effect.provide(Env))
  )
})
