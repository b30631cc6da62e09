import { assert, describe, it, result, yieldNow } from "@circuitry/testkit"
import { HttpClient, clientLayer } from "#test/http"
import * as Edition from "@circuitry/core/Edition"
import { BreakerRegistry } from "@circuitry/breaker"
import { Limit, LimiterRegistry } from "@circuitry/limiter"
import { HealthRoute } from "@circuitry/platform"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { serve } from "./utils.js"

const Env = Layer.mergeAll(
  clientLayer,
  BreakerRegistry.layer(),
  LimiterRegistry.layer({
    defaults: { limit: Limit.fixed(2) },
    overrides: { api: { limit: Limit.fixed(3), partitions: { gold: 0.5 } } }
  })
)

describe("HealthRoute with a LimiterRegistry", () => {
  it.scoped("JSON and HTML show each limiter's limit, in flight, queued, rejections and partitions", () =>
    Effect.gen(function* () {
      const limiters = yield* LimiterRegistry.LimiterRegistry
      const search = yield* limiters.get("search")
      const api = yield* limiters.get("api")
      const gate = yield* Deferred.make<void>()
      const held = yield* Effect.forEach([1, 2], () => Edition.forkChild(search.execute(Deferred.await(gate))))
      const gold = yield* Edition.forkChild(api.execute(Deferred.await(gate), { partition: "gold" }))
      for (let i = 0; i < 100 && (yield* search.inFlight) + (yield* api.inFlight) < 3; i++) yield* yieldNow
      yield* result(search.execute(Effect.void)) // rejected
      const server = yield* serve(HealthRoute.router())
      const client = yield* HttpClient.HttpClient
      const body = (yield* (yield* client.get(`${server.url}/health/breakers`)).json) as unknown as HealthRoute.Health
      assert.deepStrictEqual(body.breakers, [])
      assert.deepStrictEqual(body.limiters, [
        {
          name: "api",
          limit: 3,
          inFlight: 1,
          queued: 0,
          rejected: 0,
          partitions: [{ name: "gold", share: 0.5, guaranteed: 2, inFlight: 1 }]
        },
        { name: "search", limit: 2, inFlight: 2, queued: 0, rejected: 1, partitions: [] }
      ])
      const html = yield* (yield* client.get(`${server.url}/health/breakers/view`)).text
      assert.include(html, "<h2>Limiters</h2>")
      assert.include(
        html,
        `<tr class="full">
  <td class="name">search</td>
  <td class="num">2</td>
  <td class="num">2</td>
  <td class="num">0</td>
  <td class="num">1</td>`
      )
      assert.include(html, "gold 1/2 (50%)")
      yield* Deferred.succeed(gate, undefined)
      for (const f of [...held, gold]) yield* Fiber.join(f)
    }).pipe(Effect.provide(Env))
  )
})
