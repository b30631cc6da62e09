// Written in Effect 3's idiom (Context.Tag, Layer.scoped), so Effect 3 only; docs/effect4.md has Effect 4's.
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { Chaos, Scenario } from "@circuitry/chaos"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"

// A dependency: a price feed that answers in 5 ms.
class PriceFeed extends Context.Tag("PriceFeed")<
  PriceFeed,
  { readonly latest: (sku: string) => Effect.Effect<number> }
>() {}
const FeedLive = Layer.succeed(PriceFeed, { latest: () => Effect.as(Effect.sleep("5 millis"), 9.99) })

// The service under test: the feed behind a 200 ms timeout and a breaker, falling back to the
// last price it saw. It counts the calls it lets through to the feed.
class Prices extends Context.Tag("Prices")<Prices, { readonly price: (sku: string) => Effect.Effect<number> }>() {}
const PricesLive = Layer.scoped(
  Prices,
  Effect.gen(function* () {
    const feed = yield* PriceFeed
    const breaker = yield* CircuitBreaker.make({
      name: "feed",
      policy: Policy.consecutiveFailures(5),
      openFor: "5 seconds"
    })
    const last = new Map<string, number>()
    return {
      price: (sku) =>
        Effect.zipRight(Scenario.count("feed.calls"), feed.latest(sku)).pipe(
          Effect.timeout("200 millis"),
          CircuitBreaker.withBreaker(breaker),
          Effect.tap((price) => last.set(sku, price)),
          Effect.orElseSucceed(() => last.get(sku) ?? 0)
        )
    }
  })
)

// The feed stalls from 60 s to 66 s: every call started then never answers.
const FeedUnderChaos = Chaos.layer(PriceFeed, {
  latest: Chaos.during({ from: "60 seconds", to: "66 seconds" }, Chaos.stall)
}).pipe(Layer.provide(FeedLive))

describe("Prices under a stalled feed", () => {
  it.effect("keeps its SLO: no failures, p99 within the timeout, the feed left alone while open", () =>
    Effect.gen(function* () {
      const prices = yield* Prices
      const report = yield* Scenario.run({
        duration: "2 minutes",
        rate: 50,
        request: (i) => prices.price(`sku-${i % 100}`)
      })
      yield* Scenario.expect(report, { maxFailureRate: 0, maxP99: "250 millis" })

      // The breaker opened on the first timeouts: the feed got a probe or two, not 50 calls a second.
      const stalled = report.seconds.slice(61, 70).map((s) => s.counters["feed.calls"]!)
      assert.isBelow(
        stalled.reduce((a, b) => a + b, 0),
        5
      )
      // A tighter SLO breaks in second 60, where the first calls waited out the timeout.
      const broken = yield* Effect.flip(Scenario.expect(report, { maxP99: "100 millis" }))
      assert.strictEqual(broken.message, "SLO broken in second 60: p99 latency 200 ms is above the SLO's 100 ms")
    }).pipe(Effect.provide(PricesLive.pipe(Layer.provide(FeedUnderChaos))))
  )
})
