/**
 * The Prometheus route over real HTTP on loopback, read back with a strict parser of the text
 * exposition format 0.0.4 (test/prometheus.ts): what a scraper would reject fails here.
 */
import { TestClock, assert, describe, histogram, it, summary, withAttributes } from "@circuitry/testkit"
import { HttpClient, HttpServerResponse, clientLayer, route, routes } from "#test/http"
import * as Edition from "@circuitry/core/Edition"
import { BreakerRegistry, CircuitBreaker, Policy } from "@circuitry/breaker"
import { Limit, Limiter } from "@circuitry/limiter"
import { MetricsRoute } from "@circuitry/platform"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import { type Exposition, parse, value } from "./prometheus.js"
import { serve } from "./utils.js"

const app = routes(route("GET", "/", Effect.succeed(HttpServerResponse.text("app"))), MetricsRoute.router())

/** GET the route, check the response, parse the body strictly. */
const scrape = (url: string) =>
  Effect.gen(function* () {
    const response = yield* (yield* HttpClient.HttpClient).get(`${url}/metrics`)
    assert.strictEqual(response.status, 200)
    assert.strictEqual(response.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8")
    assert.strictEqual(response.headers["cache-control"], "no-store")
    const body = yield* response.text
    return { body, parsed: parse(body) }
  })

/** Asserts that `body` has these lines one after the other. */
const includesLines = (body: string, expected: ReadonlyArray<string>) => assert.include(body, expected.join("\n"))

const lines = (body: string, prefix: string) => body.split("\n").filter((l) => l.startsWith(prefix))

describe("MetricsRoute", () => {
  it.scoped("serves circuitry's metrics over HTTP: the breaker's counters, its state and its histogram", () =>
    Effect.gen(function* () {
      const server = yield* serve(app)
      const breaker = yield* CircuitBreaker.make({ name: "m-payments", policy: Policy.consecutiveFailures(2) })
      yield* breaker.execute(Effect.sleep("20 millis")).pipe(
        Edition.forkChild,
        Effect.tap(() => TestClock.adjust("20 millis"))
      )
      yield* Effect.ignore(breaker.execute(Effect.fail("down")))
      yield* Effect.ignore(breaker.execute(Effect.fail("down"))) // opens
      yield* Effect.ignore(breaker.execute(Effect.void)) // rejected

      const { body, parsed } = yield* scrape(server.url)
      assert.deepStrictEqual(lines(body, 'circuitry_breaker_calls_total{breaker="m-payments"'), [
        `circuitry_breaker_calls_total{breaker="m-payments",outcome="failure"} 2`,
        `circuitry_breaker_calls_total{breaker="m-payments",outcome="rejected"} 1`,
        `circuitry_breaker_calls_total{breaker="m-payments",outcome="success"} 1`
      ])
      assert.strictEqual(parsed.families.get("circuitry_breaker_calls_total")?.type, "counter")
      assert.strictEqual(
        parsed.families.get("circuitry_breaker_calls_total")?.help,
        "Calls through a circuit breaker, by outcome: success, failure, rejected, repair"
      )
      // 1 is Open (0 Closed, 1 Open, 2 HalfOpen, 3 Isolated).
      assert.include(body, `\n# TYPE circuitry_breaker_state gauge\n`)
      assert.strictEqual(value(parsed, "circuitry_breaker_state", { breaker: "m-payments" }), 1)
      assert.strictEqual(
        value(parsed, "circuitry_breaker_transitions_total", { breaker: "m-payments", from: "Closed", to: "Open" }),
        1
      )
      // Three calls ran: two failures at once (0 s), a success after 20 ms (bucket 0.025 s).
      const histogram = lines(body, "circuitry_breaker_call_duration_seconds")
      assert.strictEqual(parsed.families.get("circuitry_breaker_call_duration_seconds")?.type, "histogram")
      assert.includeMembers(histogram, [
        `circuitry_breaker_call_duration_seconds_bucket{breaker="m-payments",le="0.001"} 2`,
        `circuitry_breaker_call_duration_seconds_bucket{breaker="m-payments",le="0.01"} 2`,
        `circuitry_breaker_call_duration_seconds_bucket{breaker="m-payments",le="0.025"} 3`,
        `circuitry_breaker_call_duration_seconds_bucket{breaker="m-payments",le="30"} 3`,
        `circuitry_breaker_call_duration_seconds_bucket{breaker="m-payments",le="+Inf"} 3`,
        `circuitry_breaker_call_duration_seconds_sum{breaker="m-payments"} 0.02`,
        `circuitry_breaker_call_duration_seconds_count{breaker="m-payments"} 3`
      ])
    }).pipe(Effect.provide(clientLayer))
  )

  it.scoped("a value changes between two scrapes after calls, and a new series appears", () =>
    Effect.gen(function* () {
      const server = yield* serve(app)
      const registry = yield* BreakerRegistry.make({ defaults: { policy: Policy.consecutiveFailures(5) } })
      const search = yield* registry.get("m-search")
      yield* search.execute(Effect.void)
      const before = (yield* scrape(server.url)).parsed
      assert.strictEqual(value(before, "circuitry_breaker_calls_total", { breaker: "m-search", outcome: "success" }), 1)
      assert.isUndefined(value(before, "circuitry_breaker_calls_total", { breaker: "m-search", outcome: "failure" }))

      for (let i = 0; i < 4; i++) yield* search.execute(Effect.void)
      yield* Effect.ignore(search.execute(Effect.fail("down")))
      const after = (yield* scrape(server.url)).parsed
      assert.strictEqual(value(after, "circuitry_breaker_calls_total", { breaker: "m-search", outcome: "success" }), 5)
      assert.strictEqual(value(after, "circuitry_breaker_calls_total", { breaker: "m-search", outcome: "failure" }), 1)
      assert.strictEqual(value(after, "circuitry_breaker_call_duration_seconds_count", { breaker: "m-search" }), 6)
    }).pipe(Effect.provide(clientLayer))
  )

  it.scoped("every metric of the application is there, not only circuitry's: a limiter's and the app's own", () =>
    Effect.gen(function* () {
      const server = yield* serve(app)
      const limiter = yield* Limiter.make({ name: "m-inbound", limit: Limit.fixed(4) })
      yield* Limiter.withLimiter(Effect.void, limiter)
      const orders = Metric.counter("shop_orders_total", { incremental: true, description: "Orders placed" })
      const queue = Metric.gauge("shop_queue_depth")
      const sizes = histogram("shop_order_size", [1, 10])
      const latency = summary("shop_latency", { maxAge: "1 minute", maxSize: 100, error: 0.01, quantiles: [0.5, 0.99] })
      const methods = Metric.frequency("shop_payment_method")
      yield* Metric.update(withAttributes(orders, { region: "eu" }), 3)
      yield* Metric.update(queue, 7)
      for (const size of [0.5, 4, 40]) yield* Metric.update(sizes, size)
      yield* Metric.update(latency, 12)
      yield* Metric.update(methods, "card")
      yield* Metric.update(methods, "card")
      yield* Metric.update(methods, "iban")

      const { body, parsed } = yield* scrape(server.url)
      assert.strictEqual(value(parsed, "circuitry_limiter_limit", { limiter: "m-inbound" }), 4)
      // circuitry's counters only go up, so they are Prometheus counters (rate() applies).
      assert.strictEqual(parsed.families.get("circuitry_limiter_calls_total")?.type, "counter")
      assert.strictEqual(
        value(parsed, "circuitry_limiter_calls_total", { limiter: "m-inbound", outcome: "success" }),
        1
      )
      // The application's own metrics, whole and in name order, each family's lines together.
      includesLines(body, [
        "# TYPE shop_latency summary",
        `shop_latency{quantile="0.5"} 12`,
        `shop_latency{quantile="0.99"} 12`,
        "shop_latency_sum 12",
        "shop_latency_count 1",
        "# TYPE shop_order_size histogram",
        `shop_order_size_bucket{le="1"} 1`,
        `shop_order_size_bucket{le="10"} 2`,
        `shop_order_size_bucket{le="+Inf"} 3`,
        "shop_order_size_sum 44.5",
        "shop_order_size_count 3",
        "# HELP shop_orders_total Orders placed",
        "# TYPE shop_orders_total counter",
        `shop_orders_total{region="eu"} 3`,
        "# TYPE shop_payment_method counter",
        `shop_payment_method{key="card"} 2`,
        `shop_payment_method{key="iban"} 1`,
        "# TYPE shop_queue_depth gauge",
        "shop_queue_depth 7",
        ""
      ])
      // The app's other route still answers.
      const home = yield* (yield* HttpClient.HttpClient).get(`${server.url}/`)
      assert.strictEqual(yield* home.text, "app")
    }).pipe(Effect.provide(clientLayer))
  )

  it.scoped("names are sanitised, label values escaped, and a counter that may go down is a gauge", () =>
    Effect.gen(function* () {
      const server = yield* serve(app)
      const hostile = `a "quoted" \\ back\nslash`
      yield* Metric.update(
        withAttributes(Metric.counter("http.requests-served", { description: "Served\nby \\ us" }), {
          "route-name": hostile,
          __internal: "x",
          "9lives": "y"
        }),
        2
      )
      const { body, parsed } = yield* scrape(server.url)
      includesLines(body, [
        "# HELP http_requests_served Served\\nby \\\\ us",
        "# TYPE http_requests_served gauge",
        `http_requests_served{_9lives="y",route_name="a \\"quoted\\" \\\\ back\\nslash",x__internal="x"} 2`
      ])
      assert.strictEqual(
        value(parsed, "http_requests_served", { route_name: hostile, _9lives: "y", x__internal: "x" }),
        2
      )
    }).pipe(Effect.provide(clientLayer))
  )

  it("the parser can fail: what a scraper rejects is rejected here", () => {
    const bad: ReadonlyArray<readonly [string, RegExp]> = [
      ["x 1\nx 2\n", /twice/],
      ["# TYPE x counter\n# TYPE x counter\nx 1\n", /TYPE/],
      [`x{a="unterminated} 1\n`, /labels/],
      ["x one\n", /value/],
      ['# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n', /cumulative/],
      ['# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n', /\+Inf/],
      ['a 1\nb 1\na{x="1"} 1\n', /together/],
      ["1x 1\n", /name/]
    ]
    for (const [text, reason] of bad) assert.throws(() => parse(text), reason, undefined, JSON.stringify(text))
    const ok: Exposition = parse(`# HELP a b\n# TYPE a gauge\na{x="1"} -Inf\n`)
    assert.strictEqual(value(ok, "a", { x: "1" }), -Infinity)
  })
})
