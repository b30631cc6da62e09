import { TestClock, assert, describe, it, toPull } from "@circuitry/testkit"
import { HttpClient, HttpServerResponse, clientLayer, type App, type HttpClientResponse } from "#test/http"
import { BreakerRegistry, Policy } from "@circuitry/breaker"
import { HealthRoute } from "@circuitry/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { chromium, consoleLines, screenshot } from "./chromium.js"
import { serve } from "./utils.js"

const Env = Layer.mergeAll(
  clientLayer,
  BreakerRegistry.layer({ defaults: { policy: Policy.consecutiveFailures(2), openFor: "30 seconds" } })
)

interface Event {
  readonly event: string
  readonly data: string
}

/** Reads a text/event-stream response one event at a time (for the life of the scope). */
const eventReader = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.gen(function* () {
    const pull = yield* toPull(Stream.decodeText(response.stream))
    let buffer = ""
    const next: Effect.Effect<Event> = Effect.gen(function* () {
      while (!buffer.includes("\n\n")) {
        const chunk = yield* Effect.orDie(pull)
        buffer += chunk.join("")
      }
      const end = buffer.indexOf("\n\n")
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const lines = block.split("\n")
      return {
        event: lines.find((l) => l.startsWith("event: "))!.slice(7),
        data: lines
          .filter((l) => l.startsWith("data: "))
          .map((l) => l.slice(6))
          .join("\n")
      }
    })
    return next
  })

const open = (url: string) =>
  Effect.gen(function* () {
    const response = yield* (yield* HttpClient.HttpClient).get(url)
    assert.strictEqual(response.status, 200)
    assert.strictEqual(response.headers["content-type"], "text/event-stream")
    assert.strictEqual(response.headers["cache-control"], "no-store")
    return yield* eventReader(response)
  })

/**
 * Chromium's virtual time waits for the network to be idle, which an open stream never is: this
 * ends each event stream after its first chunk (the first event), so the page gets it, and then
 * reconnects as EventSource does.
 */
const firstEventOnly = <E, R>(app: App<E, R>): App<E, R> =>
  Effect.map(app, (response) =>
    response.body._tag === "Stream"
      ? HttpServerResponse.stream(Stream.take(response.body.stream, 1), {
          contentType: response.body.contentType,
          headers: response.headers
        })
      : response
  )

describe("HealthRoute live", () => {
  it.scoped("the event stream sends a snapshot at once, each transition as it happens, and a snapshot per tick", () =>
    Effect.gen(function* () {
      const registry = yield* BreakerRegistry.BreakerRegistry
      const payments = yield* registry.get("payments")
      const server = yield* serve(HealthRoute.router({ refreshSeconds: 5 }))
      const next = yield* open(`${server.url}/health/breakers/events`)

      const first = yield* next
      assert.strictEqual(first.event, "health")
      const health = JSON.parse(first.data) as HealthRoute.Health
      assert.deepStrictEqual(
        health.breakers.map((b) => [b.name, b.state]),
        [["payments", "Closed"]]
      )

      yield* TestClock.adjust("1 second")
      for (let i = 0; i < 2; i++) yield* Effect.ignore(payments.execute(Effect.fail("down")))
      const trip = yield* next
      assert.deepStrictEqual(trip, {
        event: "transition",
        data: JSON.stringify({ breaker: "payments", from: "Closed", to: "Open", at: "1970-01-01T00:00:01.000Z" })
      })

      // A breaker made after the stream started is followed from the next tick.
      const search = yield* registry.get("search")
      yield* TestClock.adjust("4 seconds")
      const tick = yield* next
      assert.strictEqual(tick.event, "health")
      const later = JSON.parse(tick.data) as HealthRoute.Health
      assert.deepStrictEqual(
        [later.at, later.breakers.map((b) => [b.name, b.state, b.openUntil])],
        [
          "1970-01-01T00:00:05.000Z",
          [
            ["payments", "Open", "1970-01-01T00:00:31.000Z"],
            ["search", "Closed", null]
          ]
        ]
      )
      yield* search.isolate
      assert.deepStrictEqual(JSON.parse((yield* next).data), {
        breaker: "search",
        from: "Closed",
        to: "Isolated",
        at: "1970-01-01T00:00:05.000Z"
      })
    }).pipe(Effect.provide(Env))
  )

  it.scoped("the view's stream sends the re-rendered tables on connect and on each transition", () =>
    Effect.gen(function* () {
      const registry = yield* BreakerRegistry.BreakerRegistry
      const payments = yield* registry.get("payments")
      const server = yield* serve(HealthRoute.router())
      const next = yield* open(`${server.url}/health/breakers/view/events`)
      const first = yield* next
      assert.strictEqual(first.event, "view")
      assert.match(first.data, /<td class="name">payments<\/td>\n {2}<td><span class="state"[^>]*>Closed</)
      assert.notInclude(first.data, "<html")
      for (let i = 0; i < 2; i++) yield* Effect.ignore(payments.execute(Effect.fail("down")))
      const after = yield* next
      assert.match(after.data, /<td class="name">payments<\/td>\n {2}<td><span class="state"[^>]*>Open</)
    }).pipe(Effect.provide(Env))
  )

  it.scoped(
    "in Chromium the page runs its script without errors, goes live from the stream, and is screenshotted",
    () =>
      Effect.gen(function* () {
        const registry = yield* BreakerRegistry.BreakerRegistry
        const payments = yield* registry.get("payments")
        yield* Effect.flatMap(registry.get("search"), (b) => b.execute(Effect.void))
        const routes = yield* HealthRoute.make({ history: { samples: 10, every: "1 second" } })
        yield* TestClock.adjust("1 second")
        for (let i = 0; i < 2; i++) yield* Effect.ignore(payments.execute(Effect.fail("down")))
        for (let i = 0; i < 2; i++) yield* TestClock.adjust("1 second")
        const server = yield* serve(routes, firstEventOnly)
        const url = `${server.url}/health/breakers/view`

        const html = yield* (yield* (yield* HttpClient.HttpClient).get(url)).text
        assert.include(html, `<noscript><meta http-equiv="refresh" content="5"></noscript>`)
        assert.include(html, `data-events="view/events"`)

        // Virtual time lets the page's script run and its stream deliver before the DOM is dumped.
        const { stderr, stdout: dom } = yield* chromium(["--virtual-time-budget=5000", "--dump-dom", url])
        assert.deepStrictEqual(consoleLines(stderr), [])
        assert.match(dom, /<html lang="en" data-script="ran" data-live="[a-z]+" data-updates="[1-9]\d*">/)
        const rows = [...dom.matchAll(/<td class="name">([^<]*)<\/td>\s*<td><span class="state"[^>]*>([^<]*)</g)].map(
          (m) => [m[1], m[2]]
        )
        assert.deepStrictEqual(rows, [
          ["payments", "Open"],
          ["search", "Closed"]
        ])
        assert.include(dom, `<svg class="spark"`)
        assert.include(dom, `<span class="transition" title="1970-01-01T00:00:01.000Z">00:00:01 Closed→Open</span>`)
        assert.include(dom, "No <code>BreakerStore</code> in this route's context")

        yield* screenshot(url, "health-live.png", { width: 1200, height: 500 }, ["--virtual-time-budget=5000"])
      }).pipe(Effect.provide(Env)),
    60_000
  )
})
