/** What the BreakerHttpServer tests share: the services, a way to open a breaker, a response read whole. */
import { assert } from "@circuitry/testkit"
import { clientLayer, type HttpClientResponse } from "#test/http"
import { BreakerRegistry, Policy } from "@circuitry/breaker"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

export const Env = Layer.mergeAll(
  clientLayer,
  BreakerRegistry.layer({ defaults: { policy: Policy.consecutiveFailures(3), openFor: "30 seconds" } })
)

/** Opens the breaker `name` at the Clock's now with three failures. */
export const open = (name: string) =>
  Effect.gen(function* () {
    const breaker = yield* Effect.flatMap(BreakerRegistry.BreakerRegistry, (registry) => registry.get(name))
    for (let i = 0; i < 3; i++) yield* Effect.ignore(breaker.execute(Effect.fail("down")))
    assert.strictEqual((yield* breaker.state)._tag, "Open")
    return breaker
  })

export const read = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.map(response.text, (text) => ({
    status: response.status,
    contentType: response.headers["content-type"],
    retryAfter: response.headers["retry-after"],
    cacheControl: response.headers["cache-control"],
    body: text
  }))

export const openProblem = (openUntil: string, seconds: number) =>
  JSON.stringify({
    type: "about:blank",
    title: "Service Unavailable",
    status: 503,
    detail: `Circuit "payments" is open until ${openUntil}; retry after ${seconds} s.`,
    circuit: "payments",
    state: "Open",
    openUntil
  })
