/**
 * The resync after a reconnect must not run ahead of the subscription: a verdict published after
 * the resync read the store and before the server took the SUBSCRIBE again was heard by nobody,
 * and the member kept its old state until the next verdict. A proxy holds the SUBSCRIBE back,
 * which widens that gap at will.
 */
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { RedisBreakerStore } from "@circuitry/redis"
import { assert, describe, it, result } from "@circuitry/testkit"
import { Effect, Layer } from "effect"
import { Redis } from "ioredis"
import { tcpProxy } from "../../../test-support/proxy.js"
import { cleanup, eventually, uniquePrefix } from "./utils/server.js"
import { subscribers, waitFor } from "./utils/wait.js"

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
        // Holds back the SUBSCRIBE chunk of a connection, and every later one of it. Counts what a's
        // resync can do first: ask for the subscription (SUBSCRIBE) or read the circuit (its key).
        let subscribes = 0
        let reads = 0
        const proxy = yield* tcpProxy(6379, {
          marks: (chunk) => {
            const text = chunk.toString("latin1")
            subscribes += text.toLowerCase().split("subscribe").length - 1
            if (text.includes(`${prefix}{payments}:circuit`)) reads++
            return text.toLowerCase().includes("subscribe")
          }
        })
        const a = yield* member(`redis://127.0.0.1:${proxy.port}`, prefix)
        // b is made now: while a's SUBSCRIBE is held, only b's trip has to land before a's resync
        // stops waiting for the subscription (5 s, real time), however slow the machine
        const b = yield* member(URL, prefix)
        // a's subscriber connection is cut; it reconnects, and its ready starts the resync, but
        // the server does not take its SUBSCRIBE yet
        yield* proxy.hold
        const [subscribesBefore, readsBefore] = [subscribes, reads]
        yield* proxy.cutMarked
        assert.isTrue(
          yield* eventually(
            Effect.map(proxy.held, (n) => n >= 1),
            5_000,
            10
          )
        )
        // The resync on that ready has begun: it asked for the subscription itself (beside ioredis's
        // own resubscribe), or read the store; a resync that does not wait would have read it by now.
        yield* waitFor(
          "a's resync to subscribe or read the store",
          Effect.sync(() => subscribes >= subscribesBefore + 2 || reads > readsBefore)
        )
        yield* result(CircuitBreaker.withBreaker(Effect.fail("boom"), b))
        assert.strictEqual(yield* tagOf(b), "Open")
        const stored = Effect.promise(() => admin.hget(`${prefix}{payments}:circuit`, "state"))
        assert.isTrue(
          yield* eventually(
            Effect.map(stored, (state) => state === "Open"),
            5_000,
            10
          )
        )
        // published while a was not subscribed (only b's subscriber is): a has not heard it
        assert.strictEqual(yield* subscribers([admin], `${prefix}verdicts`), 1)
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
