/**
 * RedisBreakerStore at the edges: the store's own options, its connections' lifetime, several
 * members of one name on one store, what it does with verdicts it did not write, and the resync
 * of names without a verdict, and a call held to its deadline (and a silent connection to its
 * liveness) on the TestClock.
 */
import { BreakerStore, CircuitBreaker, Policy } from "@circuitry/breaker"
import * as Edition from "@circuitry/core/Edition"
import { RedisBreakerStore } from "@circuitry/redis"
import {
  assert,
  describe,
  it,
  logTo,
  poll,
  recordingSleeps,
  Result,
  result,
  TestClock,
  withClock,
  yieldNow
} from "@circuitry/testkit"
import { Clock, Effect, Exit, Fiber, Layer, Option, Scope, Stream } from "effect"
import { Redis } from "ioredis"
import { storeOn } from "./utils/members.js"
import { failureOf, successOf } from "./utils/outcome.js"
import { cleanup, eventually, startServer, uniquePrefix } from "./utils/server.js"
import { subscribed, waitFor } from "./utils/wait.js"

const URL = "redis://127.0.0.1:6379"

const scratch = Effect.gen(function* () {
  const prefix = uniquePrefix("edges")
  const admin = yield* Effect.acquireRelease(
    Effect.sync(() => new Redis(URL)),
    (client) => Effect.promise(() => cleanup(client, prefix).finally(() => client.disconnect()))
  )
  return { prefix, admin }
})

const collect = (circuit: BreakerStore.SharedCircuit) =>
  Effect.gen(function* () {
    const told: Array<BreakerStore.Verdict> = []
    yield* Effect.forkScoped(Stream.runForEach(circuit.verdict.watch, (v) => Effect.sync(() => void told.push(v))))
    yield* yieldNow
    return told
  })

describe("RedisBreakerStore: options", () => {
  it.scoped("every valid deadline builds, the deprecated timeout too, and the deadline is the one used", () =>
    Effect.gen(function* () {
      for (const options of [
        { deadline: "1 millis" },
        { deadline: 250 },
        { deadline: "2 seconds", liveness: "2 seconds" },
        { timeout: "300 millis" },
        { timeout: 1 },
        { liveness: "10 seconds" },
        {}
      ] satisfies Array<RedisBreakerStore.Options>) {
        const built = yield* result(Effect.scoped(Layer.build(RedisBreakerStore.layer({ url: URL, ...options }))))
        assert.isTrue(Result.isSuccess(built), JSON.stringify(options))
      }
    })
  )

  it.scoped("bad options are one typed error that names the option and the rule", () =>
    Effect.gen(function* () {
      for (const [options, message] of [
        [{ deadline: 0 }, "deadline must be a finite duration > 0, got 0"],
        [{ timeout: "soon" }, `timeout must be a finite duration > 0, got "soon"`],
        [{ liveness: -1 }, "liveness must be a finite duration > 0, got -1"],
        [{ deadline: "2 seconds", liveness: "1 second" }, "liveness (1000 ms) must be at least the deadline (2000 ms)"],
        [{ deadline: "1 second", timeout: "1 second" }, "give only deadline"],
        [{ url: "localhost:6379" }, `url must be a redis:// or rediss:// URL, got "localhost:6379"`],
        [{ prefix: 1 }, "prefix must be a string, got 1"]
      ] as const) {
        const outcome = yield* result(Effect.scoped(Layer.build(RedisBreakerStore.layer(options as never))))
        assert.isTrue(Result.isFailure(outcome), JSON.stringify(options))
        const error = failureOf(outcome)
        if (error !== undefined) {
          assert.strictEqual(error._tag, "InvalidRedisOptions")
          assert.include(error.message, message)
        }
      }
    })
  )
})

describe("RedisBreakerStore: connections, members and what it did not write", () => {
  it.scoped("closing the scope closes both connections", () =>
    Effect.gen(function* () {
      const server = yield* startServer
      const before = yield* server.info("connected_clients")
      yield* Effect.scoped(
        Effect.gen(function* () {
          const store = yield* storeOn({ url: server.url })
          yield* (yield* store.connect("c")).verdict.load
          // Both are made at once; startup waits at most a second for them (longer on a loaded machine).
          assert.isTrue(yield* eventually(Effect.map(server.info("connected_clients"), (n) => n === before + 2)))
        })
      )
      assert.isTrue(yield* eventually(Effect.map(server.info("connected_clients"), (n) => n === before)))
    })
  )

  it.scoped("two breakers of one name on one store share the verdict; one leaving leaves the other told", () =>
    Effect.gen(function* () {
      const { prefix } = yield* scratch
      const store = yield* Layer.build(RedisBreakerStore.layer({ url: URL, prefix }))
      const make = CircuitBreaker.make({
        name: "p",
        policy: Policy.consecutiveFailures(1),
        openFor: "10 seconds"
      }).pipe(Effect.provide(store))
      const a = yield* make
      const scope = yield* Scope.make()
      yield* Effect.provideService(make, Scope.Scope, scope) // a breaker that leaves again
      const b = yield* make
      yield* Scope.close(scope, Exit.void)
      yield* result(CircuitBreaker.withBreaker(Effect.fail("boom"), a))
      assert.isTrue(yield* eventually(Effect.map(b.state, (s) => s._tag === "Open")))
      yield* b.reset
      assert.isTrue(yield* eventually(Effect.map(a.state, (s) => s._tag === "Closed")))
    })
  )

  it.scoped("a malformed publication is ignored; the next good one is delivered", () =>
    Effect.gen(function* () {
      const { admin, prefix } = yield* scratch
      const store = yield* storeOn({ url: URL, prefix })
      const circuit = yield* store.connect("m")
      const told = yield* collect(circuit)
      const channel = `${prefix}verdicts`
      yield* subscribed([admin], channel, 1)
      for (const message of [
        "not json",
        "null",
        "42",
        JSON.stringify({ name: "m", state: "HalfOpen", until: 0, at: 1, origin: "x", now: 1 }),
        JSON.stringify({ name: "m", state: "Open", until: "soon", at: 1, origin: "x", now: 1 }),
        JSON.stringify({ name: "m", state: "Open", until: 1, at: 1, origin: 7, now: 1 }),
        JSON.stringify({ name: "m", state: "Open", until: 1, at: 1, origin: "x" }), // no server time
        JSON.stringify({ name: "m", state: "Open", until: 1, at: 1, origin: "x", now: "later" }),
        JSON.stringify({ name: 7, state: "Open", until: 1, at: 1, origin: "x", now: 1 }),
        JSON.stringify({ name: "other", state: "Open", until: 1, at: 1, origin: "x", now: 1 })
      ]) {
        yield* Effect.promise(() => admin.publish(channel, message))
      }
      yield* Effect.promise(() =>
        admin.publish(
          `${prefix}elsewhere`,
          JSON.stringify({ name: "m", state: "Open", until: 9, at: 9, origin: "x", now: 9 })
        )
      )
      const good = { name: "m", state: "Open", until: "3005", at: "5", origin: "y", by: "ops", now: "1005" }
      yield* Effect.promise(() => admin.publish(channel, JSON.stringify(good)))
      // the good one came last: once it is told, every publication before it has been read
      yield* waitFor(
        "the good publication to be told",
        Effect.sync(() => told.some((v) => v.origin === "y"))
      )
      // told as durations from the server's now: 2 s left, made 1 s ago
      assert.deepStrictEqual(told, [
        { state: "Open", remainingMillis: 2_000, ageMillis: 1_000, origin: "y", by: "ops" }
      ])
    })
  )

  it.scoped("a stored verdict this store did not write fails load with a typed error", () =>
    Effect.gen(function* () {
      const { admin, prefix } = yield* scratch
      const store = yield* storeOn({ url: URL, prefix })
      const circuit = yield* store.connect("bad")
      yield* Effect.promise(() =>
        admin.hset(`${prefix}{bad}:circuit`, "state", "OPEN!", "until", "1", "at", "1", "origin", "x")
      )
      const outcome = yield* result(circuit.verdict.load)
      assert.isTrue(Result.isFailure(outcome))
      const error = failureOf(outcome)
      if (error !== undefined) {
        assert.strictEqual(error.operation, "load")
        assert.include(error.message, `circuit "bad": the stored verdict is not one this store wrote`)
      }
      // counts alone (no state) are no verdict, not a malformed one
      yield* circuit.counts!.recordFailures(1, 1)
      const fresh = yield* store.connect("counted")
      yield* fresh.counts!.recordFailures(2, 3)
      assert.deepStrictEqual(yield* fresh.verdict.load, Option.none())
      assert.deepStrictEqual(yield* fresh.counts!.read, { consecutiveFailures: 2, lastFailureAt: 3 })
    })
  )

  it.scoped("an unreadable stored verdict is logged once while it stays the same, and the next save replaces it", () =>
    Effect.gen(function* () {
      const { admin, prefix } = yield* scratch
      const store = yield* storeOn({ url: URL, prefix })
      const circuit = yield* store.connect("spoilt")
      const key = `${prefix}{spoilt}:circuit`
      const warnings: Array<string> = []
      const logger = logTo(({ level, messages }) => {
        if (level === "Warn") warnings.push(messages.join(" "))
      })
      const load = result(circuit.verdict.load).pipe(Effect.provide(logger))
      yield* Effect.promise(() => admin.hset(key, "state", "Open", "until", "soon", "at", "later", "origin", "x"))
      for (let i = 0; i < 3; i++) assert.isTrue(Result.isFailure(yield* load))
      assert.strictEqual(warnings.length, 1)
      assert.include(warnings[0], `circuit "spoilt"`)
      const open = { state: "Open" as const, remainingMillis: 20_000, ageMillis: 0, origin: "a" }
      yield* circuit.verdict.save(open)
      const loaded = yield* load
      const verdict = successOf(loaded)
      assert.isTrue(
        Result.isSuccess(loaded) && verdict !== undefined && Option.isSome(verdict) && verdict.value.origin === "a"
      )
      // spoilt again: reported again
      yield* Effect.promise(() => admin.hset(key, "at", "yesterday"))
      assert.isTrue(Result.isFailure(yield* load))
      assert.strictEqual(warnings.length, 2)
      // spoilt another way with no save between: the fields differ, so it is reported again
      yield* Effect.promise(() => admin.hset(key, "until", "never"))
      assert.isTrue(Result.isFailure(yield* load))
      assert.isTrue(Result.isFailure(yield* load))
      assert.strictEqual(warnings.length, 3)
    })
  )

  it.scoped("a name followed again after all its members left has its unreadable verdict reported again", () =>
    Effect.gen(function* () {
      const { admin, prefix } = yield* scratch
      const store = yield* storeOn({ url: URL, prefix })
      const warnings: Array<string> = []
      const logger = logTo(({ level, messages }) => {
        if (level === "Warn") warnings.push(messages.join(" "))
      })
      yield* Effect.promise(() =>
        admin.hset(`${prefix}{left}:circuit`, "state", "Open", "until", "soon", "at", "later", "origin", "x")
      )
      const follow = Effect.scoped(
        Effect.flatMap(store.connect("left"), (circuit) => result(circuit.verdict.load).pipe(Effect.provide(logger)))
      )
      assert.isTrue(Result.isFailure(yield* follow))
      assert.isTrue(Result.isFailure(yield* follow))
      assert.strictEqual(warnings.length, 2)
    })
  )

  it.scoped("a resync tells each name its stored verdict, and a name without one nothing", () =>
    Effect.gen(function* () {
      const server = yield* startServer
      const store = yield* storeOn({ url: server.url, prefix: "r:" })
      // the name without a verdict first: its resync must not stop the one after it
      const empty = yield* store.connect("empty")
      const saved = yield* store.connect("saved")
      const toSaved = yield* collect(saved)
      const toEmpty = yield* collect(empty)
      const verdict: BreakerStore.Verdict = { state: "Open", remainingMillis: 60_000, ageMillis: 0, origin: "z" }
      yield* saved.verdict.save(verdict)
      assert.isTrue(yield* eventually(Effect.sync(() => toSaved.length === 1)))
      // every connection is cut: on ready, the store re-emits what is stored
      yield* Effect.promise(() => server.admin.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"))
      yield* Effect.promise(() => server.admin.call("CLIENT", "KILL", "TYPE", "pubsub"))
      assert.isTrue(yield* eventually(Effect.sync(() => toSaved.length >= 2)))
      assert.deepStrictEqual([toSaved[1]!.state, toSaved[1]!.origin], ["Open", "z"])
      // re-emitted as the server reads it then: less time left, never more
      assert.isAtMost(toSaved[1]!.remainingMillis, toSaved[0]!.remainingMillis)
      assert.isAbove(toSaved[1]!.remainingMillis, 50_000)
      assert.deepStrictEqual(toEmpty, [])
    })
  )

  it.scoped("without a prefix, keys live under circuitry:breaker:", () =>
    Effect.gen(function* () {
      const { admin } = yield* scratch
      const name = uniquePrefix("default").replaceAll(":", "-")
      const key = `circuitry:breaker:{${name}}:circuit`
      yield* Effect.addFinalizer(() => Effect.promise(() => admin.del(key)))
      const store = yield* storeOn({ url: URL })
      yield* (yield* store.connect(name)).verdict.save({
        state: "Isolated",
        remainingMillis: 0,
        ageMillis: 0,
        origin: "d"
      })
      assert.strictEqual(yield* Effect.promise(() => admin.hget(key, "state")), "Isolated")
    })
  )

  it.scoped("a circuit's members and trips are sorted sets beside its hash, under its hash tag", () =>
    Effect.gen(function* () {
      const { admin, prefix } = yield* scratch
      const store = yield* storeOn({ url: URL, prefix })
      const circuit = yield* store.connect("fleet")
      yield* circuit.fleet!.heartbeat({ member: "m1", now: 1_000, since: 0 })
      yield* circuit.fleet!.recordTrip({ member: "m1", at: 2_000, since: 0, now: 2_000 })
      assert.strictEqual(yield* Effect.promise(() => admin.zscore(`${prefix}{fleet}:members`, "m1")), "1000")
      assert.strictEqual(yield* Effect.promise(() => admin.zscore(`${prefix}{fleet}:trips`, "m1")), "2000")
    })
  )

  it.scoped("durations are whole milliseconds, never negative: a negative or infinite one counts as 0", () =>
    Effect.gen(function* () {
      const { prefix } = yield* scratch
      const store = yield* storeOn({ url: URL, prefix })
      const circuit = yield* store.connect("durations")
      // an age below 0 would date the verdict in the future, and no later verdict could replace it
      yield* circuit.verdict.save({ state: "Open", remainingMillis: 60_000, ageMillis: -60_000, origin: "a" })
      yield* circuit.verdict.save({ state: "Isolated", remainingMillis: 0, ageMillis: 0, origin: "b" })
      const isolated = yield* circuit.verdict.load
      assert.isTrue(Option.isSome(isolated) && isolated.value.origin === "b")
      // an open time without end is stored as none left
      yield* circuit.verdict.save({
        state: "Open",
        remainingMillis: Number.POSITIVE_INFINITY,
        ageMillis: 0,
        origin: "c"
      })
      const open = yield* circuit.verdict.load
      assert.isTrue(Option.isSome(open) && open.value.origin === "c" && open.value.remainingMillis === 0)
    })
  )

  it.scoped("a member is never told a verdict older than one it made or heard", () =>
    Effect.gen(function* () {
      const { admin, prefix } = yield* scratch
      const store = yield* storeOn({ url: URL, prefix })
      const circuit = yield* store.connect("s")
      const told = yield* collect(circuit)
      yield* subscribed([admin], `${prefix}verdicts`, 1)
      const publish = (at: number, origin: string) =>
        Effect.promise(() =>
          admin.publish(
            `${prefix}verdicts`,
            JSON.stringify({ name: "s", state: "Open", until: at + 60_000, at, origin, now: at })
          )
        )
      yield* circuit.verdict.save({ state: "Open", remainingMillis: 9_000, ageMillis: 0, origin: "me" })
      assert.isTrue(yield* eventually(Effect.sync(() => told.length === 1)))
      // made at the server's now: `at` in the hash
      const made = Number(yield* Effect.promise(() => admin.hget(`${prefix}{s}:circuit`, "at")))
      // Behind the store's back the stored verdict becomes older than the one this member made.
      yield* Effect.promise(() => admin.hset(`${prefix}{s}:circuit`, "at", String(made - 500), "origin", "meddled"))
      // A stale save of its own (made long ago): Redis refuses it and tells the stored verdict again,
      // which is older than the one this member made: not delivered. Nor is an older publication.
      yield* circuit.verdict.save({ state: "Closed", remainingMillis: 0, ageMillis: 3_600_000, origin: "me" })
      yield* publish(made - 200, "older")
      yield* publish(made + 1_000, "newer")
      assert.isTrue(yield* eventually(Effect.sync(() => told.some((v) => v.origin === "newer"))))
      assert.deepStrictEqual(
        told.map((v) => v.origin),
        ["me", "newer"]
      )
    })
  )

  it.scoped("with Redis gone, every operation fails with a typed error that names it", () =>
    Effect.gen(function* () {
      const server = yield* startServer
      const store = yield* storeOn({ url: server.url })
      const circuit = yield* store.connect("gone")
      yield* server.kill
      // the store has seen the connection go (ioredis is reconnecting), or the calls below would be sent
      yield* waitFor(
        "the store to see its connection lost",
        Effect.map(result(circuit.verdict.load), (r) => Result.isFailure(r))
      )
      const operations: Array<[string, Effect.Effect<unknown, BreakerStore.BreakerStoreError>]> = [
        ["load", circuit.verdict.load],
        ["save", circuit.verdict.save({ state: "Open", remainingMillis: 1, ageMillis: 0, origin: "g" })],
        ["recordFailures", circuit.counts!.recordFailures(1, 1)],
        ["recordSuccess", circuit.counts!.recordSuccess(1)],
        ["counts", circuit.counts!.read],
        ["acquireProbe", circuit.probes!.acquire({ permits: 1, leaseMillis: 1_000, now: 1 })],
        ["releaseProbe", circuit.probes!.release("0:token")],
        ["heartbeat", circuit.fleet!.heartbeat({ member: "g", now: 1, since: 0 })],
        ["members", circuit.fleet!.members(0)],
        ["recordTrip", circuit.fleet!.recordTrip({ member: "g", at: 1, since: 0, now: 1 })],
        ["trips", circuit.fleet!.trips({ since: 0, now: 1 })]
      ]
      for (const [operation, effect] of operations) {
        const outcome = yield* result(effect)
        assert.isTrue(Result.isFailure(outcome), operation)
        const error = failureOf(outcome)
        if (error !== undefined) {
          assert.strictEqual(error.operation, operation)
          assert.strictEqual(error.store, "redis")
        }
      }
    })
  )
})

/**
 * A store on a Clock that records its sleeps, connected (a first load answered) and with nothing
 * left on its deadline sweeper: the Clock is moved past that load's deadline, so the sweeper's next
 * sleep is for the next call's deadline alone. `sent` waits until a call started now has been
 * written and its deadline set: the sweeper sleeps until now + `deadline` to the millisecond (the
 * liveness watchdog sleeps a quarter of liveness at most, and nothing else of the store sleeps).
 */
const heldStore = (options: RedisBreakerStore.Options, deadline: number) =>
  Effect.gen(function* () {
    const sleeps = yield* recordingSleeps
    const store = yield* withClock(storeOn(options), sleeps.clock)
    const circuit = yield* store.connect("c")
    assert.isTrue(Option.isNone(yield* circuit.verdict.load)) // connected
    yield* TestClock.adjust(deadline)
    const sent = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      waitFor(
        `the load to be sent, its deadline set to end at ${now + deadline}`,
        Effect.map(sleeps.pending, (ends) => ends.includes(now + deadline))
      )
    )
    return { circuit, sent }
  })

describe("RedisBreakerStore: the deadline and liveness, on the Clock", () => {
  it.scoped("the deadline (or its old name, timeout) is what a call is held to, on the Clock", () =>
    Effect.gen(function* () {
      const server = yield* startServer
      for (const options of [
        { deadline: "150 millis" },
        { timeout: "150 millis" }
      ] as Array<RedisBreakerStore.Options>) {
        const { circuit, sent } = yield* heldStore({ url: server.url, prefix: "d:", ...options }, 150)
        yield* server.pause
        const fiber = yield* Edition.forkChild(result(circuit.verdict.load))
        yield* sent
        yield* TestClock.adjust("149 millis")
        assert.isTrue(Option.isNone(yield* poll(fiber)))
        yield* TestClock.adjust("1 millis")
        const outcome = yield* Fiber.join(fiber)
        yield* server.resume
        assert.isTrue(Result.isFailure(outcome), JSON.stringify(options))
        const error = failureOf(outcome)
        if (error !== undefined) {
          assert.strictEqual(error.operation, "load")
          assert.include(error.message, "no reply within the deadline of 150 ms")
          assert.strictEqual(error.store, "redis")
        }
      }
    })
  )

  it.scoped("silence past liveness tears the command connection down, with a warning that names the store", () =>
    Effect.gen(function* () {
      const server = yield* startServer
      const warnings: Array<string> = []
      const { circuit, sent } = yield* heldStore(
        { url: server.url, deadline: "100 millis", liveness: "200 millis" },
        100
      ).pipe(Effect.provide(logTo((entry) => void warnings.push(String(entry.messages[0])))))
      yield* server.pause
      const fiber = yield* Edition.forkChild(result(circuit.verdict.load))
      yield* sent
      yield* TestClock.adjust("100 millis")
      assert.isTrue(Result.isFailure(yield* Fiber.join(fiber)))
      for (let i = 0; i < 5; i++) yield* TestClock.adjust("50 millis")
      yield* server.resume
      assert.isTrue(
        warnings.some((w) => w.startsWith("RedisBreakerStore: no reply for") && w.includes("liveness 200 ms")),
        JSON.stringify(warnings)
      )
      // the connection comes back by itself
      assert.isTrue(yield* eventually(Effect.map(result(circuit.verdict.load), Result.isSuccess)))
    })
  )
})
