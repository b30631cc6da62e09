import { BreakerRegistry, Policy } from "@circuitry/breaker"
import { Limit, Limiter, LimiterRegistry } from "@circuitry/limiter"
import { BreakerHttpClient, LimiterHttpClient, LimiterHttpServer } from "@circuitry/platform"
import { assert, describe, it } from "@effect/vitest"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { serve } from "./utils.js"

/** An app whose handler counts its runs and holds each request until `gate` opens. */
const heldApp = (gate: Deferred.Deferred<void>, hits: { count: number }) =>
  HttpRouter.empty.pipe(
    HttpRouter.get(
      "/work",
      Effect.suspend(() => {
        hits.count++
        return Deferred.await(gate)
      }).pipe(Effect.as(HttpServerResponse.text("done")))
    )
  )

const untilHits = (hits: { count: number }, n: number) =>
  Effect.gen(function* () {
    for (let i = 0; i < 500 && hits.count < n; i++) yield* Effect.sleep("10 millis")
    assert.strictEqual(hits.count, n)
  })

describe("LimiterHttpServer", () => {
  it.live("over real HTTP: past the limit, 503 problem+json with Retry-After, and the handler is not reached", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({ name: "api", limit: Limit.fixed(2) })
      const gate = yield* Deferred.make<void>()
      const hits = { count: 0 }
      const server = yield* serve(heldApp(gate, hits).pipe(HttpRouter.use(LimiterHttpServer.middleware(limiter))))
      const client = yield* HttpClient.HttpClient
      const held = yield* Effect.forEach([1, 2], () => Effect.fork(client.get(`${server.url}/work`)))
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
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layer))
  )

  it.live("429 on request, partitioned by a header: a partition keeps its share while another floods", () =>
    Effect.gen(function* () {
      const limiter = yield* Limiter.make({ name: "tenants", limit: Limit.fixed(4), partitions: { gold: 0.5 } })
      const gate = yield* Deferred.make<void>()
      const hits = { count: 0 }
      const app = heldApp(gate, hits).pipe(
        HttpRouter.use(
          LimiterHttpServer.middleware(limiter, {
            status: 429,
            partition: (request) => (request.headers["x-tier"] === "gold" ? "gold" : undefined)
          })
        )
      )
      const server = yield* serve(app)
      const client = yield* HttpClient.HttpClient
      const get = (tier?: string) =>
        client.get(`${server.url}/work`, tier === undefined ? {} : { headers: { "x-tier": tier } })
      const gold = yield* Effect.fork(get("gold"))
      yield* untilHits(hits, 1)
      // Free traffic may take only what gold's guarantee (2 of 4) leaves: 2 slots.
      const free = yield* Effect.forEach([1, 2], () => Effect.fork(get()))
      yield* untilHits(hits, 3)
      const refused = yield* get()
      assert.strictEqual(refused.status, 429)
      const body = (yield* refused.json) as { title: string; partition: string | null }
      assert.deepStrictEqual([body.title, body.partition], ["Too Many Requests", null])
      const gold2 = yield* Effect.fork(get("gold"))
      yield* untilHits(hits, 4)
      yield* Deferred.succeed(gate, undefined)
      for (const f of [gold, gold2, ...free]) assert.strictEqual((yield* Fiber.join(f)).status, 200)
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layer))
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
      const first = yield* Effect.fork(client.get(`${a.url}/work`))
      yield* untilHits(hitsA, 1)
      const refused = yield* Effect.either(client.get(`${a.url}/work`))
      assert.isTrue(Either.isLeft(refused) && refused.left._tag === "LimiterRejectedError")
      assert.strictEqual(hitsA.count, 1)
      const other = yield* Effect.fork(client.get(`${b.url}/work`)) // another origin, another limiter
      yield* untilHits(hitsB, 1)
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual((yield* Fiber.join(first)).status, 200)
      assert.strictEqual((yield* Fiber.join(other)).status, 200)
      const registry = yield* LimiterRegistry.LimiterRegistry
      assert.deepStrictEqual([...(yield* registry.names)].sort(), [a.url, b.url].sort())
    }).pipe(
      Effect.scoped,
      Effect.provide(Layer.merge(NodeHttpClient.layer, LimiterRegistry.layer({ defaults: { limit: Limit.fixed(1) } })))
    )
  )

  it.live("over a breaker: an open circuit below is a drop, and the limit comes down", () =>
    Effect.gen(function* () {
      const server = yield* serve(
        HttpRouter.empty.pipe(HttpRouter.get("/down", HttpServerResponse.text("no", { status: 500 })))
      )
      const breakers = yield* BreakerRegistry.BreakerRegistry
      const limiters = yield* LimiterRegistry.LimiterRegistry
      // The limiter on top, the breaker below it, then the network.
      const underBreaker = yield* BreakerHttpClient.guard(yield* HttpClient.HttpClient, breakers)
      const guarded = LimiterHttpClient.guard(underBreaker, limiters)
      for (let i = 0; i < 4; i++) yield* Effect.either(guarded.get(`${server.url}/down`))
      const limiter = yield* limiters.get(server.url)
      // Two 500s open the circuit (answers: no change); two BreakerOpenErrors halve the limit twice.
      assert.strictEqual(yield* limiter.limit, 2)
    }).pipe(
      Effect.scoped,
      Effect.provide(
        Layer.mergeAll(
          NodeHttpClient.layer,
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
