// A TypeScript consumer, typechecked under moduleResolution node16 (as ESM) and bundler, with
// strict and exactOptionalPropertyTypes: what an app writes against the published .d.ts files.
import { BreakerRegistry, CircuitBreaker, Policy } from "@circuitry/breaker"
import * as CircuitBreakerModule from "@circuitry/breaker/CircuitBreaker"
import { Cache, MemoryStore } from "@circuitry/cache"
import { BreakerHttpClient } from "@circuitry/platform"
import { RedisStore } from "@circuitry/redis"
import { SqlBreakerStore } from "@circuitry/sql"
import { NodeHttpClient } from "@effect/platform-node"
import { Context, Effect, Layer, Option, Schedule } from "effect"

class Payments extends Context.Tag("Payments")<Payments, CircuitBreaker.CircuitBreaker>() {}

const PaymentsLive: Layer.Layer<Payments, CircuitBreaker.InvalidBreakerOptions> = CircuitBreaker.layer(Payments, {
  name: "payments",
  policy: Policy.failureRate({ threshold: 0.5, minimumCalls: 10, window: Policy.countWindow(20) }),
  openFor: Schedule.exponential("1 second"),
  halfOpen: { permits: 1, successesToClose: 2 }
})

const charge: Effect.Effect<string, string | CircuitBreaker.BreakerOpenError, Payments> = Effect.fail("declined").pipe(
  CircuitBreaker.withBreaker(Payments)
)

const handled: Effect.Effect<string, string> = charge.pipe(
  Effect.catchTag("BreakerOpenError", (e) => Effect.succeed(`retry in ${e.retryAfterMillis} ms (${e.state})`)),
  Effect.provide(PaymentsLive),
  Effect.catchTag("InvalidBreakerOptions", (e) => Effect.succeed(e.message))
)

// The root namespace and the module subpath are the same module.
const sameModule: typeof CircuitBreaker.make = CircuitBreakerModule.make

const cached = Effect.gen(function* () {
  const breaker = yield* CircuitBreaker.make({ name: "cache" })
  const store = Cache.guard(yield* MemoryStore.make({ capacity: 100 }), breaker)
  const value: Option.Option<string> = yield* store.get("k")
  return value
})

const redis = RedisStore.make({ url: "redis://127.0.0.1:6379", prefix: "app:" })
const durable = CircuitBreaker.make({ name: "email" }).pipe(
  Effect.provide(SqlBreakerStore.layerSqlite({ filename: "breakers.db" }))
)
const http = BreakerHttpClient.make().pipe(Effect.provide(Layer.merge(NodeHttpClient.layer, BreakerRegistry.layer())))

// @ts-expect-error internal modules are not exported
const internal = import("@circuitry/breaker/internal/machine")

export const all = [handled, sameModule, cached, redis, durable, http, internal]
