import { type BreakerStore, CircuitBreaker } from "@circuitry/breaker"
import * as Edition from "@circuitry/core/Edition"
import { assert, describe, it, logTo, recordingSleeps, result, TestClock } from "@circuitry/testkit"
import { Clock, Deferred, Effect, Exit, Fiber, type Scope } from "effect"
import { failing, member, OPEN_FOR, tagOf, type Extras } from "./utils/members.js"
import { eventually, startServer, uniquePrefix } from "./utils/server.js"
import { openTimeOver, waitFor } from "./utils/wait.js"

// The breaker side of the hardening issue, on a redis-server of the test's own (paused, killed).

/** Two members of a fleet on a server of the test's own, opened by `a` and half-open for both. */
const halfOpenFleet = (tag: string, extras: Omit<Extras, "asked" | "released" | "store"> = {}) =>
  Effect.gen(function* () {
    const server = yield* startServer
    const prefix = uniquePrefix(tag)
    const asked = yield* Deferred.make<void>()
    const released = yield* Deferred.make<void>()
    let storeOfA: BreakerStore.BreakerStoreService | undefined
    const a = yield* member(server.url, prefix, "payments", {
      ...extras,
      asked,
      released,
      store: (store) => (storeOfA = store)
    })
    const b = yield* member(
      server.url,
      prefix,
      "payments",
      extras.halfOpen === undefined ? {} : { halfOpen: extras.halfOpen }
    )
    yield* result(CircuitBreaker.withBreaker(failing, a))
    assert.isTrue(yield* eventually(Effect.map(tagOf(b), (t) => t === "Open")))
    // the open time passes on the server's clock (real time), then on the members' TestClock
    yield* openTimeOver(server.admin, `${prefix}{payments}:circuit`)
    yield* TestClock.adjust(OPEN_FOR)
    assert.strictEqual(yield* tagOf(a), "HalfOpen")
    assert.strictEqual(yield* tagOf(b), "HalfOpen")
    const leases = Effect.promise(() => server.admin.keys(`${prefix}*:probe:*`))
    return {
      server,
      a,
      b,
      /**
       * A round trip on a's connection: commands on one connection are answered in order, so once
       * it answers, every request a sent before it has landed and been answered too.
       */
      behindA: Effect.scoped(Effect.flatMap(storeOfA!.connect("round-trip"), (circuit) => circuit.verdict.load)),
      /** Done once `a` handed its first lease request (release) to the store. */
      asked,
      released,
      leasesGone: eventually(
        Effect.map(leases, (keys) => keys.length === 0),
        3_000
      )
    }
  })

describe("RedisBreakerStore, breaker side", () => {
  it.scoped("a probe interrupted while its lease request is in flight gives the fleet's lease back", () =>
    Effect.gen(function* () {
      const { a, asked, b, behindA, leasesGone, server } = yield* halfOpenFleet("lease-interrupted")
      // a probes while Redis is paused: its lease request is written and waits for an answer
      yield* server.pause
      const probe = yield* Edition.forkChild(CircuitBreaker.withBreaker(Effect.never, a))
      yield* Deferred.await(asked) // the lease request is with the store
      yield* Fiber.interrupt(probe)
      // the request lands once Redis wakes up, and the lease it made must go back: waited for
      // behind the request (before it lands, there is no lease to see gone)
      yield* server.resume
      yield* behindA
      assert.isTrue(yield* leasesGone, "the interrupted probe's lease is still held")
      // the next call anywhere probes (no 60 s wait for the lease to run out)
      assert.strictEqual(yield* CircuitBreaker.withBreaker(Effect.succeed("probed"), b), "probed")
      assert.strictEqual(yield* tagOf(b), "Closed")
    })
  )

  it.scoped("a lease request that answers after the deadline (the probe went alone) gives its lease back", () =>
    Effect.gen(function* () {
      const { a, asked, leasesGone, server } = yield* halfOpenFleet("lease-late")
      yield* server.pause
      // a's probe waits 250 ms of the Clock for its lease, then probes alone and fails: Open again
      const probe = yield* Edition.forkChild(CircuitBreaker.withBreaker(failing, a))
      yield* Deferred.await(asked) // the lease request is with the store
      yield* TestClock.adjust("250 millis")
      assert.isTrue(Exit.isFailure(yield* Fiber.await(probe)))
      yield* server.resume
      assert.isTrue(yield* leasesGone, "the late lease is still held")
    })
  )

  it.scoped(
    "Redis paused for 1.1 s of the Clock under a lease request: the lease it took is released as Redis answers",
    () =>
      Effect.gen(function* () {
        // a lease of 60 s (the default probeLease, and a probe timeout longer still)
        const { a, asked, leasesGone, server } = yield* halfOpenFleet("lease-paused", {
          halfOpen: { probeTimeout: "1 minute" }
        })
        yield* server.pause
        const probe = yield* Edition.forkChild(CircuitBreaker.withBreaker(failing, a))
        yield* Deferred.await(asked)
        // 250 ms of the Clock: a probes alone and fails (Open again); at 1.1 s the store's deadline
        // (1 s) has passed for the request too, whose answer the store then drops
        yield* TestClock.adjust("250 millis")
        assert.isTrue(Exit.isFailure(yield* Fiber.await(probe)))
        yield* TestClock.adjust("850 millis")
        // Redis wakes up and runs the request: the lease it takes is no one's, and must go back
        yield* server.resume
        assert.isTrue(yield* leasesGone, "the lease taken after the deadline is still held")
        // a probes again once the fleet's open time is over (by the server's clock, real time),
        // well before the lease would have run out: each try waits out a's back-off on the Clock
        const start = Date.now()
        let clock = 0
        const admitted = yield* eventually(
          Effect.gen(function* () {
            yield* TestClock.adjust("250 millis")
            clock += 250
            return Exit.isSuccess(yield* Effect.exit(CircuitBreaker.withBreaker(Effect.succeed("probed"), a)))
          }),
          3_000,
          50
        )
        assert.isTrue(admitted, `not admitted after ${clock} ms of the Clock, ${Date.now() - start} ms of real time`)
        assert.isBelow(clock, 10_000)
        assert.strictEqual(yield* tagOf(a), "Closed")
        // and that probe's lease goes back too, once its verdict is in the store
        assert.isTrue(yield* leasesGone)
      })
  )

  it.scoped("a release sent while the connection is down goes once the connection is ready again", () => {
    const tornDown = Effect.runSync(Deferred.make<void>())
    const logger = logTo(({ messages }) => {
      const text = String(messages[0])
      if (text.includes("connection torn down")) Effect.runSync(Deferred.succeed(tornDown, undefined))
    })
    return Effect.gen(function* () {
      let another: Effect.Effect<CircuitBreaker.CircuitBreaker, unknown, Scope.Scope> | undefined
      // liveness 1 s: a server silent that long has its connection torn down (and reconnected)
      const { a, leasesGone, released, server } = yield* halfOpenFleet("lease-reconnect", {
        liveness: "1 second",
        halfOpen: { probeTimeout: "1 minute" },
        another: (make) => {
          another = make
        }
      })
      const other = yield* another!
      // a probes, and holds the fleet's lease while its call runs
      const gate = yield* Deferred.make<void>()
      const probe = yield* Edition.forkChild(
        CircuitBreaker.withBreaker(Effect.andThen(Deferred.await(gate), failing), a)
      )
      const keys = Effect.promise(() => server.admin.keys("*lease-reconnect*:probe:*"))
      assert.isTrue(yield* eventually(Effect.map(keys, (k) => k.length === 1)))
      yield* server.pause
      // a command goes unanswered (another breaker's trip): 1 s of the Clock later the connection is torn down
      yield* result(CircuitBreaker.withBreaker(failing, other))
      for (let i = 0; i < 8 && !(yield* Deferred.isDone(tornDown)); i++) yield* TestClock.adjust("250 millis")
      assert.isTrue(yield* Deferred.isDone(tornDown))
      // the probe fails; its lease goes back after waiting 1 s for the verdict, which cannot be sent
      yield* Deferred.succeed(gate, undefined)
      assert.isTrue(Exit.isFailure(yield* Fiber.await(probe)))
      for (let i = 0; i < 8 && !(yield* Deferred.isDone(released)); i++) yield* TestClock.adjust("250 millis")
      assert.isTrue(yield* Deferred.isDone(released))
      // the release failed at once (not connected to a server that answers); Redis wakes up
      yield* server.resume
      assert.isTrue(yield* leasesGone, "the release made while the connection was down was lost")
    }).pipe(Effect.provide(logger))
  })

  it.scoped("a lease lives the probe's timeout plus 2 s in Redis, not probeLease: what a lost release costs", () =>
    Effect.gen(function* () {
      // the default probeLease (60 s), and the default probe timeout: the open time, at least 1 s
      const { a, server } = yield* halfOpenFleet("lease-bound")
      const gate = yield* Deferred.make<void>()
      const probe = yield* Edition.forkChild(CircuitBreaker.withBreaker(Deferred.await(gate), a))
      const keys = Effect.promise(() => server.admin.keys("*lease-bound*:probe:*"))
      assert.isTrue(yield* eventually(Effect.map(keys, (k) => k.length === 1)))
      // a holder that never gives it back (gone, or its release lost) holds the fleet this long
      const ttl = yield* Effect.promise(async () =>
        server.admin.pttl((await server.admin.keys("*lease-bound*:probe:*"))[0]!)
      )
      assert.isAtMost(ttl, 3_000)
      assert.isAbove(ttl, 2_000)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(probe)
    })
  )

  it.scoped("closing a breaker's scope right after a trip still hands the verdict to the store", () =>
    Effect.gen(function* () {
      const server = yield* startServer
      const prefix = uniquePrefix("flush")
      const observer = yield* member(server.url, prefix, "payments")
      yield* Effect.scoped(
        Effect.gen(function* () {
          const a = yield* member(server.url, prefix, "payments")
          yield* result(CircuitBreaker.withBreaker(failing, a))
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

  it.scoped(
    "an unreachable store is logged once per outage and once on recovery, and shows in the snapshot",
    () =>
      Effect.gen(function* () {
        const logs: Array<{ level: string; message: string; breaker: unknown }> = []
        const logger = logTo(({ annotations, level, messages }) => {
          const text = String(messages[0])
          if (text.includes("shared store")) logs.push({ level, message: text, breaker: annotations.breaker })
        })
        yield* Effect.gen(function* () {
          const server = yield* startServer
          const prefix = uniquePrefix("outage-log")
          // the breaker's sleeps, its background writer's included (its store's are not recorded)
          const sleeps = yield* recordingSleeps
          const a = yield* member(server.url, prefix, "payments", { breakerClock: sleeps.clock })
          assert.deepStrictEqual((yield* a.snapshot).store, { connected: true })
          yield* server.kill
          // failures the background writer cannot send: one warning, however often it tries
          for (let i = 0; i < 3; i++) {
            yield* result(CircuitBreaker.withBreaker(failing, a))
            yield* a.reset
          }
          // the writer tries again each second of the Clock: each time, it has failed and waits the
          // next (the breaker's only sleep of a second from now: its other timers are of 5 s, 250 ms)
          const triedAgain = Effect.flatMap(Clock.currentTimeMillis, (now) =>
            waitFor(
              `the background writer to fail and wait until ${now + 1_000} to try again`,
              Effect.map(sleeps.pending, (ends) => ends.includes(now + 1_000))
            )
          )
          yield* triedAgain
          for (let i = 0; i < 5; i++) {
            yield* TestClock.adjust("1 second")
            yield* triedAgain
          }
          assert.deepStrictEqual((yield* a.snapshot).store, { connected: false })
          assert.strictEqual(logs.length, 1, JSON.stringify(logs))
          assert.strictEqual(logs[0].level, "Warn")
          assert.deepStrictEqual(logs[0].breaker, "payments")
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
        }).pipe(Effect.provide(logger))
      }),
    20_000
  )
})
