import { BreakerStore, CircuitBreaker, Policy } from "@circuitry/breaker"
import { RedisBreakerStore } from "@circuitry/redis"
import { assert, describe, it } from "@effect/vitest"
import {
  Clock,
  Context,
  Deferred,
  type Duration,
  Effect,
  Exit,
  Fiber,
  FiberId,
  HashMap,
  Layer,
  Logger,
  Option,
  type Scope,
  TestClock
} from "effect"
import { eventually, startServer, uniquePrefix } from "./utils/server.js"
import { clockWaitsUntil, openTimeOver } from "./utils/wait.js"

// The breaker side of the hardening issue, on a redis-server of the test's own (paused, killed).

/**
 * Short: the store refuses a probe lease while the stored verdict is open by the server's clock
 * (real time), so the open time must pass in real time too before the members probe.
 */
const OPEN_FOR = 300

/** What a test may give a member: its half-open options, its store's liveness, and events to wait on. */
interface Extras {
  readonly halfOpen?: NonNullable<CircuitBreaker.Options["halfOpen"]>
  readonly liveness?: Duration.DurationInput
  /** Done as the member's first lease request is handed to the store (in the fiber that sends it). */
  readonly asked?: Deferred.Deferred<void>
  /** Done as the member's first lease release is handed to the store. */
  readonly released?: Deferred.Deferred<void>
  /** Handed a way to make another breaker on the member's store. */
  readonly another?: (make: Effect.Effect<CircuitBreaker.CircuitBreaker, unknown, Scope.Scope>) => void
}

const done = (event: Deferred.Deferred<void> | undefined) =>
  event === undefined ? Effect.void : Deferred.succeed(event, undefined)

/** A member with a store of its own. */
const member = (url: string, prefix: string, name: string, extras: Extras = {}) =>
  Effect.gen(function* () {
    const layer = RedisBreakerStore.layer({ url, prefix, ...(extras.liveness ? { liveness: extras.liveness } : {}) })
    const store = Context.get(yield* Layer.build(layer), BreakerStore.BreakerStore)
    const watched = BreakerStore.BreakerStore.of({
      connect: (n) =>
        Effect.map(store.connect(n), (circuit) => ({
          ...circuit,
          acquireProbe: (lease: Parameters<BreakerStore.SharedCircuit["acquireProbe"]>[0]) =>
            Effect.zipRight(done(extras.asked), circuit.acquireProbe(lease)),
          releaseProbe: (lease: string) => Effect.zipRight(done(extras.released), circuit.releaseProbe(lease))
        }))
    })
    const make = (n: string) =>
      CircuitBreaker.make({
        name: n,
        policy: Policy.consecutiveFailures(1),
        openFor: OPEN_FOR,
        halfOpen: extras.halfOpen
      }).pipe(Effect.provideService(BreakerStore.BreakerStore, watched))
    // another breaker on the same store (and so the same connection), for a test that needs one
    extras.another?.(make("another"))
    return yield* make(name)
  })

const tagOf = (breaker: CircuitBreaker.CircuitBreaker) => Effect.map(breaker.state, (s) => s._tag)
const failing = Effect.fail("boom" as const)

/** Two members of a fleet on a server of the test's own, opened by `a` and half-open for both. */
const halfOpenFleet = (tag: string, extras: Omit<Extras, "asked" | "released"> = {}) =>
  Effect.gen(function* () {
    const server = yield* startServer
    const prefix = uniquePrefix(tag)
    const asked = yield* Deferred.make<void>()
    const released = yield* Deferred.make<void>()
    const a = yield* member(server.url, prefix, "payments", { ...extras, asked, released })
    const b = yield* member(
      server.url,
      prefix,
      "payments",
      extras.halfOpen === undefined ? {} : { halfOpen: extras.halfOpen }
    )
    yield* Effect.either(CircuitBreaker.withBreaker(failing, a))
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
      const { a, asked, b, leasesGone, server } = yield* halfOpenFleet("lease-interrupted")
      // a probes while Redis is paused: its lease request is written and waits for an answer
      yield* server.pause
      const probe = yield* Effect.fork(CircuitBreaker.withBreaker(Effect.never, a))
      yield* Deferred.await(asked) // the lease request is with the store
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
      const { a, asked, leasesGone, server } = yield* halfOpenFleet("lease-late")
      yield* server.pause
      // a's probe waits 250 ms of the Clock for its lease, then probes alone and fails: Open again
      const probe = yield* Effect.fork(CircuitBreaker.withBreaker(failing, a))
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
        const probe = yield* Effect.fork(CircuitBreaker.withBreaker(failing, a))
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
    const tornDown = Deferred.unsafeMake<void>(FiberId.none)
    const logger = Logger.make(({ message }) => {
      const text = Array.isArray(message) ? String(message[0]) : String(message)
      if (text.includes("connection torn down")) Deferred.unsafeDone(tornDown, Exit.void)
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
      const probe = yield* Effect.fork(CircuitBreaker.withBreaker(Effect.zipRight(Deferred.await(gate), failing), a))
      const keys = Effect.promise(() => server.admin.keys("*lease-reconnect*:probe:*"))
      assert.isTrue(yield* eventually(Effect.map(keys, (k) => k.length === 1)))
      yield* server.pause
      // a command goes unanswered (another breaker's trip): 1 s of the Clock later the connection is torn down
      yield* Effect.either(CircuitBreaker.withBreaker(failing, other))
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
    }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
  })

  it.scoped("a lease lives the probe's timeout plus 2 s in Redis, not probeLease: what a lost release costs", () =>
    Effect.gen(function* () {
      // the default probeLease (60 s), and the default probe timeout: the open time, at least 1 s
      const { a, server } = yield* halfOpenFleet("lease-bound")
      const gate = yield* Deferred.make<void>()
      const probe = yield* Effect.fork(CircuitBreaker.withBreaker(Deferred.await(gate), a))
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
