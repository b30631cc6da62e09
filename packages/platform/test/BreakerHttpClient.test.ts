import { TestClock, assert, describe, it } from "@circuitry/testkit"
import {
  HttpClient,
  HttpClientRequest,
  HttpServerRequest,
  HttpServerResponse,
  clientErrorOf,
  clientLayer
} from "#test/http"
import * as Edition from "@circuitry/core/Edition"
import { BreakerRegistry, CircuitBreaker, Policy } from "@circuitry/breaker"
import { BreakerHttpClient } from "@circuitry/platform"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import { closedPort, serve } from "./utils.js"

/**
 * The upstream: /fail answers 500, /missing 404, /ok 200, /busy 503 (or 429 with ?status=429)
 * with the Retry-After given in ?after=, /hang never answers (and says so on `hung`).
 */
const upstream = (hung: Queue.Queue<string>) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const url = new URL(request.url, "http://upstream")
    switch (url.pathname) {
      case "/ok":
      case "/refund":
        return HttpServerResponse.text("ok")
      case "/missing":
        return HttpServerResponse.text("no such thing", { status: 404 })
      case "/busy": {
        const after = url.searchParams.get("after")
        return HttpServerResponse.text("come back later", {
          status: Number(url.searchParams.get("status") ?? "503"),
          headers: after === null ? {} : { "retry-after": after }
        })
      }
      case "/hang":
        yield* Queue.offer(hung, url.pathname)
        // Interruptible, so that the server can end it when the client aborts (a server runs its
        // handler uninterruptibly; on Effect 4 its scope waits for the handler when it closes).
        return yield* Effect.interruptible(Effect.never)
      default:
        return HttpServerResponse.text("boom", { status: 500 })
    }
  })

const setup = (options?: BreakerHttpClient.Options) =>
  Effect.gen(function* () {
    const hung = yield* Queue.unbounded<string>()
    const server = yield* serve(upstream(hung))
    const client = yield* BreakerHttpClient.make(options)
    const registry = yield* BreakerRegistry.BreakerRegistry
    const get = (path: string) => client.get(`${server.url}${path}`)
    return { server, client, registry, get, hung }
  })

const Env = Layer.mergeAll(
  clientLayer,
  BreakerRegistry.layer({ defaults: { policy: Policy.consecutiveFailures(3), openFor: "30 seconds" } })
)

const stateOf = (registry: BreakerRegistry.BreakerRegistry, name: string) =>
  Effect.flatMap(registry.get(name), (breaker) => breaker.snapshot)

describe("BreakerHttpClient", () => {
  it.scoped("opens after the threshold of 5xx and then stops sending; callers get the 500 as it was", () =>
    Effect.gen(function* () {
      const { get, registry, server } = yield* setup()
      for (let i = 0; i < 3; i++) {
        const response = yield* get("/fail")
        assert.strictEqual(response.status, 500)
        assert.strictEqual(yield* response.text, "boom")
      }
      assert.strictEqual(server.received.length, 3)
      const snapshot = yield* stateOf(registry, server.url)
      assert.strictEqual(snapshot.state._tag, "Open")

      for (let i = 0; i < 5; i++) {
        const error = yield* Effect.flip(get("/fail"))
        assert.strictEqual(error._tag, "BreakerOpenError")
        assert.instanceOf(error, CircuitBreaker.BreakerOpenError)
        if (error._tag === "BreakerOpenError") {
          assert.strictEqual(error.breaker, server.url)
          assert.strictEqual(error.retryAfterMillis, 30_000)
        }
      }
      // Rejected requests never reached the upstream.
      assert.deepStrictEqual(server.received, ["/fail", "/fail", "/fail"])
      // Other paths of the same origin share the circuit by default.
      assert.strictEqual((yield* Effect.flip(get("/ok")))._tag, "BreakerOpenError")
      assert.strictEqual(server.received.length, 3)

      // After the open time a probe goes through; its success closes the circuit.
      yield* TestClock.adjust("30 seconds")
      assert.strictEqual((yield* get("/ok")).status, 200)
      assert.strictEqual((yield* stateOf(registry, server.url)).state._tag, "Closed")
      assert.strictEqual(server.received.length, 4)
    }).pipe(Effect.provide(Env))
  )

  it.scoped("404s never open the circuit: they are successes", () =>
    Effect.gen(function* () {
      const { get, registry, server } = yield* setup()
      for (let i = 0; i < 10; i++) {
        const response = yield* get("/missing")
        assert.strictEqual(response.status, 404)
      }
      assert.strictEqual(server.received.length, 10)
      const snapshot = yield* stateOf(registry, server.url)
      assert.strictEqual(snapshot.state._tag, "Closed")
      assert.strictEqual(snapshot.counts.consecutiveFailures, 0)
      // A 404 between failures breaks the run of consecutive failures.
      yield* get("/fail")
      yield* get("/fail")
      yield* get("/missing")
      yield* get("/fail")
      yield* get("/fail")
      assert.strictEqual((yield* stateOf(registry, server.url)).state._tag, "Closed")
      yield* get("/fail")
      assert.strictEqual((yield* stateOf(registry, server.url)).state._tag, "Open")
    }).pipe(Effect.provide(Env))
  )

  it.scoped("429 counts as a failure; isFailureStatus can say otherwise", () =>
    Effect.gen(function* () {
      const { get, registry, server } = yield* setup()
      for (let i = 0; i < 3; i++) assert.strictEqual((yield* get("/busy?status=429")).status, 429)
      assert.strictEqual((yield* stateOf(registry, server.url)).state._tag, "Open")

      const lenient = yield* BreakerHttpClient.make({ isFailureStatus: (status) => status >= 500 })
      const other = yield* serve(Effect.succeed(HttpServerResponse.text("slow down", { status: 429 })))
      for (let i = 0; i < 5; i++) assert.strictEqual((yield* lenient.get(`${other.url}/x`)).status, 429)
      assert.strictEqual((yield* stateOf(registry, other.url)).state._tag, "Closed")
      assert.strictEqual(other.received.length, 5)
    }).pipe(Effect.provide(Env))
  )

  it.scoped("connection errors count, and the caller gets the client's RequestError", () =>
    Effect.gen(function* () {
      const { client, registry } = yield* setup()
      const port = yield* closedPort
      const url = `http://127.0.0.1:${port}/x`
      for (let i = 0; i < 3; i++) {
        const error = yield* Effect.flip(client.get(url))
        assert.strictEqual(clientErrorOf(error)?.reason, "Transport")
      }
      assert.strictEqual((yield* stateOf(registry, `http://127.0.0.1:${port}`)).state._tag, "Open")
      assert.strictEqual((yield* Effect.flip(client.get(url)))._tag, "BreakerOpenError")
    }).pipe(Effect.provide(Env))
  )

  it.scoped("a hanging upstream times out, counts, and is aborted; a caller's interruption never counts", () =>
    Effect.gen(function* () {
      const { get, registry, server, hung } = yield* setup({ timeout: "2 seconds" })
      for (let i = 0; i < 3; i++) {
        const fiber = yield* Edition.forkChild(get("/hang"))
        yield* Queue.take(hung) // the upstream has the request
        yield* TestClock.adjust("2 seconds")
        const error = yield* Effect.flip(Fiber.join(fiber))
        assert.strictEqual(clientErrorOf(error)?.reason, "Transport")
        assert.isTrue(Edition.isTimeoutError(clientErrorOf(error)?.cause))
      }
      assert.strictEqual((yield* stateOf(registry, server.url)).state._tag, "Open")
      assert.strictEqual((yield* Effect.flip(get("/hang")))._tag, "BreakerOpenError")
      assert.strictEqual(server.received.length, 3)

      // Interrupted by the caller, before the timeout: nothing is recorded.
      yield* TestClock.adjust("30 seconds")
      const fiber = yield* Edition.forkChild(get("/hang"))
      yield* Queue.take(hung)
      yield* Fiber.interrupt(fiber)
      const snapshot = yield* stateOf(registry, server.url)
      assert.strictEqual(snapshot.state._tag, "HalfOpen")
      assert.strictEqual(snapshot.probes, 0) // the probe's permit came back
      assert.strictEqual((yield* get("/ok")).status, 200)
      assert.strictEqual((yield* stateOf(registry, server.url)).state._tag, "Closed")
    }).pipe(Effect.provide(Env))
  )

  it.scoped("Retry-After in seconds on a 503 keeps the circuit open at least that long", () =>
    Effect.gen(function* () {
      const { get, registry, server } = yield* setup()
      for (let i = 0; i < 3; i++) {
        const response = yield* get("/busy?after=120")
        assert.strictEqual(response.status, 503)
        assert.strictEqual(response.headers["retry-after"], "120")
      }
      const snapshot = yield* stateOf(registry, server.url)
      assert.deepStrictEqual(snapshot.state, CircuitBreaker.State.Open({ until: 120_000 }))

      // Past openFor (30 s) it is still open, because the upstream asked for 120 s.
      yield* TestClock.adjust("31 seconds")
      const error = yield* Effect.flip(get("/ok"))
      assert.strictEqual(error._tag, "BreakerOpenError")
      if (error._tag === "BreakerOpenError") assert.strictEqual(error.retryAfterMillis, 89_000)
      assert.strictEqual(server.received.length, 3)

      yield* TestClock.adjust("89 seconds")
      assert.strictEqual((yield* get("/ok")).status, 200)
      assert.strictEqual(server.received.length, 4)
    }).pipe(Effect.provide(Env))
  )

  it.scoped("a failed half-open probe with Retry-After reopens for at least that long", () =>
    Effect.gen(function* () {
      const { get, registry, server } = yield* setup()
      for (let i = 0; i < 3; i++) yield* get("/fail")
      yield* TestClock.adjust("30 seconds")
      assert.strictEqual((yield* get("/busy?after=100")).status, 503) // the probe
      assert.deepStrictEqual(
        (yield* stateOf(registry, server.url)).state,
        CircuitBreaker.State.Open({ until: 30_000 + 100_000 })
      )
      assert.strictEqual(server.received.length, 4)
    }).pipe(Effect.provide(Env))
  )

  it.scoped("Retry-After as an HTTP date on a 429; a shorter one never shortens openFor", () =>
    Effect.gen(function* () {
      const { get, registry, server } = yield* setup()
      yield* TestClock.adjust("1 hour")
      const date = new Date(3_600_000 + 90_000).toUTCString() // the Clock's now + 90 s
      for (let i = 0; i < 3; i++) {
        assert.strictEqual((yield* get(`/busy?status=429&after=${encodeURIComponent(date)}`)).status, 429)
      }
      assert.deepStrictEqual(
        (yield* stateOf(registry, server.url)).state,
        CircuitBreaker.State.Open({ until: 3_600_000 + 90_000 })
      )

      const other = yield* serve(
        Effect.succeed(HttpServerResponse.text("busy", { status: 503, headers: { "retry-after": "5" } }))
      )
      const client = yield* BreakerHttpClient.make()
      for (let i = 0; i < 3; i++) yield* client.get(`${other.url}/x`)
      assert.deepStrictEqual(
        (yield* stateOf(registry, other.url)).state,
        CircuitBreaker.State.Open({ until: 3_600_000 + 30_000 })
      )
    }).pipe(Effect.provide(Env))
  )

  it.scoped("respectRetryAfter: false and maxRetryAfter", () =>
    Effect.gen(function* () {
      const { server, registry } = yield* setup()
      const ignoring = yield* BreakerHttpClient.make({ respectRetryAfter: false, key: () => "ignoring" })
      const capped = yield* BreakerHttpClient.make({ maxRetryAfter: "1 minute", key: () => "capped" })
      for (let i = 0; i < 3; i++) {
        yield* ignoring.get(`${server.url}/busy?after=600`)
        yield* capped.get(`${server.url}/busy?after=600`)
      }
      assert.deepStrictEqual((yield* stateOf(registry, "ignoring")).state, CircuitBreaker.State.Open({ until: 30_000 }))
      assert.deepStrictEqual((yield* stateOf(registry, "capped")).state, CircuitBreaker.State.Open({ until: 60_000 }))
    }).pipe(Effect.provide(Env))
  )

  it.scoped("per-route keys isolate routes of one upstream", () =>
    Effect.gen(function* () {
      const { server, registry } = yield* setup()
      const client = yield* BreakerHttpClient.make({
        key: (request) => `payment-gateway${new URL(request.url).pathname}`
      })
      for (let i = 0; i < 3; i++) assert.strictEqual((yield* client.get(`${server.url}/charge`)).status, 500)
      assert.strictEqual((yield* Effect.flip(client.get(`${server.url}/charge`)))._tag, "BreakerOpenError")
      for (let i = 0; i < 3; i++) assert.strictEqual((yield* client.get(`${server.url}/refund`)).status, 200)
      assert.deepStrictEqual(server.received, ["/charge", "/charge", "/charge", "/refund", "/refund", "/refund"])
      assert.strictEqual((yield* stateOf(registry, "payment-gateway/charge")).state._tag, "Open")
      assert.strictEqual((yield* stateOf(registry, "payment-gateway/refund")).state._tag, "Closed")
      assert.deepStrictEqual([...(yield* registry.names)].sort(), ["payment-gateway/charge", "payment-gateway/refund"])
    }).pipe(Effect.provide(Env))
  )

  it.scoped("a StatusCode ResponseError from a filter inside is judged by its status", () =>
    Effect.gen(function* () {
      const { server, registry } = yield* setup()
      const registryClient = yield* BreakerHttpClient.guard(
        HttpClient.filterStatusOk(yield* HttpClient.HttpClient),
        registry
      )
      for (let i = 0; i < 5; i++) {
        const error = yield* Effect.flip(registryClient.get(`${server.url}/missing`))
        assert.strictEqual(clientErrorOf(error)?.reason, "StatusCode")
      }
      assert.strictEqual((yield* stateOf(registry, server.url)).state._tag, "Closed")
      for (let i = 0; i < 3; i++) {
        const error = yield* Effect.flip(registryClient.get(`${server.url}/fail`))
        assert.strictEqual(clientErrorOf(error)?.reason, "StatusCode")
      }
      assert.strictEqual((yield* stateOf(registry, server.url)).state._tag, "Open")
      assert.strictEqual(server.received.length, 8)
    }).pipe(Effect.provide(Env))
  )

  it.scoped("a URL that does not parse goes to the client unguarded, which refuses it", () =>
    Effect.gen(function* () {
      const { client, registry } = yield* setup()
      const error = yield* Effect.flip(client.execute(HttpClientRequest.get("not a url")))
      assert.strictEqual(clientErrorOf(error)?.reason, "InvalidUrl")
      assert.deepStrictEqual(yield* registry.names, [])
    }).pipe(Effect.provide(Env))
  )

  it.effect("bad options are the platform's typed error (from make and guard), saying what is wrong", () =>
    Effect.gen(function* () {
      const cases: Array<[BreakerHttpClient.Options, string]> = [
        [{ timeout: "soon" as never }, 'BreakerHttpClient: timeout must be a finite duration > 0, got "soon"'],
        // a number shows as a number
        [{ maxRetryAfter: -5 }, "BreakerHttpClient: maxRetryAfter must be a finite duration > 0, got -5"],
        [{ maxRetryAfter: Infinity }, "BreakerHttpClient: maxRetryAfter must be a finite duration > 0, got Infinity"],
        [{ timeout: "-1 second" }, 'BreakerHttpClient: timeout must be a finite duration > 0, got "-1 second"'],
        [{ key: "host" as never }, 'BreakerHttpClient: key must be a function, got "host"'],
        [{ isFailureStatus: 500 as never }, "BreakerHttpClient: isFailureStatus must be a function, got 500"],
        [{ isFailureError: true as never }, "BreakerHttpClient: isFailureError must be a function, got true"],
        [{ respectRetryAfter: "yes" as never }, 'BreakerHttpClient: respectRetryAfter must be a boolean, got "yes"'],
        // the first broken rule is the one named
        [{ timeout: 0, key: null as never }, "BreakerHttpClient: key must be a function, got null"],
        [null as never, "BreakerHttpClient: options must be an object, got null"]
      ]
      const registry = yield* BreakerRegistry.BreakerRegistry
      const client = yield* HttpClient.HttpClient
      for (const [options, message] of cases) {
        for (const error of [
          yield* Effect.flip(BreakerHttpClient.make(options)),
          yield* Effect.flip(BreakerHttpClient.guard(client, registry, options))
        ]) {
          assert.instanceOf(error, BreakerHttpClient.InvalidPlatformOptions)
          assert.strictEqual(error._tag, "InvalidPlatformOptions")
          assert.strictEqual(error.message, message)
        }
      }
    }).pipe(Effect.provide(Env))
  )

  it("parseRetryAfter reads seconds and HTTP dates, and nothing else", () => {
    assert.strictEqual(BreakerHttpClient.parseRetryAfter("120", 1000), 121_000)
    assert.strictEqual(BreakerHttpClient.parseRetryAfter(" 0 ", 1000), 1000)
    assert.strictEqual(BreakerHttpClient.parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", 0), 1445412480000)
    assert.strictEqual(BreakerHttpClient.parseRetryAfter("-5", 0), undefined)
    assert.strictEqual(BreakerHttpClient.parseRetryAfter("1.5", 0), undefined)
    assert.strictEqual(BreakerHttpClient.parseRetryAfter("soon", 0), undefined)
  })
})
