import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { Cache, type CacheStore } from "@circuitry/cache"
import { RedisStore } from "@circuitry/redis"
import * as Edition from "@circuitry/core/Edition"
import { assert, describe, expect, hasDies, it, logTo, Result, result, TestClock, yieldNow } from "@circuitry/testkit"
import { Effect, Exit, Fiber, Option } from "effect"
import { Redis } from "ioredis"
import { failureOf, successOf } from "./utils/outcome.js"
import { cleanup, eventually, startServer, uniquePrefix } from "./utils/server.js"

const URL = "redis://127.0.0.1:6379"

/** A plain client on the shared test Redis, and a fresh prefix that is emptied afterwards. */
const scratch = Effect.gen(function* () {
  const prefix = uniquePrefix("store")
  const admin = yield* Effect.acquireRelease(
    Effect.sync(() => new Redis(URL)),
    (client) => Effect.promise(() => cleanup(client, prefix).finally(() => client.disconnect()))
  )
  return { prefix, admin }
})

/** Whether a call failed, with its deadline exceeded. */
const deadlineExceeded = (outcome: Result<unknown, CacheStore.CacheError>): boolean => {
  const error = failureOf(outcome)
  return error !== undefined && RedisStore.isDeadlineExceeded(error)
}

/** Captures what is logged by `self` and by the fibers it forks. */
const capture = () => {
  const messages: Array<string> = []
  const logger = logTo(({ messages: logged }) => {
    messages.push(logged.map(String).join(" "))
  })
  const around = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.provide(self, logger)
  return { messages, around }
}

/** Captures the messages logged while `self` runs. */
const logged = <A, E, R>(self: Effect.Effect<A, E, R>) => {
  const { around, messages } = capture()
  return Effect.map(around(self), (result) => [result, messages] as const)
}

describe("RedisStore", () => {
  describe("operations", () => {
    it.scoped("stores every key under the prefix, with PX ttls", () =>
      Effect.gen(function* () {
        const { admin, prefix } = yield* scratch
        const store = yield* RedisStore.make({ url: URL, prefix })
        assert.isTrue(Option.isNone(yield* store.get("a")))
        assert.isTrue(yield* store.set("a", "1"))
        assert.isTrue(yield* store.set("b", "2", { ttl: "10 seconds" }))
        expect(yield* store.get("a")).toStrictEqual(Option.some("1"))
        expect(yield* store.get("b")).toStrictEqual(Option.some("2"))
        // under the prefix, in our envelope, with a millisecond expiry
        assert.strictEqual(yield* Effect.promise(() => admin.get(prefix + "a")), RedisStore.ENVELOPE + "1")
        assert.strictEqual(yield* Effect.promise(() => admin.pttl(prefix + "a")), -1)
        const pttl = yield* Effect.promise(() => admin.pttl(prefix + "b"))
        assert.isTrue(pttl > 9_000 && pttl <= 10_000, `pttl ${pttl}`)
        assert.isTrue(yield* store.set("a", "3"))
        expect(yield* store.get("a")).toStrictEqual(Option.some("3"))
      })
    )

    it.scoped("a ttl expires on the server", () =>
      Effect.gen(function* () {
        const { prefix } = yield* scratch
        const store = yield* RedisStore.make({ url: URL, prefix })
        yield* store.set("short", "x", { ttl: "30 millis" })
        // Redis keeps the time here, not the Effect Clock: wait for it for real, within a bound.
        assert.isTrue(yield* eventually(Effect.map(store.get("short"), Option.isNone), 2_000))
      })
    )

    it.scoped("touch renews an expiry, or removes it without a ttl; false for a missing key", () =>
      Effect.gen(function* () {
        const { admin, prefix } = yield* scratch
        const store = yield* RedisStore.make({ url: URL, prefix })
        yield* store.set("k", "v")
        assert.isTrue(yield* store.touch("k", { ttl: "5 seconds" }))
        const pttl = yield* Effect.promise(() => admin.pttl(prefix + "k"))
        assert.isTrue(pttl > 4_000 && pttl <= 5_000, `pttl ${pttl}`)
        assert.isTrue(yield* store.touch("k"))
        assert.strictEqual(yield* Effect.promise(() => admin.pttl(prefix + "k")), -1)
        assert.isFalse(yield* store.touch("missing", { ttl: "5 seconds" }))
        assert.isFalse(yield* Effect.promise(() => admin.exists(prefix + "missing")).pipe(Effect.map((n) => n === 1)))
      })
    )

    it.scoped("delete, keys by prefix (glob characters are literal), size, ping", () =>
      Effect.gen(function* () {
        const { admin, prefix } = yield* scratch
        const store = yield* RedisStore.make({ url: URL, prefix })
        const other = yield* RedisStore.make({ url: URL, prefix: prefix + "other:" })
        yield* other.set("x", "1") // under a longer prefix: our keys include it as "other:x"
        for (const key of ["user:1", "user:2", "user*", "post:1"]) yield* store.set(key, key)
        yield* Effect.promise(() => admin.set("unrelated:" + prefix, "no"))
        yield* Effect.addFinalizer(() => Effect.promise(() => admin.del("unrelated:" + prefix)))
        assert.deepStrictEqual([...(yield* store.keys("user"))].sort(), ["user*", "user:1", "user:2"])
        assert.deepStrictEqual([...(yield* store.keys("user*"))].sort(), ["user*"])
        assert.deepStrictEqual([...(yield* store.keys())].sort(), ["other:x", "post:1", "user*", "user:1", "user:2"])
        assert.deepStrictEqual(yield* other.keys(), ["x"])
        assert.strictEqual(yield* store.size, 5)
        assert.isTrue(yield* store.delete("user:1"))
        assert.isFalse(yield* store.delete("user:1"))
        assert.strictEqual(yield* store.size, 4)
        assert.isTrue(yield* store.ping)
      })
    )

    it.scoped("keys walks every SCAN page", () =>
      Effect.gen(function* () {
        const { admin, prefix } = yield* scratch
        const store = yield* RedisStore.make({ url: URL, prefix })
        const pipeline = admin.pipeline()
        for (let i = 0; i < 2_500; i++) pipeline.set(`${prefix}k${i}`, RedisStore.ENVELOPE + i)
        yield* Effect.promise(() => pipeline.exec())
        const keys = yield* store.keys("k")
        assert.strictEqual(keys.length, 2_500)
        assert.strictEqual(new Set(keys).size, 2_500)
        assert.strictEqual(yield* store.size, 2_500)
      })
    )

    it.scoped("a value that is not ours reads as a miss, with a reported error", () =>
      Effect.gen(function* () {
        const { admin, prefix } = yield* scratch
        const store = yield* RedisStore.make({ url: URL, prefix })
        yield* Effect.promise(() => admin.set(prefix + "foreign", "written by someone else"))
        yield* Effect.promise(() => admin.hset(prefix + "hash", "field", "value"))
        const [foreign, messages1] = yield* logged(store.get("foreign"))
        assert.isTrue(Option.isNone(foreign))
        assert.isTrue(
          messages1.some((m) => m.includes("not ours")),
          messages1.join("\n")
        )
        const [hash, messages2] = yield* logged(store.get("hash"))
        assert.isTrue(Option.isNone(hash))
        assert.isTrue(
          messages2.some((m) => m.includes("not ours")),
          messages2.join("\n")
        )
        // getEntry reads them the same way
        assert.isTrue(Option.isNone(yield* store.getEntry!("foreign")))
        assert.isTrue(Option.isNone(yield* store.getEntry!("hash")))
        // the foreign values are left alone
        assert.strictEqual(yield* Effect.promise(() => admin.get(prefix + "foreign")), "written by someone else")
      })
    )

    it.scoped("a ttl that is not a duration is a defect naming the rule, and nothing is written", () =>
      Effect.gen(function* () {
        const { prefix } = yield* scratch
        const store = yield* RedisStore.make({ url: URL, prefix })
        const exit = yield* Effect.exit(store.set("k", "v", { ttl: "soon" as never }))
        assert.isTrue(Exit.isFailure(exit) && hasDies(exit.cause), String(exit))
        assert.include(String(exit), "ttl must be")
        assert.isTrue(Option.isNone(yield* store.get("k")))
        const touched = yield* Effect.exit(store.touch("k", { ttl: "soon" as never }))
        assert.isTrue(Exit.isFailure(touched) && String(touched).includes("RedisStore.touch"))
      })
    )
  })

  describe("options", () => {
    it.scoped("liveness below the deadline is a typed options error", () =>
      Effect.gen(function* () {
        const outcome = yield* result(RedisStore.make({ url: URL, deadline: "2 seconds", liveness: "1 second" }))
        assert.isTrue(Result.isFailure(outcome))
        const error = failureOf(outcome)
        if (error !== undefined) {
          assert.strictEqual(error._tag, "InvalidRedisOptions")
          assert.include(error.message, "liveness (1000 ms) must be at least the deadline (2000 ms)")
        }
        // equal is allowed
        const store = yield* RedisStore.make({ url: URL, deadline: "1 second", liveness: "1 second" })
        assert.isTrue(yield* store.ping)
      })
    )

    it.scoped("other bad options and an unreachable server are typed errors", () =>
      Effect.gen(function* () {
        const cases: Array<[RedisStore.Options, string]> = [
          [{ deadline: 0 }, "deadline must be"],
          [{ deadline: "forever" as never }, "deadline must be"],
          [{ liveness: -1 }, "liveness must be"],
          [{ url: "http://localhost" }, "url must be"],
          [{ prefix: 42 as never }, "prefix must be"]
        ]
        for (const [options, message] of cases) {
          const error = failureOf(yield* result(RedisStore.make(options)))
          assert.isTrue(error?._tag === "InvalidRedisOptions", JSON.stringify(options))
          if (error !== undefined) assert.include(error.message, message)
        }
        // An unreachable server is no option error: the store builds (degraded), and its calls fail
        // fast with a CacheError until the server is there (see "a cache is degraded").
        const server = yield* startServer
        yield* server.kill
        const [unreachable, messages] = yield* logged(result(RedisStore.make({ url: server.url })))
        assert.isTrue(Result.isSuccess(unreachable))
        assert.isTrue(messages.some((m) => m.includes(`cannot connect to ${server.url}`)))
        const degraded = successOf(unreachable)
        if (degraded !== undefined) {
          const call = yield* result(degraded.get("k"))
          assert.isTrue(failureOf(call)?._tag === "CacheError")
        }
      })
    )

    it.scoped("a store on a client the application provides leaves that client open", () =>
      Effect.gen(function* () {
        const { prefix } = yield* scratch
        const client = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const c = new Redis(URL, { lazyConnect: true })
            await c.connect()
            return c
          }),
          (c) => Effect.sync(() => c.disconnect())
        )
        yield* Effect.scoped(
          Effect.gen(function* () {
            const store = yield* RedisStore.makeWithClient({ prefix })
            yield* store.set("k", "v")
          }).pipe(Effect.provideService(RedisStore.RedisClient, client))
        )
        assert.strictEqual(client.status, "ready")
        assert.strictEqual(yield* Effect.promise(() => client.get(prefix + "k")), RedisStore.ENVELOPE + "v")
      })
    )
  })

  describe("many calls in flight", () => {
    it.scoped("the commands of one event-loop turn go out in one write, and each caller gets its own reply", () =>
      Effect.gen(function* () {
        const { prefix } = yield* scratch
        const client = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const c = new Redis(URL, { lazyConnect: true })
            await c.connect()
            return c
          }),
          (c) => Effect.sync(() => c.disconnect())
        )
        const store = yield* RedisStore.makeWithClient({ prefix }).pipe(
          Effect.provideService(RedisStore.RedisClient, client)
        )
        const keys = Array.from({ length: 64 }, (_, i) => `k${i}`)
        yield* Effect.forEach(keys, (k) => store.set(k, `value of ${k}`), { concurrency: "unbounded" })
        // count what reaches the socket: one chunk per command, in as few writes as Node makes
        const socket = client.stream as unknown as {
          _write: (...args: Array<unknown>) => void
          _writev: (chunks: ReadonlyArray<unknown>, ...rest: Array<unknown>) => void
        }
        let writes = 0
        const { _write, _writev } = socket
        socket._write = function (...args) {
          writes++
          return _write.apply(this, args)
        }
        socket._writev = function (chunks, ...rest) {
          writes++
          return _writev.apply(this, [chunks, ...rest])
        }
        const reads = yield* Effect.forEach(keys, (k) => Effect.map(store.get(k), (v) => [k, v] as const), {
          concurrency: "unbounded"
        })
        socket._write = _write
        socket._writev = _writev
        for (const [k, v] of reads) expect(v, k).toStrictEqual(Option.some(`value of ${k}`))
        // one write per command would be 64
        assert.isAtMost(writes, 4, `${writes} writes for 64 commands`)
      })
    )

    it.scoped("an interrupted call leaves at once, and its late reply is handed to no one", () =>
      Effect.gen(function* () {
        const server = yield* startServer
        const store = yield* RedisStore.make({ url: server.url, deadline: "10 seconds", liveness: "60 seconds" })
        yield* store.set("a", "value of a")
        yield* store.set("b", "value of b")
        yield* server.pause
        const fiber = yield* Edition.forkChild(store.get("a"))
        yield* yieldNow
        // the server answers nothing, and no Clock time passes: the interruption alone ends the call
        // Effect 4's Fiber.interrupt returns nothing: the fiber's exit is awaited after it.
        yield* Fiber.interrupt(fiber)
        const exit = yield* Fiber.await(fiber)
        assert.isTrue(Exit.isFailure(exit) && Edition.hasInterrupts(exit.cause), String(exit))
        yield* server.resume
        // the reply to "a" arrives first on the connection; it must not be taken for "b"
        expect(yield* store.get("b")).toStrictEqual(Option.some("value of b"))
        expect(yield* store.get("a")).toStrictEqual(Option.some("value of a"))
      })
    )
  })

  describe("deadline and liveness, against a server the test pauses", () => {
    it.scoped("a deadline fails the caller with a typed timeout while the server is paused", () =>
      Effect.gen(function* () {
        const server = yield* startServer
        const store = yield* RedisStore.make({ url: server.url, deadline: "100 millis", liveness: "10 seconds" })
        yield* store.set("k", "v")
        yield* server.pause
        const fiber = yield* Edition.forkChild(result(store.get("k")))
        yield* TestClock.adjust("100 millis")
        const outcome = yield* Fiber.join(fiber)
        assert.isTrue(Result.isFailure(outcome))
        const error = failureOf(outcome)
        if (error !== undefined) {
          assert.strictEqual(error._tag, "CacheError")
          assert.strictEqual(error.operation, "get")
          assert.isTrue(RedisStore.isDeadlineExceeded(error))
          assert.strictEqual((error.cause as RedisStore.DeadlineExceeded).deadlineMillis, 100)
        }
        yield* server.resume
      })
    )

    it.scoped("an abandoned reply is never handed to the next caller", () =>
      Effect.gen(function* () {
        const server = yield* startServer
        const store = yield* RedisStore.make({ url: server.url, deadline: "100 millis", liveness: "10 seconds" })
        const keys = Array.from({ length: 8 }, (_, i) => `k${i}`)
        for (const key of keys) yield* store.set(key, `value of ${key}`)
        yield* server.pause
        // the first half is abandoned while the server is paused
        const fiber = yield* Edition.forkChild(
          Effect.forEach(keys.slice(0, 4), (k) => result(store.get(k)), { concurrency: "unbounded" })
        )
        yield* TestClock.adjust("100 millis")
        const abandoned = yield* Fiber.join(fiber)
        assert.isTrue(abandoned.every(deadlineExceeded))
        yield* server.resume
        // the late replies to those four arrive first on the connection; none may be taken for these
        const reads = yield* Effect.forEach([...keys.slice(4), ...keys.slice(0, 4)], (k) =>
          Effect.map(store.get(k), (v) => [k, v] as const)
        )
        for (const [k, v] of reads) expect(v, k).toStrictEqual(Option.some(`value of ${k}`))
      })
    )

    it.scoped("the connection survives a stall: no reconnect, reads and ping work after it", () =>
      Effect.gen(function* () {
        const server = yield* startServer
        const store = yield* RedisStore.make({ url: server.url, deadline: "100 millis", liveness: "10 seconds" })
        yield* store.set("k", "v")
        const connectionsBefore = yield* server.info("total_connections_received")
        yield* server.pause
        const fiber = yield* Edition.forkChild(
          Effect.all(
            Array.from({ length: 8 }, () => result(store.get("k"))),
            { concurrency: "unbounded" }
          )
        )
        yield* TestClock.adjust("100 millis")
        const stalled = yield* Fiber.join(fiber)
        assert.strictEqual(stalled.length, 8)
        assert.isTrue(stalled.every(deadlineExceeded))
        yield* server.resume
        expect(yield* store.get("k")).toStrictEqual(Option.some("v"))
        assert.isTrue(yield* store.ping)
        assert.strictEqual(yield* server.info("total_connections_received"), connectionsBefore)
      })
    )

    it.scoped("silence past liveness tears the connection down, fails the waiting callers, then recovers", () =>
      Effect.gen(function* () {
        const server = yield* startServer
        const log = capture()
        const store = yield* log.around(
          RedisStore.make({ url: server.url, deadline: "100 millis", liveness: "400 millis" })
        )
        yield* store.set("k", "v")
        const connectionsBefore = yield* server.info("total_connections_received")
        yield* server.pause
        const fiber = yield* Edition.forkChild(
          Effect.all(
            Array.from({ length: 3 }, () => result(store.get("k"))),
            { concurrency: "unbounded" }
          )
        )
        yield* TestClock.adjust("100 millis")
        assert.isTrue((yield* Fiber.join(fiber)).every((r) => Result.isFailure(r)))
        // the replies are still owed: silence passes liveness and the watchdog tears down
        assert.isFalse(log.messages.some((m) => m.includes("torn down")))
        yield* TestClock.adjust("500 millis")
        assert.isTrue(
          log.messages.some((m) => m.includes("torn down")),
          log.messages.join("\n")
        )
        yield* server.resume
        // a torn-down connection refuses calls at once until ioredis has reconnected (real time)
        assert.isTrue(
          yield* eventually(
            Effect.orElseSucceed(store.ping, () => false),
            5_000
          )
        )
        expect(yield* store.get("k")).toStrictEqual(Option.some("v"))
        assert.isTrue((yield* server.info("total_connections_received")) > connectionsBefore)
      })
    )

    it.scoped(
      "a server that is gone fails calls at once, and the store reconnects when it is back",
      () =>
        Effect.gen(function* () {
          const server = yield* startServer
          const store = yield* RedisStore.make({ url: server.url, deadline: "1 second", liveness: "5 seconds" })
          yield* store.set("k", "v")
          yield* server.kill
          // no offline queue: with the TestClock still, a queued call would hang here instead of failing
          assert.isTrue(yield* eventually(Effect.map(result(store.get("k")), (r) => Result.isFailure(r))))
          const failed = failureOf(yield* result(store.get("k")))
          assert.isTrue(failed !== undefined && !RedisStore.isDeadlineExceeded(failed))
          yield* server.restart
          assert.isTrue(
            yield* eventually(
              Effect.orElseSucceed(store.ping, () => false),
              5_000
            )
          )
          assert.isTrue(yield* store.set("k", "again"))
          expect(yield* store.get("k")).toStrictEqual(Option.some("again"))
        }),
      15_000
    )

    it.scoped(
      "a cache is degraded, not broken: the store builds with its server down or paused, the guard serves fallbacks, and it connects when the server is back",
      () =>
        Effect.gen(function* () {
          for (const outage of ["killed", "paused"] as const) {
            const server = yield* startServer
            yield* outage === "killed" ? server.kill : server.pause
            const started = performance.now()
            const store = yield* RedisStore.make({ url: server.url, prefix: "degraded:" })
            // startup waits at most a second (real time) for the server, then goes on
            assert.isBelow(performance.now() - started, 1_900, outage)
            const breaker = yield* CircuitBreaker.make({
              name: `cache-${outage}`,
              policy: Policy.consecutiveFailures(3)
            })
            const cache = Cache.guard(store, breaker, { onError: () => Effect.void })
            // a paused server answers no call: each is held to its deadline (1 s by default) on the Clock
            const read = Edition.forkChild(cache.get("k")).pipe(
              Effect.tap(() => TestClock.adjust("1 second")),
              Effect.flatMap(Fiber.join)
            )
            expect(yield* read).toStrictEqual(Option.none())
            assert.isFalse(yield* cache.set("k", "v"))
            yield* outage === "killed" ? server.restart : server.resume
            assert.isTrue(
              yield* eventually(
                Effect.orElseSucceed(store.ping, () => false),
                10_000
              ),
              outage
            )
            assert.isTrue(yield* store.set("k", "v"), outage)
            expect(yield* store.get("k")).toStrictEqual(Option.some("v"))
          }
        }),
      30_000
    )

    it.scoped("without silence past liveness, a slow but answering server keeps its connection", () =>
      Effect.gen(function* () {
        const server = yield* startServer
        const store = yield* RedisStore.make({ url: server.url, deadline: "100 millis", liveness: "400 millis" })
        yield* store.set("k", "v")
        const connectionsBefore = yield* server.info("total_connections_received")
        // idle for longer than liveness: nothing is owed, so nothing is torn down
        yield* TestClock.adjust("2 seconds")
        expect(yield* store.get("k")).toStrictEqual(Option.some("v"))
        assert.strictEqual(yield* server.info("total_connections_received"), connectionsBefore)
      })
    )
  })
})
