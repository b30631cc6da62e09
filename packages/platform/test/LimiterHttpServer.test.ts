import { Result, assert, describe, it, result } from "@circuitry/testkit"
import { HttpClient, HttpServerRequest, HttpServerResponse, clientLayer, route, type App } from "#test/http"
import * as Edition from "@circuitry/core/Edition"
import { BreakerRegistry, Policy } from "@circuitry/breaker"
import { Limit, Limiter, LimiterRegistry } from "@circuitry/limiter"
import { BreakerHttpClient, LimiterHttpClient, LimiterHttpServer } from "@circuitry/platform"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { disconnectAfter, stopsForAGoneClient, worksOnForAGoneClient } from "./disconnect.js"
import { serve } from "./utils.js"

/** Routes whose handler counts its runs and holds each request until `gate` opens. */
const heldApp = (gate: Deferred.Deferred<void>, hits: { count: number }) =>
  route(
    "GET",
    "/work",
    Effect.suspend(() => {
      hits.count++
      return Deferred.await(gate)
    }).pipe(Effect.as(HttpServerResponse.text("done")))
  )

/** Waits up to 5 s for `read` to give `n`, then asserts it. */
const until = (read: Effect.Effect<number>, n: number) =>
  Effect.gen(function* () {
    let value = yield* read
    for (let i = 0; i < 500 && value !== n; i++) {
      yield* Effect.sleep("10 millis")
      value = yield* read
    }
    assert.strictEqual(value, n)
  })

const untilHits = (hits: { count: number }, n: number) =>
  until(
    Effect.sync(() => hits.count),
    n
  )

describe("LimiterHttpServer", () => {
  it.live("over real HTTP: past the limit, 503 problem+json with Retry-After, and the handler is not reached", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({ name: "api", limit: Limit.fixed(2) })
      const gate = yield* Deferred.make<void>()
      const hits = { count: 0 }
      const server = yield* serve(heldApp(gate, hits), LimiterHttpServer.middleware(limiter))
      const client = yield* HttpClient.HttpClient
      const held = yield* Effect.forEach([1, 2], () => Edition.forkChild(client.get(`${server.url}/work`)))
      yield* untilHits(hits, 2)
      const refused = yield* client.get(`${server.url}/work`)
      assert.strictEqual(refused.status, 503)
      assert.strictEqual(refused.headers["content-type"], "application/problem+json")
      assert.strictEqual(refused.headers["retry-after"], "1")
      assert.strictEqual(refused.headers["cache-control"], "no-store")
      assert.deepStrictEqual(yield* refused.json, {
        type: "about:blank",
        title: "Service Unavailable",
        status: 503,
        detail: `Limiter "api" is at its limit of 2 concurrent requests; retry after 1 s.`,
        limiter: "api",
        limit: 2,
        inFlight: 2,
        partition: null
      })
      assert.strictEqual(hits.count, 2) // the refused request never reached the handler
      yield* Deferred.succeed(gate, undefined)
      for (const f of held) assert.strictEqual((yield* Fiber.join(f)).status, 200)
      const after = yield* client.get(`${server.url}/work`)
      assert.strictEqual(after.status, 200)
      assert.strictEqual(hits.count, 3)
    }).pipe(Effect.scoped, Effect.provide(clientLayer))
  )

  it.live("429 on request, partitioned by a header: a partition keeps its share while another floods", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({ name: "tenants", limit: Limit.fixed(4), partitions: { gold: 0.5 } })
      const gate = yield* Deferred.make<void>()
      const hits = { count: 0 }
      const server = yield* serve(
        heldApp(gate, hits),
        LimiterHttpServer.middleware(limiter, {
          status: 429,
          partition: (request) => (request.headers["x-tier"] === "gold" ? "gold" : undefined)
        })
      )
      const client = yield* HttpClient.HttpClient
      const get = (tier?: string) =>
        client.get(`${server.url}/work`, tier === undefined ? {} : { headers: { "x-tier": tier } })
      const gold = yield* Edition.forkChild(get("gold"))
      yield* untilHits(hits, 1)
      // Free traffic may take only what gold's guarantee (2 of 4) leaves: 2 slots.
      const free = yield* Effect.forEach([1, 2], () => Edition.forkChild(get()))
      yield* untilHits(hits, 3)
      const refused = yield* get()
      assert.strictEqual(refused.status, 429)
      const body = (yield* refused.json) as unknown as { title: string; partition: string | null }
      assert.deepStrictEqual([body.title, body.partition], ["Too Many Requests", null])
      const gold2 = yield* Edition.forkChild(get("gold"))
      yield* untilHits(hits, 4)
      yield* Deferred.succeed(gate, undefined)
      for (const f of [gold, gold2, ...free]) assert.strictEqual((yield* Fiber.join(f)).status, 200)
    }).pipe(Effect.scoped, Effect.provide(clientLayer))
  )

  // @effect/platform runs an app's handler uninterruptibly (HttpRouter reopens its routes'
  // handlers, but not what runs around the router): without the middleware reopening it, a client
  // that had gone kept its slot, or its place in the queue, until the handler ended.
  it.live("a client that disconnects stops its handler, and its slot is free at once", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({ name: "gone", limit: Limit.fixed(1) })
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<number>()
      const hold = Deferred.succeed(started, undefined).pipe(
        Effect.andThen(Effect.never),
        Effect.onInterrupt(() => Effect.flatMap(limiter.inFlight, (n) => Deferred.succeed(interrupted, n)))
      )
      // A plain app, not a router: its handler is what @effect/platform runs uninterruptibly.
      const app = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        request.url === "/hold" ? hold : Effect.succeed(HttpServerResponse.text("done"))
      ).pipe(LimiterHttpServer.middleware(limiter))
      const server = yield* serve(app)
      yield* disconnectAfter(server.port, "/hold", Deferred.await(started))
      // The handler's finalizer runs while its call still holds the slot.
      assert.strictEqual(yield* Deferred.await(interrupted).pipe(Effect.timeout("5 seconds")), 1)
      // Freed when the call's own finalizer ends, after the handler's: on Effect 4 the test's fiber
      // can run in between (it wakes as soon as `interrupted` is set).
      yield* until(limiter.inFlight, 0)
      const client = yield* HttpClient.HttpClient
      assert.strictEqual((yield* client.get(`${server.url}/work`)).status, 200) // the freed slot serves the next
    }).pipe(Effect.scoped, Effect.provide(clientLayer))
  )

  it.live("a client that disconnects stops its handler at its next turn of the loop, and it can be kept on", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({ name: "sliced", limit: Limit.fixed(4) })
      const port = (app: App<never, HttpServerRequest.HttpServerRequest>) => Effect.map(serve(app), (s) => s.port)
      yield* stopsForAGoneClient((app) => port(app.pipe(LimiterHttpServer.middleware(limiter))))
      yield* worksOnForAGoneClient((app) =>
        port(app.pipe(LimiterHttpServer.middleware(limiter, { interruptOnDisconnect: false })))
      )
    }).pipe(Effect.scoped)
  )

  it.live("a client that disconnects while queued leaves the queue and never reaches its handler", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({
        name: "queued",
        limit: Limit.fixed(1),
        queue: { size: 4, timeout: "1 minute" }
      })
      const gate = yield* Deferred.make<void>()
      const hits = { count: 0 }
      // Around the router, as docs/platform.md puts it: the wait in the queue is outside the routes.
      const server = yield* serve(heldApp(gate, hits), LimiterHttpServer.middleware(limiter))
      // After a failed assertion too, so that the server's scope can close (its finalizers run after).
      yield* Effect.addFinalizer(() => Deferred.succeed(gate, undefined))
      const client = yield* HttpClient.HttpClient
      const first = yield* Edition.forkChild(client.get(`${server.url}/work`))
      yield* untilHits(hits, 1)
      const queued = Effect.map(limiter.snapshot, (s) => s.queued)
      yield* disconnectAfter(server.port, "/work", until(queued, 1))
      yield* until(queued, 0)
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual((yield* Fiber.join(first)).status, 200)
      assert.strictEqual(hits.count, 1)
      assert.strictEqual(yield* limiter.inFlight, 0)
    }).pipe(Effect.scoped, Effect.provide(clientLayer))
  )
})

describe("LimiterHttpClient", () => {
  it.live("one limiter per origin; a request over its origin's limit fails and is never sent", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const hitsA = { count: 0 }
      const hitsB = { count: 0 }
      const a = yield* serve(heldApp(gate, hitsA))
      const b = yield* serve(heldApp(gate, hitsB))
      const client = yield* LimiterHttpClient.make()
      const first = yield* Edition.forkChild(client.get(`${a.url}/work`))
      yield* untilHits(hitsA, 1)
      const refused = yield* result(client.get(`${a.url}/work`))
      assert.isTrue(
        Result.isFailure(refused) && Option.getOrThrow(Result.getFailure(refused))._tag === "LimiterRejectedError"
      )
      assert.strictEqual(hitsA.count, 1)
      const other = yield* Edition.forkChild(client.get(`${b.url}/work`)) // another origin, another limiter
      yield* untilHits(hitsB, 1)
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual((yield* Fiber.join(first)).status, 200)
      assert.strictEqual((yield* Fiber.join(other)).status, 200)
      const registry = yield* LimiterRegistry.LimiterRegistry
      assert.deepStrictEqual([...(yield* registry.names)].sort(), [a.url, b.url].sort())
    }).pipe(
      Effect.scoped,
      Effect.provide(Layer.merge(clientLayer, LimiterRegistry.layer({ defaults: { limit: Limit.fixed(1) } })))
    )
  )

  it.live("over a breaker: an open circuit below is a drop, and the limit comes down", () =>
    Effect.gen(function* () {
      const server = yield* serve(route("GET", "/down", Effect.succeed(HttpServerResponse.text("no", { status: 500 }))))
      const breakers = yield* BreakerRegistry.BreakerRegistry
      const limiters = yield* LimiterRegistry.LimiterRegistry
      // The limiter on top, the breaker below it, then the network.
      const underBreaker = yield* BreakerHttpClient.guard(yield* HttpClient.HttpClient, breakers)
      const guarded = LimiterHttpClient.guard(underBreaker, limiters)
      for (let i = 0; i < 4; i++) yield* result(guarded.get(`${server.url}/down`))
      const limiter = yield* limiters.get(server.url)
      // Two 500s open the circuit (answers: no change); two BreakerOpenErrors halve the limit twice.
      assert.strictEqual(yield* limiter.limit, 2)
    }).pipe(
      Effect.scoped,
      Effect.provide(
        Layer.mergeAll(
          clientLayer,
          BreakerRegistry.layer({ defaults: { policy: Policy.consecutiveFailures(2), openFor: "1 minute" } }),
          // A `timeout` (and no rttTolerance): only failures are drops, not the latency of a busy machine.
          LimiterRegistry.layer({
            defaults: { limit: Limit.aimd({ initial: 8, min: 1, max: 8, backoff: 0.5, timeout: "1 minute" }) }
          })
        )
      )
    )
  )
})
