import { TestClock, assert, describe, it } from "@circuitry/testkit"
import { HttpClient, HttpServerResponse, clientLayer, route, routes } from "#test/http"
import { BreakerRegistry, Policy } from "@circuitry/breaker"
import { HealthRoute } from "@circuitry/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { chromium, screenshot } from "./chromium.js"
import { serve } from "./utils.js"

const Env = Layer.mergeAll(
  clientLayer,
  BreakerRegistry.layer({ defaults: { policy: Policy.consecutiveFailures(3), openFor: "30 seconds" } })
)

const hostile = `<script>alert("x")</script>`

/** payments: open at 0 until 30 s; search: closed, 2 failures in a row; inventory: isolated. */
const populate = Effect.gen(function* () {
  const registry = yield* BreakerRegistry.BreakerRegistry
  const payments = yield* registry.get("payments")
  for (let i = 0; i < 3; i++) yield* Effect.ignore(payments.execute(Effect.fail("down")))
  const search = yield* registry.get("search")
  yield* search.execute(Effect.void)
  for (let i = 0; i < 2; i++) yield* Effect.ignore(search.execute(Effect.fail("slow")))
  yield* Effect.flatMap(registry.get("inventory"), (b) => b.isolate)
  yield* registry.get(hostile)
  yield* TestClock.adjust("5 seconds")
  return registry
})

const zero = { calls: 0, failures: 0, slowCalls: 0, consecutiveFailures: 0 }

const app = routes<never, BreakerRegistry.BreakerRegistry>(
  route("GET", "/", Effect.succeed(HttpServerResponse.text("app"))),
  HealthRoute.router({ refreshSeconds: 3 })
)

describe("HealthRoute", () => {
  it.scoped("the JSON lists every breaker with its state, counts and open-until; reading it is not use", () =>
    Effect.gen(function* () {
      const registry = yield* populate
      const server = yield* serve(app)
      const before = yield* registry.names
      const response = yield* (yield* HttpClient.HttpClient).get(`${server.url}/health/breakers`)
      assert.strictEqual(response.status, 200)
      assert.strictEqual(response.headers["content-type"], "application/json")
      assert.strictEqual(response.headers["cache-control"], "no-store")
      assert.deepStrictEqual(yield* response.json, {
        at: "1970-01-01T00:00:05.000Z",
        open: 2,
        breakers: [
          { name: hostile, state: "Closed", openUntil: null, counts: zero, probes: 0, store: "local" },
          { name: "inventory", state: "Isolated", openUntil: null, counts: zero, probes: 0, store: "local" },
          {
            name: "payments",
            state: "Open",
            openUntil: "1970-01-01T00:00:30.000Z",
            counts: zero,
            probes: 0,
            store: "local"
          },
          {
            name: "search",
            state: "Closed",
            openUntil: null,
            counts: { calls: 3, failures: 2, slowCalls: 0, consecutiveFailures: 2 },
            probes: 0,
            store: "local"
          }
        ],
        storeInContext: false
      })
      // Listing moved nothing in the registry's least-recently-used order.
      assert.deepStrictEqual(yield* registry.names, before)

      // Past its open time the circuit reads HalfOpen, lazily.
      yield* TestClock.adjust("25 seconds")
      const later = (yield* (yield* (yield* HttpClient.HttpClient).get(`${server.url}/health/breakers`))
        .json) as unknown as {
        breakers: Array<{ name: string; state: string; openUntil: string | null }>
      }
      const payments = later.breakers.find((b) => b.name === "payments")
      assert.deepStrictEqual([payments?.state, payments?.openUntil], ["HalfOpen", null])
    }).pipe(Effect.provide(Env))
  )

  it.scoped("an empty registry is an empty list", () =>
    Effect.gen(function* () {
      const server = yield* serve(app)
      const body = yield* (yield* (yield* HttpClient.HttpClient).get(`${server.url}/health/breakers`)).json
      assert.deepStrictEqual(body, { at: "1970-01-01T00:00:00.000Z", open: 0, breakers: [], storeInContext: false })
      const html = yield* (yield* (yield* HttpClient.HttpClient).get(`${server.url}/health/breakers/view`)).text
      assert.include(html, "No breakers yet.")
    }).pipe(Effect.provide(Env))
  )

  it.scoped(
    "the HTML view refreshes itself, escapes names, renders in headless Chromium, and is screenshotted",
    () =>
      Effect.gen(function* () {
        yield* populate
        const server = yield* serve(app)
        const url = `${server.url}/health/breakers/view`
        const response = yield* (yield* HttpClient.HttpClient).get(url)
        assert.strictEqual(response.status, 200)
        assert.strictEqual(response.headers["content-type"], "text/html; charset=utf-8")
        const html = yield* response.text
        assert.include(html, `<meta http-equiv="refresh" content="3">`)
        assert.include(html, "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;")
        assert.notInclude(html, hostile)

        // The DOM as Chromium built it: one row per breaker, in name order, with its state.
        const dom = (yield* chromium(["--dump-dom", url])).stdout
        const rows = [...dom.matchAll(/<td class="name">([^<]*)<\/td>\s*<td><span class="state"[^>]*>([^<]*)</g)].map(
          (m) => [m[1], m[2]]
        )
        assert.deepStrictEqual(rows, [
          ['&lt;script&gt;alert("x")&lt;/script&gt;', "Closed"],
          ["inventory", "Isolated"],
          ["payments", "Open"],
          ["search", "Closed"]
        ])
        assert.notInclude(dom, "<script>alert")
        assert.include(dom, `title="1970-01-01T00:00:30.000Z">00:00:30 UTC</time> (in 25 s)`)

        yield* screenshot(url, "health.png", { width: 1000, height: 700 })
      }).pipe(Effect.provide(Env)),
    60_000
  )
})
