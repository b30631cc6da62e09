import { TestClock, assert, describe, it, logTo, result, take, yieldNow } from "@circuitry/testkit"
import { HttpClient, HttpClientRequest, bodyJson, clientLayer } from "#test/http"
import { BreakerRegistry, BreakerStore, Policy } from "@circuitry/breaker"
import { HealthRoute } from "@circuitry/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { serve } from "./utils.js"

const Env = Layer.mergeAll(
  clientLayer,
  BreakerRegistry.layer({ defaults: { policy: Policy.consecutiveFailures(1), openFor: "30 seconds" } })
)

/** "Bearer admin" is alice, who may; "Bearer viewer" is bob, who may not; no header is nobody. */
const authorize: HealthRoute.Authorize = (request, operation) =>
  Effect.succeed(
    request.headers["authorization"] === "Bearer admin"
      ? HealthRoute.allowed("alice")
      : request.headers["authorization"] === "Bearer viewer"
        ? HealthRoute.denied(`bob (${operation._tag})`)
        : HealthRoute.unauthenticated(`Bearer realm="ops"`)
  )

const post = (url: string, body: unknown, token?: string) =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.post(url).pipe(bodyJson(body))
    if (token !== undefined) request = HttpClientRequest.setHeader(request, "authorization", `Bearer ${token}`)
    const response = yield* client.execute(request)
    return {
      status: response.status,
      headers: response.headers,
      body: (yield* response.json) as unknown as Record<string, unknown>
    }
  })

const stateOf = (name: string) =>
  Effect.flatMap(BreakerRegistry.BreakerRegistry, (registry) =>
    Effect.flatMap(registry.get(name), (b) => Effect.map(b.state, (s) => s._tag))
  )

describe("HealthRoute operations", () => {
  it.scoped("without an authorize hook no operation is mounted: 404, and nothing changes", () =>
    Effect.gen(function* () {
      yield* stateOf("payments")
      const server = yield* serve(HealthRoute.router())
      for (const op of ["isolate", "reset", "extend-open"]) {
        const client = yield* HttpClient.HttpClient
        const response = yield* client.execute(
          HttpClientRequest.post(`${server.url}/health/breakers/${op}`).pipe(
            HttpClientRequest.setHeader("authorization", "Bearer admin"),
            bodyJson({ breaker: "payments", for: "1 minute" })
          )
        )
        assert.strictEqual(response.status, 404, op)
      }
      assert.strictEqual(yield* stateOf("payments"), "Closed")
    }).pipe(Effect.provide(Env))
  )

  it.scoped("unauthenticated gets 401 and denied gets 403, and neither changes the breaker", () =>
    Effect.gen(function* () {
      yield* stateOf("payments")
      const server = yield* serve(HealthRoute.router({ authorize }))
      const nobody = yield* post(`${server.url}/health/breakers/isolate`, { breaker: "payments" })
      assert.strictEqual(nobody.status, 401)
      assert.strictEqual(nobody.headers["content-type"], "application/problem+json")
      assert.strictEqual(nobody.headers["www-authenticate"], `Bearer realm="ops"`)
      assert.strictEqual(yield* stateOf("payments"), "Closed")

      const bob = yield* post(`${server.url}/health/breakers/isolate`, { breaker: "payments" }, "viewer")
      assert.strictEqual(bob.status, 403)
      assert.strictEqual(bob.body.detail, `bob (Isolate) may not isolate "payments".`)
      assert.strictEqual(yield* stateOf("payments"), "Closed")

      // An unknown name is not revealed to an unauthenticated caller either.
      const probe = yield* post(`${server.url}/health/breakers/reset`, { breaker: "secret-upstream" })
      assert.strictEqual(probe.status, 401)
    }).pipe(Effect.provide(Env))
  )

  it.scoped("an allowed caller isolates and resets; who did it is logged and returned", () =>
    Effect.gen(function* () {
      const logs: Array<{ message: string; identity: unknown }> = []
      const capture = logTo(({ annotations, messages }) => {
        logs.push({ message: String(messages), identity: annotations["identity"] })
      })
      yield* stateOf("payments")
      const server = yield* serve(HealthRoute.router({ authorize })).pipe(Effect.provide(capture))
      yield* TestClock.adjust("2 seconds")
      const isolated = yield* post(`${server.url}/health/breakers/isolate`, { breaker: "payments" }, "admin")
      assert.strictEqual(isolated.status, 200)
      assert.deepStrictEqual(isolated.body, {
        operation: "Isolate",
        breaker: "payments",
        by: "alice",
        at: "1970-01-01T00:00:02.000Z",
        state: "Isolated",
        openUntil: null
      })
      assert.strictEqual(yield* stateOf("payments"), "Isolated")

      const reset = yield* post(`${server.url}/health/breakers/reset`, { breaker: "payments" }, "admin")
      assert.deepStrictEqual([reset.status, reset.body.state, reset.body.by], [200, "Closed", "alice"])
      assert.strictEqual(yield* stateOf("payments"), "Closed")
      assert.deepStrictEqual(
        logs.filter((l) => l.message.startsWith("health route: alice")).map((l) => l.message),
        [`health route: alice isolated "payments"`, `health route: alice reset "payments"`]
      )
    }).pipe(Effect.provide(Env))
  )

  it.scoped("extend-open moves the open time of an open circuit, by a duration or to an instant", () =>
    Effect.gen(function* () {
      const registry = yield* BreakerRegistry.BreakerRegistry
      const payments = yield* registry.get("payments")
      yield* Effect.ignore(payments.execute(Effect.fail("down"))) // open until 30 s
      const server = yield* serve(HealthRoute.router({ authorize }))
      const url = `${server.url}/health/breakers/extend-open`
      const byDuration = yield* post(url, { breaker: "payments", for: "2 minutes" }, "admin")
      assert.deepStrictEqual([byDuration.status, byDuration.body.openUntil], [200, "1970-01-01T00:02:00.000Z"])
      const toInstant = yield* post(url, { breaker: "payments", until: "1970-01-01T00:05:00Z" }, "admin")
      assert.deepStrictEqual([toInstant.status, toInstant.body.openUntil], [200, "1970-01-01T00:05:00.000Z"])
      yield* TestClock.adjust("4 minutes")
      assert.strictEqual(yield* stateOf("payments"), "Open") // without the extension it would be HalfOpen

      // A closed circuit has no open time to extend: 409, and it stays closed.
      yield* stateOf("search")
      const closed = yield* post(url, { breaker: "search", for: "1 minute" }, "admin")
      assert.strictEqual(closed.status, 409)
      assert.strictEqual(yield* stateOf("search"), "Closed")
    }).pipe(Effect.provide(Env))
  )

  it.scoped("an unknown name gets 404 and creates no breaker; bad input gets 400 problem+json", () =>
    Effect.gen(function* () {
      const registry = yield* BreakerRegistry.BreakerRegistry
      const payments = yield* registry.get("payments")
      yield* Effect.ignore(payments.execute(Effect.fail("down")))
      const server = yield* serve(HealthRoute.router({ authorize }))
      const unknown = yield* post(`${server.url}/health/breakers/isolate`, { breaker: "nope" }, "admin")
      assert.strictEqual(unknown.status, 404)
      assert.strictEqual(unknown.body.detail, `No breaker named "nope" on this route.`)
      assert.deepStrictEqual(yield* registry.names, ["payments"])

      const url = `${server.url}/health/breakers/extend-open`
      const bad: Array<[unknown, string]> = [
        [{ breaker: "payments", for: "soon" }, `"for" must be a finite duration > 0 such as "5 minutes", got "soon".`],
        [
          { breaker: "payments", for: "-5 seconds" },
          `"for" must be a finite duration > 0 such as "5 minutes", got "-5 seconds".`
        ],
        [{ breaker: "payments", until: "tomorrow" }, `"until" must be an ISO 8601 instant, got "tomorrow".`],
        [
          { breaker: "payments", until: "1969-12-31T23:00:00Z" },
          `"until" must be in the future, got 1969-12-31T23:00:00Z (now 1970-01-01T00:00:00.000Z).`
        ],
        [
          { breaker: "payments", for: "1 minute", until: "1970-01-01T00:05:00Z" },
          `Give exactly one of "for" (a duration, e.g. "5 minutes") and "until" (an ISO 8601 instant).`
        ]
      ]
      for (const [body, detail] of bad) {
        const response = yield* post(url, body, "admin")
        assert.strictEqual(response.status, 400, JSON.stringify(body))
        assert.strictEqual(response.headers["content-type"], "application/problem+json")
        assert.deepStrictEqual(response.body, { type: "about:blank", title: "Bad Request", status: 400, detail })
      }
      // Not JSON (what a cross-site form sends): 415, before the hook is even asked.
      const form = yield* (yield* HttpClient.HttpClient).execute(
        HttpClientRequest.post(`${server.url}/health/breakers/isolate`).pipe(
          HttpClientRequest.setHeader("authorization", "Bearer admin"),
          HttpClientRequest.bodyText(`{"breaker":"payments"}`, "text/plain")
        )
      )
      assert.strictEqual(form.status, 415)
      assert.strictEqual(
        ((yield* form.json) as unknown as { detail: string }).detail,
        "The body must be application/json, got text/plain."
      )
      const noName = yield* post(`${server.url}/health/breakers/isolate`, { name: "payments" }, "admin")
      assert.strictEqual(noName.status, 400)
      assert.match(String(noName.body.detail), /^The body must be/)
      assert.deepStrictEqual((yield* payments.state)._tag, "Open") // untouched: open until 30 s
      const snapshot = yield* payments.snapshot
      assert.deepStrictEqual(snapshot.state, { _tag: "Open", until: 30_000 } as never)
    }).pipe(Effect.provide(Env))
  )

  it.scoped(
    "with a BreakerStore: the JSON says so, and an isolate reaches another member as the verdict is shared",
    () =>
      Effect.gen(function* () {
        const store = yield* BreakerStore.makeMemory
        const options = { defaults: { policy: Policy.consecutiveFailures(1) } }
        const member = yield* BreakerRegistry.make(options).pipe(
          Effect.provideService(BreakerStore.BreakerStore, store)
        )
        const other = yield* BreakerRegistry.make(options).pipe(Effect.provideService(BreakerStore.BreakerStore, store))
        const elsewhere = yield* other.get("payments")
        yield* member.get("payments")
        const server = yield* serve(HealthRoute.router({ authorize })).pipe(
          Effect.provideService(BreakerRegistry.BreakerRegistry, member),
          Effect.provideService(BreakerStore.BreakerStore, store)
        )
        const client = yield* HttpClient.HttpClient
        const body = (yield* (yield* client.get(`${server.url}/health/breakers`)).json) as unknown as HealthRoute.Health
        assert.strictEqual(body.storeInContext, true)
        // Per breaker: its verdict is shared, and the store answers.
        assert.deepStrictEqual(
          body.breakers.map((b) => [b.name, b.store]),
          [["payments", "shared"]]
        )

        // Who asked travels with the verdict: the other member's transition names the identity the hook allowed.
        const heard = yield* elsewhere.subscribe
        const isolated = yield* post(`${server.url}/health/breakers/isolate`, { breaker: "payments" }, "admin")
        assert.strictEqual(isolated.status, 200)
        let seen = (yield* elsewhere.state)._tag
        for (let i = 0; i < 200 && seen !== "Isolated"; i++) {
          yield* yieldNow
          seen = (yield* elsewhere.state)._tag
        }
        assert.strictEqual(seen, "Isolated")
        const transition = yield* take(heard)
        assert.strictEqual(transition.to, "Isolated")
        assert.strictEqual(transition.by, "alice")

        const reset = yield* post(`${server.url}/health/breakers/reset`, { breaker: "payments" }, "admin")
        assert.strictEqual(reset.status, 200)
        const closed = yield* take(heard)
        assert.deepStrictEqual([closed.to, closed.by], ["Closed", "alice"])
      }).pipe(Effect.provide(Env))
  )
  it.scoped(
    "with a quorum: a member its own policy opened shows its own verdict, the member beside it the fleet's",
    () =>
      Effect.gen(function* () {
        const store = yield* BreakerStore.makeMemory
        // Two members must trip before the fleet opens: one member's trip opens only itself.
        const options: BreakerRegistry.RegistryOptions = {
          defaults: { policy: Policy.consecutiveFailures(1), openFor: "30 seconds", sharing: { quorum: 2 } }
        }
        const member = yield* BreakerRegistry.make(options).pipe(
          Effect.provideService(BreakerStore.BreakerStore, store)
        )
        const other = yield* BreakerRegistry.make(options).pipe(Effect.provideService(BreakerStore.BreakerStore, store))
        const alone = yield* member.get("payments")
        const healthy = yield* other.get("payments")
        yield* result(alone.execute(Effect.fail("down from here")))
        assert.strictEqual((yield* alone.state)._tag, "Open")
        assert.strictEqual((yield* healthy.state)._tag, "Closed")
        const route = (registry: typeof member) =>
          serve(HealthRoute.router()).pipe(
            Effect.provideService(BreakerRegistry.BreakerRegistry, registry),
            Effect.provideService(BreakerStore.BreakerStore, store)
          )
        const client = yield* HttpClient.HttpClient
        const read = (url: string) =>
          Effect.flatMap(client.get(`${url}/health/breakers`), (r) => r.json) as unknown as Effect.Effect<
            HealthRoute.Health,
            unknown
          >
        const mine = yield* route(member)
        const theirs = yield* route(other)
        const verdicts = (health: HealthRoute.Health) => health.breakers.map((b) => [b.name, b.store, b.verdict])
        assert.deepStrictEqual(verdicts(yield* read(mine.url)), [["payments", "shared", "member"]])
        assert.deepStrictEqual(verdicts(yield* read(theirs.url)), [["payments", "shared", "fleet"]])
        const view = yield* Effect.flatMap(client.get(`${mine.url}/health/breakers/view`), (r) => r.text)
        assert.include(view, "this member's own")
        const otherView = yield* Effect.flatMap(client.get(`${theirs.url}/health/breakers/view`), (r) => r.text)
        assert.include(otherView, "shared: the fleet's")
        assert.notInclude(otherView, "this member's own")
      }).pipe(Effect.provide(Env))
  )
})
