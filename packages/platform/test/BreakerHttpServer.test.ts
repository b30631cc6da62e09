import { TestClock, assert, describe, it, yieldNow } from "@circuitry/testkit"
import { HttpClient, HttpServerResponse, route, routes } from "#test/http"
import * as Edition from "@circuitry/core/Edition"
import { BreakerRegistry, CircuitBreaker } from "@circuitry/breaker"
import { BreakerHttpServer } from "@circuitry/platform"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { Env, open, openProblem, read } from "./breakerServer.js"
import { serve } from "./utils.js"

class Unrelated extends Data.TaggedError("Unrelated") {}

const app = routes<Unrelated | CircuitBreaker.BreakerOpenError, BreakerRegistry.BreakerRegistry>(
  route(
    "GET",
    "/charge",
    Effect.succeed(HttpServerResponse.text("charged")).pipe(BreakerRegistry.withBreakerFor("payments"))
  ),
  // Dies with the refusal instead of failing: still a 503.
  route(
    "GET",
    "/refund",
    Effect.succeed(HttpServerResponse.text("refunded")).pipe(BreakerRegistry.withBreakerFor("payments"), Effect.orDie)
  ),
  route("GET", "/unrelated", Effect.fail(new Unrelated()))
)

describe("BreakerHttpServer", () => {
  it.scoped("an open circuit answers 503 problem+json with Retry-After in whole seconds, rounded up", () =>
    Effect.gen(function* () {
      const server = yield* serve(app, BreakerHttpServer.middleware)
      const client = yield* HttpClient.HttpClient
      assert.strictEqual((yield* read(yield* client.get(`${server.url}/charge`))).body, "charged")

      yield* open("payments")
      yield* TestClock.adjust("10500 millis")
      assert.deepStrictEqual(yield* read(yield* client.get(`${server.url}/charge`)), {
        status: 503,
        contentType: "application/problem+json",
        retryAfter: "20",
        cacheControl: "no-store",
        body: openProblem("1970-01-01T00:00:30.000Z", 20)
      })

      // One millisecond left: still 1, never 0.
      yield* TestClock.adjust("19499 millis")
      const last = yield* read(yield* client.get(`${server.url}/refund`))
      assert.strictEqual(last.status, 503)
      assert.strictEqual(last.retryAfter, "1")
      assert.strictEqual(last.body, openProblem("1970-01-01T00:00:30.000Z", 1))

      // Other failures pass through untouched.
      assert.strictEqual((yield* client.get(`${server.url}/unrelated`)).status, 500)

      // Once the open time is over, the probe runs and the handler answers again.
      yield* TestClock.adjust("1 millis")
      assert.strictEqual((yield* read(yield* client.get(`${server.url}/charge`))).body, "charged")
    }).pipe(Effect.provide(Env))
  )

  it.scoped("half-open with every probe taken: 503 with Retry-After 1; isolated: 503 without a promise", () =>
    Effect.gen(function* () {
      const server = yield* serve(app, BreakerHttpServer.middleware)
      const client = yield* HttpClient.HttpClient
      const breaker = yield* open("payments")
      yield* TestClock.adjust("30 seconds")
      // A probe in flight holds the only permit.
      yield* Edition.forkChild(breaker.execute(Effect.never))
      yield* yieldNow
      assert.strictEqual((yield* breaker.snapshot).probes, 1)
      const halfOpen = yield* read(yield* client.get(`${server.url}/charge`))
      assert.strictEqual(halfOpen.status, 503)
      assert.strictEqual(halfOpen.retryAfter, "1")
      assert.deepStrictEqual(JSON.parse(halfOpen.body), {
        type: "about:blank",
        title: "Service Unavailable",
        status: 503,
        detail: `Circuit "payments" is half-open and testing its dependency; retry after 1 s.`,
        circuit: "payments",
        state: "HalfOpen",
        openUntil: null
      })

      yield* breaker.isolate
      const isolated = yield* read(yield* client.get(`${server.url}/charge`))
      assert.strictEqual(isolated.status, 503)
      assert.strictEqual(isolated.contentType, "application/problem+json")
      assert.strictEqual(isolated.retryAfter, undefined)
      assert.strictEqual(JSON.parse(isolated.body).state, "Isolated")
      assert.strictEqual(JSON.parse(isolated.body).openUntil, null)
    }).pipe(Effect.provide(Env))
  )

  it.scoped("problem type and title are options", () =>
    Effect.gen(function* () {
      const custom = route(
        "GET",
        "/charge",
        Effect.succeed(HttpServerResponse.empty()).pipe(BreakerRegistry.withBreakerFor("payments"))
      )
      const server = yield* serve(
        custom,
        BreakerHttpServer.makeMiddleware({ type: "https://example.com/problems/circuit-open", title: "Circuit open" })
      )
      yield* open("payments")
      const body = JSON.parse((yield* read(yield* (yield* HttpClient.HttpClient).get(`${server.url}/charge`))).body)
      assert.strictEqual(body.type, "https://example.com/problems/circuit-open")
      assert.strictEqual(body.title, "Circuit open")
    }).pipe(Effect.provide(Env))
  )

  it("retryAfterSeconds rounds up and is never 0 while open", () => {
    const error = (retryAfterMillis: number) =>
      new CircuitBreaker.BreakerOpenError({ breaker: "b", state: "Open", retryAfterMillis })
    assert.strictEqual(BreakerHttpServer.retryAfterSeconds(error(0)), 1)
    assert.strictEqual(BreakerHttpServer.retryAfterSeconds(error(1)), 1)
    assert.strictEqual(BreakerHttpServer.retryAfterSeconds(error(1000)), 1)
    assert.strictEqual(BreakerHttpServer.retryAfterSeconds(error(1001)), 2)
    assert.strictEqual(BreakerHttpServer.retryAfterSeconds(error(29_999)), 30)
  })
})
