import { TestClock, assert, describe, it } from "@circuitry/testkit"
import { HttpClient, clientLayer } from "#test/http"
import { BreakerRegistry, Policy } from "@circuitry/breaker"
import { HealthRoute } from "@circuitry/platform"
import * as Edition from "@circuitry/core/Edition"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { serve } from "./utils.js"

const Env = Layer.mergeAll(
  clientLayer,
  BreakerRegistry.layer({ defaults: { policy: Policy.consecutiveFailures(2), openFor: "30 seconds" } })
)

const at = (seconds: number) => new Date(seconds * 1000).toISOString()

describe("HealthRoute history", () => {
  it.scoped("keeps the last `samples` samples per breaker, and the transitions as far back as they go", () =>
    Effect.gen(function* () {
      const registry = yield* BreakerRegistry.BreakerRegistry
      const payments = yield* registry.get("payments")
      const server = yield* serve(yield* HealthRoute.make({ history: { samples: 3, every: "10 seconds" } }))
      const client = yield* HttpClient.HttpClient
      const historyOf = Effect.gen(function* () {
        const body = (yield* (yield* client.get(`${server.url}/health/breakers`)).json) as unknown as HealthRoute.Health
        return body.breakers.find((b) => b.name === "payments")!.history!
      })

      assert.deepStrictEqual(yield* historyOf, {
        samples: [{ at: at(0), state: "Closed", calls: 0, failures: 0, failureRate: null }],
        transitions: []
      })

      yield* payments.execute(Effect.void)
      yield* Effect.ignore(payments.execute(Effect.fail("down")))
      yield* TestClock.adjust("10 seconds")
      yield* Effect.ignore(payments.execute(Effect.fail("down"))) // trips at 10 s, open until 40 s
      yield* TestClock.adjust("10 seconds")
      yield* TestClock.adjust("10 seconds")
      // Capacity 3: the sample at 0 s is gone.
      assert.deepStrictEqual(yield* historyOf, {
        samples: [
          { at: at(10), state: "Closed", calls: 2, failures: 1, failureRate: 0.5 },
          { at: at(20), state: "Open", calls: 0, failures: 0, failureRate: null },
          { at: at(30), state: "Open", calls: 0, failures: 0, failureRate: null }
        ],
        transitions: [{ from: "Closed", to: "Open", at: at(10) }]
      })

      // At 50 s the samples go back to 30 s: the trip at 10 s is older than their span and is left out.
      yield* TestClock.adjust("20 seconds")
      const later = yield* historyOf
      assert.deepStrictEqual(
        later.samples.map((s) => [s.at, s.state]),
        [
          [at(30), "Open"],
          [at(40), "HalfOpen"],
          [at(50), "HalfOpen"]
        ]
      )
      // The circuit read HalfOpen at 40 s (lazily, when the sample read it): that transition is kept.
      assert.deepStrictEqual(later.transitions, [{ from: "Open", to: "HalfOpen", at: at(40) }])

      // The transition ring is bounded too: five transitions in one period, the last three kept.
      for (let i = 0; i < 2; i++) {
        yield* payments.isolate
        yield* payments.reset
      }
      yield* payments.isolate
      // The route records transitions in a fiber of its own, which may not have had its turn yet
      // (on Effect 4 the server's handler can run first): give it up to 50 turns to take all five
      // (until then the oldest kept is the first or the second, HalfOpen>Isolated or Isolated>Closed).
      let recorded = (yield* historyOf).transitions
      for (let i = 0; i < 50 && recorded[0]?.from !== "Closed"; i++) {
        yield* Edition.yieldNow
        recorded = (yield* historyOf).transitions
      }
      assert.deepStrictEqual(
        recorded.map((t) => `${t.from}>${t.to}`),
        ["Closed>Isolated", "Isolated>Closed", "Closed>Isolated"]
      )
    }).pipe(Effect.provide(Env))
  )

  it.scoped("a breaker made later is sampled from the next tick; `router` keeps no history", () =>
    Effect.gen(function* () {
      const registry = yield* BreakerRegistry.BreakerRegistry
      const routes = yield* HealthRoute.make({ history: { samples: 5, every: "1 minute" } })
      yield* registry.get("late")
      const server = yield* serve(routes)
      const client = yield* HttpClient.HttpClient
      const read = Effect.flatMap(
        client.get(`${server.url}/health/breakers`),
        (r) => r.json
      ) as unknown as Effect.Effect<HealthRoute.Health, unknown>
      assert.deepStrictEqual((yield* read).breakers[0]!.history, undefined)
      yield* TestClock.adjust("1 minute")
      assert.deepStrictEqual(
        (yield* read).breakers[0]!.history?.samples.map((s) => s.at),
        [at(60)]
      )

      const plain = yield* serve(HealthRoute.router())
      const body = (yield* (yield* client.get(`${plain.url}/health/breakers`)).json) as unknown as HealthRoute.Health
      assert.notProperty(body.breakers[0]!, "history")
    }).pipe(Effect.provide(Env))
  )

  it.scoped("history options out of range fail make with InvalidPlatformOptions naming the option", () =>
    Effect.gen(function* () {
      const cases: Array<[HealthRoute.MakeOptions["history"], string]> = [
        [{ samples: 0 }, "HealthRoute: history.samples must be a whole number >= 1, got 0"],
        [{ samples: 2.5 }, "HealthRoute: history.samples must be a whole number >= 1, got 2.5"],
        [{ every: "0 seconds" }, `HealthRoute: history.every must be a finite duration > 0, got "0 seconds"`],
        [{ every: "forever" as never }, `HealthRoute: history.every must be a finite duration > 0, got "forever"`]
      ]
      for (const [history, message] of cases) {
        const error = yield* Effect.flip(HealthRoute.make({ history }))
        assert.instanceOf(error, HealthRoute.InvalidPlatformOptions)
        assert.strictEqual(error._tag, "InvalidPlatformOptions")
        assert.strictEqual(error.message, message)
      }
    }).pipe(Effect.provide(Env))
  )
})
