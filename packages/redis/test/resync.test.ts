/**
 * The resync after a reconnect must not run ahead of the subscription: a verdict published after
 * the resync read the store and before the server took the SUBSCRIBE again was heard by nobody,
 * and the member kept its old state until the next verdict. A proxy holds the SUBSCRIBE back,
 * which widens that gap at will.
 */
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { RedisBreakerStore } from "@circuitry/redis"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Redis } from "ioredis"
import { tcpProxy } from "../../../test-support/proxy.js"
import { cleanup, eventually, realSleep, uniquePrefix } from "./utils/server.js"

const URL = "redis://127.0.0.1:6379"

const member = (url: string, prefix: string) =>
  Effect.gen(function* () {
    const store = yield* Layer.build(RedisBreakerStore.layer({ url, prefix }))
    return yield* CircuitBreaker.make({
      name: "payments",
      policy: Policy.consecutiveFailures(1),
      openFor: "1 minute"
    }).pipe(Effect.provide(store))
  })

const tagOf = (breaker: CircuitBreaker.CircuitBreaker) => Effect.map(breaker.state, (s) => s._tag)

describe("RedisBreakerStore: the resync waits for the subscription", () => {
  it.scoped(
    "a verdict published while the SUBSCRIBE is on its way is read once the subscription is in place",
    () =>
      Effect.gen(function* () {
        const prefix = uniquePrefix("resync")
        const admin = yield* Effect.acquireRelease(
          Effect.sync(() => new Redis(URL)),
          (client) => Effect.promise(() => cleanup(client, prefix).finally(() => client.disconnect()))
        )
        // holds back the SUBSCRIBE chunk of a connection, and every later one of it
        const proxy = yield* tcpProxy(6379, {
          marks: (chunk) => chunk.toString("latin1").toLowerCase().includes("subscribe")
        })
        const a = yield* member(`redis://127.0.0.1:${proxy.port}`, prefix)
        // a's subscriber connection is cut; it reconnects, and its ready starts the resync, but
        // the server does not take its SUBSCRIBE yet
        yield* proxy.hold
        yield* proxy.cutMarked
        assert.isTrue(
          yield* eventually(
            Effect.map(proxy.held, (n) => n >= 1),
            5_000,
            10
          )
        )
        yield* realSleep(300) // a resync that does not wait for the subscription has read the store by now
        const b = yield* member(URL, prefix)
        yield* Effect.either(CircuitBreaker.withBreaker(Effect.fail("boom"), b))
        assert.strictEqual(yield* tagOf(b), "Open")
        const stored = Effect.promise(() => admin.hget(`${prefix}{payments}:circuit`, "state"))
        assert.isTrue(
          yield* eventually(
            Effect.map(stored, (state) => state === "Open"),
            5_000,
            10
          )
        )
        // published while a was not subscribed: a has not heard it
        yield* realSleep(100)
        assert.strictEqual(yield* tagOf(a), "Closed")
        yield* proxy.release
        assert.isTrue(
          yield* eventually(
            Effect.map(tagOf(a), (tag) => tag === "Open"),
            5_000,
            10
          ),
          `a is ${yield* tagOf(a)}`
        )
      }),
    20_000
  )
})
