import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { RedisBreakerStore } from "@circuitry/redis"
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Exit, Fiber, HashMap, Layer, Logger, Option, TestClock } from "effect"
import { tcpProxy } from "../../../test-support/proxy.js"
import { eventually, startServer, uniquePrefix } from "./utils/server.js"
import { clockWaitsUntil, openTimeOver, waitFor } from "./utils/wait.js"

// The breaker side of the hardening issue, on a redis-server of the test's own (paused, killed).

/**
 * Short: the store refuses a probe lease while the stored verdict is open by the server's clock
 * (real time), so the open time must pass in real time too before the members probe.
 */
const OPEN_FOR = 300

const member = (url: string, prefix: string, name: string) =>
  Effect.gen(function* () {
    const store = yield* Layer.build(RedisBreakerStore.layer({ url, prefix }))
    return yield* CircuitBreaker.make({ name, policy: Policy.consecutiveFailures(1), openFor: OPEN_FOR }).pipe(
      Effect.provide(store)
    )
  })

const tagOf = (breaker: CircuitBreaker.CircuitBreaker) => Effect.map(breaker.state, (s) => s._tag)
const failing = Effect.fail("boom" as const)

/**
 * Two members of a fleet on a server of the test's own, opened by `a` and half-open for both. `a`
 * reaches the server through a proxy that counts its lease requests (chunks naming a probe slot).
 */
const halfOpenFleet = (tag: string) =>
  Effect.gen(function* () {
    const server = yield* startServer
    const prefix = uniquePrefix(tag)
    let leaseRequests = 0
    const proxy = yield* tcpProxy(server.port, {
      marks: (chunk) => {
        if (chunk.includes("}:probe:")) leaseRequests++
        return false
      }
    })
    const a = yield* member(`redis://127.0.0.1:${proxy.port}`, prefix, "payments")
    const b = yield* member(server.url, prefix, "payments")
    yield* Effect.either(CircuitBreaker.withBreaker(failing, a))
    assert.isTrue(yield* eventually(Effect.map(tagOf(b), (t) => t === "Open")))
    // the open time passes on the server's clock (real time), then on the members' TestClock
    yield* openTimeOver(server.admin, `${prefix}{payments}:circuit`)
    yield* TestClock.adjust(OPEN_FOR)
    assert.strictEqual(yield* tagOf(a), "HalfOpen")
    assert.strictEqual(yield* tagOf(b), "HalfOpen")
    const leases = Effect.promise(() => server.admin.keys(`${prefix}*:probe:*`))
    const requests = leaseRequests
    return {
      server,
      a,
      b,
      /** Waits until `a` has sent a lease request since the fleet half-opened (it left the process). */
      leaseRequested: waitFor(
        "a's lease request to leave for the server",
        Effect.sync(() => leaseRequests > requests)
      ),
      leasesGone: eventually(
        Effect.map(leases, (keys) => keys.length === 0),
        3_000
      )
    }
  })

describe("RedisBreakerStore, breaker side", () => {
  it.scoped("a probe interrupted while its lease request is in flight gives the fleet's lease back", () =>
    Effect.gen(function* () {
      const { a, b, leaseRequested, leasesGone, server } = yield* halfOpenFleet("lease-interrupted")
      // a probes while Redis is paused: its lease request is written and waits for an answer
      yield* server.pause
      const probe = yield* Effect.fork(CircuitBreaker.withBreaker(Effect.never, a))
      yield* leaseRequested
      yield* Fiber.interrupt(probe)
      // the request lands once Redis wakes up, and the lease it made must go back
      yield* server.resume
      assert.isTrue(yield* leasesGone, "the interrupted probe's lease is still held")
      // the next call anywhere probes (no 60 s wait for the lease to run out)
      assert.strictEqual(yield* CircuitBreaker.withBreaker(Effect.succeed("probed"), b), "probed")
      assert.strictEqual(yield* tagOf(b), "Closed")
    })
  )

  it.scoped("a lease request that answers after the deadline (the probe went alone) gives its lease back", () =>
    Effect.gen(function* () {
      const { a, leaseRequested, leasesGone, server } = yield* halfOpenFleet("lease-late")
      yield* server.pause
      // a's probe waits 250 ms of the Clock for its lease (that wait starts before the request is
      // sent), then probes alone and fails: Open again
      const probe = yield* Effect.fork(CircuitBreaker.withBreaker(failing, a))
      yield* leaseRequested
      yield* TestClock.adjust("250 millis")
      assert.isTrue(Exit.isFailure(yield* Fiber.await(probe)))
      yield* server.resume
      assert.isTrue(yield* leasesGone, "the late lease is still held")
    })
  )

  it.scoped(
    "an unreachable store is logged once per outage and once on recovery, and shows in the snapshot",
    () =>
      Effect.gen(function* () {
        const logs: Array<{ level: string; message: string; breaker: unknown }> = []
        const logger = Logger.make(({ annotations, logLevel, message }) => {
          const text = Array.isArray(message) ? String(message[0]) : String(message)
          if (text.includes("shared store")) {
            logs.push({ level: logLevel.label, message: text, breaker: HashMap.get(annotations, "breaker") })
          }
        })
        yield* Effect.gen(function* () {
          const server = yield* startServer
          const prefix = uniquePrefix("outage-log")
          const a = yield* member(server.url, prefix, "payments")
          assert.deepStrictEqual((yield* a.snapshot).store, { connected: true })
          yield* server.kill
          // failures the background writer cannot send: one warning, however often it tries
          for (let i = 0; i < 3; i++) {
            yield* Effect.either(CircuitBreaker.withBreaker(failing, a))
            yield* a.reset
          }
          // the writer tries again each second of the Clock: each time, it has failed and waits the next
          const triedAgain = Effect.flatMap(Clock.currentTimeMillis, (now) =>
            clockWaitsUntil(now + 1_000, "the background writer to fail and wait a second to try again")
          )
          yield* triedAgain
          for (let i = 0; i < 5; i++) {
            yield* TestClock.adjust("1 second")
            yield* triedAgain
          }
          assert.deepStrictEqual((yield* a.snapshot).store, { connected: false })
          assert.strictEqual(logs.length, 1, JSON.stringify(logs))
          assert.strictEqual(logs[0].level, "WARN")
          assert.deepStrictEqual(logs[0].breaker, Option.some("payments"))
          assert.include(logs[0].message, `circuit "payments": shared store (redis) unreachable`)
          yield* server.restart
          assert.isTrue(
            yield* eventually(
              Effect.gen(function* () {
                yield* TestClock.adjust("1 second")
                return (yield* a.snapshot).store?.connected === true
              }),
              10_000,
              50
            )
          )
          assert.strictEqual(logs.length, 2, JSON.stringify(logs))
          assert.include(logs[1].message, `circuit "payments": shared store answers again`)
        }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
      }),
    20_000
  )

  it.scoped("closing a breaker's scope right after a trip still hands the verdict to the store", () =>
    Effect.gen(function* () {
      const server = yield* startServer
      const prefix = uniquePrefix("flush")
      const observer = yield* member(server.url, prefix, "payments")
      yield* Effect.scoped(
        Effect.gen(function* () {
          const a = yield* member(server.url, prefix, "payments")
          yield* Effect.either(CircuitBreaker.withBreaker(failing, a))
          assert.strictEqual(yield* tagOf(a), "Open")
          // the scope closes at once: the drain had no turn yet
        })
      )
      // the verdict reached Redis before the scope finished closing
      const stored = yield* Effect.promise(() => server.admin.keys(`${prefix}*`))
      assert.isTrue(stored.length > 0)
      assert.isTrue(yield* eventually(Effect.map(tagOf(observer), (t) => t === "Open")))
    })
  )
})
