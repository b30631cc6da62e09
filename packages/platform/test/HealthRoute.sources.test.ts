/**
 * The health route shows the breakers it is handed (values or tags) beside its registries' (the
 * context's `BreakerRegistry` by default, or the registries it is given), in the JSON, the live
 * view and the operations, and its type asks the context for exactly the tags it was handed.
 */
import { assert, describe, expectTypeOf, it } from "@circuitry/testkit"
import { HttpClient, HttpClientRequest, bodyJson, clientLayer, type Routes } from "#test/http"
import { BreakerRegistry, CircuitBreaker, Policy } from "@circuitry/breaker"
import { HealthRoute } from "@circuitry/platform"
import * as Edition from "@circuitry/core/Edition"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { serve } from "./utils.js"

class UsersDb extends Edition.KeyClass<UsersDb, CircuitBreaker.CircuitBreaker<CircuitBreaker.BreakerTimeoutError>>()(
  "UsersDb"
) {}
class Databases extends Edition.KeyClass<
  Databases,
  BreakerRegistry.BreakerRegistry<CircuitBreaker.BreakerTimeoutError>
>()("Databases") {}

const trip = (breaker: CircuitBreaker.CircuitBreaker<unknown>) => Effect.ignore(breaker.execute(Effect.fail("down")))

interface Shown {
  readonly open: number
  readonly breakers: ReadonlyArray<{ readonly name: string; readonly state: string }>
}

const read = (url: string) =>
  Effect.flatMap(HttpClient.HttpClient, (client) =>
    Effect.flatMap(client.get(url), (response) => response.json as Effect.Effect<unknown, unknown>)
  ) as Effect.Effect<Shown, unknown, HttpClient.HttpClient>

describe("HealthRoute sources", () => {
  it.scoped("a breaker handed as a value and one as a tag show beside the registry's, each once", () =>
    Effect.gen(function* () {
      const context = yield* Layer.build(
        Layer.mergeAll(
          BreakerRegistry.layer({ defaults: { policy: Policy.consecutiveFailures(1) } }),
          CircuitBreaker.layer(UsersDb, {
            name: "users-db",
            policy: Policy.consecutiveFailures(1),
            timeout: "1 second"
          })
        )
      )
      const registry = Context.get(context, BreakerRegistry.BreakerRegistry)
      const search = yield* registry.get("search")
      const orders = yield* CircuitBreaker.make({
        name: "orders-db",
        policy: Policy.consecutiveFailures(1),
        timeout: "1 second"
      })
      yield* trip(Context.get(context, UsersDb))
      yield* trip(orders)

      const router = HealthRoute.router({ breakers: [orders, UsersDb, search] })
      expectTypeOf(router).toEqualTypeOf<Routes<never, UsersDb | BreakerRegistry.BreakerRegistry>>()
      const server = yield* serve(router).pipe(Effect.provide(context))
      const health = yield* read(`${server.url}/health/breakers`)
      assert.strictEqual(health.open, 2)
      assert.deepStrictEqual(
        health.breakers.map((b) => `${b.name}:${b.state}`),
        ["orders-db:Open", "search:Closed", "users-db:Open"]
      )
    }).pipe(Effect.provide(clientLayer))
  )

  it.scoped("registries: [] needs no registry; a registry of the application's tag is listed", () =>
    Effect.gen(function* () {
      const context = yield* Layer.build(
        BreakerRegistry.layer(Databases, {
          defaults: { policy: Policy.consecutiveFailures(1) },
          overrides: { "users-db": { timeout: "1 second" } }
        })
      )
      yield* Effect.flatMap(Context.get(context, Databases).get("users-db"), trip)
      const alone = yield* CircuitBreaker.make({ name: "alone" })

      const none = HealthRoute.router({ breakers: [alone], registries: [] })
      expectTypeOf(none).toEqualTypeOf<Routes<never, never>>()
      const served = yield* serve(none)
      assert.deepStrictEqual(
        (yield* read(`${served.url}/health/breakers`)).breakers.map((b) => b.name),
        ["alone"]
      )

      const databases = HealthRoute.router({ registries: [Databases], path: "/health/db" })
      expectTypeOf(databases).toEqualTypeOf<Routes<never, Databases>>()
      const server = yield* serve(databases).pipe(Effect.provide(context))
      const health = yield* read(`${server.url}/health/db`)
      assert.strictEqual(health.open, 1)
      assert.deepStrictEqual(health.breakers, [
        {
          name: "users-db",
          state: "Open",
          openUntil: "1970-01-01T00:00:30.000Z",
          counts: { calls: 0, failures: 0, slowCalls: 0, consecutiveFailures: 0 },
          probes: 0,
          store: "local"
        }
      ] as never)
      // today's route needs the BreakerRegistry, as before
      expectTypeOf(HealthRoute.router()).toEqualTypeOf<Routes<never, BreakerRegistry.BreakerRegistry>>()
      expectTypeOf(HealthRoute.health).toEqualTypeOf<
        Effect.Effect<HealthRoute.Health, never, BreakerRegistry.BreakerRegistry>
      >()
      // a value that is not a breaker is not a source: refused by the types, and thrown at run time
      assert.throws(
        // @ts-expect-error a value that is not a breaker is not a source
        () => HealthRoute.router({ breakers: [{ name: "fake" }] }),
        HealthRoute.InvalidPlatformOptions
      )
    }).pipe(Effect.provide(clientLayer))
  )

  it.scoped("the live stream and the operations reach a handed breaker", () =>
    Effect.gen(function* () {
      const db = yield* CircuitBreaker.make({ name: "users-db", policy: Policy.consecutiveFailures(1) })
      const routes = yield* HealthRoute.make({
        breakers: [db],
        registries: [],
        refreshSeconds: 1,
        history: { samples: 5, every: "1 second" },
        authorize: () => Effect.succeed(HealthRoute.allowed("ops"))
      })
      const server = yield* serve(routes)
      const client = yield* HttpClient.HttpClient
      const isolate = yield* client.execute(
        HttpClientRequest.post(`${server.url}/health/breakers/isolate`).pipe(bodyJson({ breaker: "users-db" }))
      )
      assert.strictEqual(isolate.status, 200)
      assert.strictEqual((yield* db.state)._tag, "Isolated")
      // the view's stream renders it
      const events = yield* client.get(`${server.url}/health/breakers/view/events`)
      const first = yield* events.stream.pipe(
        Stream.decodeText(),
        Stream.filter((chunk) => chunk.includes("event: view")),
        Stream.take(1),
        Stream.runCollect
      )
      const view = Array.from(first).join("")
      assert.include(view, "users-db")
      assert.include(view, "Isolated")
      const health = yield* read(`${server.url}/health/breakers`)
      assert.strictEqual(health.open, 1)
    }).pipe(Effect.provide(clientLayer))
  )

  it.scoped("make refuses what is not a breaker or a registry (or a tag of one), naming the entry", () =>
    Effect.gen(function* () {
      // Not what the types allow, but a value from elsewhere (a config, JavaScript) may be anything.
      const cases: Array<[unknown, string]> = [
        [
          { breakers: [{ name: "fake" }], registries: [] },
          'HealthRoute: breakers[0] must be a CircuitBreaker or a Context.Tag of one, got {"name":"fake"}'
        ],
        [
          { breakers: [UsersDb, "users-db"], registries: [] },
          'HealthRoute: breakers[1] must be a CircuitBreaker or a Context.Tag of one, got "users-db"'
        ],
        [
          { registries: [Databases, { breakers: 1 }] },
          'HealthRoute: registries[1] must be a BreakerRegistry or a Context.Tag of one, got {"breakers":1}'
        ],
        [{ breakers: UsersDb }, "HealthRoute: breakers must be an array, got a function"],
        [{ registries: "all" }, 'HealthRoute: registries must be an array, got "all"'],
        // what is not an array is told before a history out of range, and that before a bad entry
        [{ registries: "all", history: { samples: 0 } }, 'HealthRoute: registries must be an array, got "all"'],
        [
          { breakers: [1], registries: [], history: { samples: 0 } },
          "HealthRoute: history.samples must be a whole number >= 1, got 0"
        ]
      ]
      for (const [options, message] of cases) {
        const error = yield* Effect.flip(HealthRoute.make(options as HealthRoute.MakeOptions<never, [], []>))
        assert.instanceOf(error, HealthRoute.InvalidPlatformOptions)
        assert.strictEqual(error._tag, "InvalidPlatformOptions")
        assert.strictEqual(error.message, message)
      }
    })
  )

  // What the route's own options must be, in make (a typed failure) and router (thrown where it is built).
  const routeCases: Array<[unknown, string]> = [
    [{ path: "health" }, 'HealthRoute: path must be a path starting with "/", got "health"'],
    [{ refreshSeconds: Number.NaN }, "HealthRoute: refreshSeconds must be a finite number of seconds > 0, got NaN"],
    [{ refreshSeconds: 0 }, "HealthRoute: refreshSeconds must be a finite number of seconds > 0, got 0"],
    [{ refreshSeconds: "5" }, 'HealthRoute: refreshSeconds must be a finite number of seconds > 0, got "5"'],
    [{ title: 5 }, "HealthRoute: title must be a string, got 5"],
    [{ events: null }, "HealthRoute: events must be a string, got null"],
    [{ authorize: "ops" }, 'HealthRoute: authorize must be a function, got "ops"'],
    [{ breakers: [1] }, "HealthRoute: breakers[0] must be a CircuitBreaker or a Context.Tag of one, got 1"]
  ]

  it.scoped("make refuses a bad path, refresh, title, events or authorize, naming the option", () =>
    Effect.gen(function* () {
      for (const [options, message] of routeCases) {
        const error = yield* Effect.flip(HealthRoute.make(options as HealthRoute.MakeOptions<never, [], []>))
        assert.instanceOf(error, HealthRoute.InvalidPlatformOptions)
        assert.strictEqual(error.message, message)
      }
      // what the types allow is taken
      yield* HealthRoute.make({ path: "/ops/breakers", refreshSeconds: 0.5, title: "Ops", registries: [] })
    })
  )

  it("router throws the same error where it is built, and builds from good options", () => {
    for (const [options, message] of routeCases) {
      assert.throws(
        () => HealthRoute.router(options as HealthRoute.RouterOptions<never, [], []>),
        HealthRoute.InvalidPlatformOptions,
        message
      )
    }
    assert.isDefined(HealthRoute.router({ path: "/ops/breakers", refreshSeconds: 2, title: "Ops", registries: [] }))
  })
})
