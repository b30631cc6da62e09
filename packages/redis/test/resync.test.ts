/**
 * The resync after a reconnect must not run ahead of the subscription: a verdict published after
 * the resync read the store and before the server took the SUBSCRIBE again was heard by nobody,
 * and the member kept its old state until the next verdict. A proxy holds the SUBSCRIBE back,
 * which widens that gap at will. A resync that gave up waiting (5 s, real time) read the store
 * before the subscription was in place, so it reads it again once it is.
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

/**
 * Member a, through a proxy that holds its subscriber's SUBSCRIBE back, and member b, direct. a's
 * subscriber connection is cut; its ready starts the resync, but the server does not take the
 * SUBSCRIBE. `beforeTrip` runs then; b trips and stores Open, which a cannot hear; the SUBSCRIBE is
 * let through; a must then be Open.
 */
const verdictWhileSubscribing = (
  beforeTrip: (resync: {
    readonly begun: Effect.Effect<boolean>
    readonly read: Effect.Effect<boolean>
  }) => Effect.Effect<void>
) =>
  Effect.gen(function* () {
    const prefix = uniquePrefix("resync")
    const admin = yield* Effect.acquireRelease(
      Effect.sync(() => new Redis(URL)),
      (client) => Effect.promise(() => cleanup(client, prefix).finally(() => client.disconnect()))
    )
    // Holds back the SUBSCRIBE chunk of a connection, and every later one of it. Counts what a's
    // resync can do: ask for the subscription (SUBSCRIBE) or read the circuit (its key).
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
    const b = yield* member(URL, prefix)
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
    yield* beforeTrip({
      // it asked for the subscription itself (beside ioredis's own resubscribe), or read the store
      begun: Effect.sync(() => subscribes >= subscribesBefore + 2 || reads > readsBefore),
      read: Effect.sync(() => reads > readsBefore)
    })
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
  })

describe("RedisBreakerStore: the resync waits for the subscription", () => {
  it.scoped(
    "a verdict published while the SUBSCRIBE is on its way is read once the subscription is in place",
    () =>
      // b trips as soon as a's resync has begun: a resync that does not wait would have read the
      // store by then, and missed the verdict
      verdictWhileSubscribing(({ begun }) => waitFor("a's resync to subscribe or read the store", begun)),
    20_000
  )

  it.scoped(
    "a resync that gave up waiting for the subscription reads the store again once it is in place",
    () =>
      // b trips only after a's resync stopped waiting (5 s, real time) and read the store: that read
      // saw Closed, and only a read after the SUBSCRIBE is taken can see b's verdict. (Before, this
      // was the loaded machine's flake in the test above: a at Closed for good.)
      verdictWhileSubscribing(({ read }) => waitFor("a's resync to give up waiting and read the store", read, 30_000)),
    60_000
  )
})
