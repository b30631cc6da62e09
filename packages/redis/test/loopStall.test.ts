/**
 * A stalled event loop does not trip a healthy Redis, and a really slow Redis still trips: on a
 * redis-server of the test's own, with the cache's breaker and its state shared through
 * RedisBreakerStore, every deadline 200-250 ms.
 *
 * The stall is a busy loop in this process, started (process.nextTick) right after the store's
 * command went out, so Redis answers during it: its reply waits in the socket, and when the loop
 * runs again Node runs the expired deadline timers before it reads the socket. Real time; the bounds are
 * read from what the test measures (the block, the loop's lost time), not fixed sleeps.
 */
import { BreakerRegistry, CircuitBreaker, LoopStall, Policy } from "@circuitry/breaker"
import { Cache } from "@circuitry/cache"
import { RedisBreakerStore, RedisStore } from "@circuitry/redis"
import * as Edition from "@circuitry/core/Edition"
import { assert, describe, it, logTo, metricSeries, result, TestClock, withAttributes } from "@circuitry/testkit"
import { Context, Deferred, Effect, Fiber, Layer, Metric, Option } from "effect"
import type { Scope } from "effect"
import { Redis } from "ioredis"
import { startServer, type TestServer, uniquePrefix } from "./utils/server.js"

const DEADLINE = 200
/** The busy loop: three times the longest deadline (the breaker's 250 ms store wait). */
const BLOCK = 750

/** Blocks the event loop for BLOCK ms of real time; returns how long it blocked. */
const busyLoop = (): number => {
  const start = performance.now()
  while (performance.now() - start < BLOCK) {
    // a CPU-bound handler, holding the event loop
  }
  return performance.now() - start
}

/**
 * Instruments every ioredis client: the next command whose name and arguments `matches` says is
 * followed by a busy loop once it is on the wire (ioredis writes it to the socket in `sendCommand`;
 * the loop runs at the next tick, before the event loop polls for the reply). With setImmediate it
 * ran after the poll, and on Effect 4, whose fibers resume in microtasks, a reply read in that poll
 * ended the read before the stall (2 of 3 runs). `blocked` resolves with the time the loop was held.
 */
const stallAfter = (
  matches: (name: string, args: ReadonlyArray<unknown>) => boolean
): Effect.Effect<Deferred.Deferred<number>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const blocked = yield* Deferred.make<number>()
    const proto = Redis.prototype as unknown as { sendCommand: (command: unknown, stream?: unknown) => unknown }
    const original = proto.sendCommand
    let armed = true
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        proto.sendCommand = function (this: unknown, command: unknown, stream?: unknown) {
          const result = original.call(this, command, stream)
          const { args, name } = command as { readonly name: string; readonly args: ReadonlyArray<unknown> }
          if (armed && matches(name, args)) {
            armed = false
            process.nextTick(() => Effect.runSync(Deferred.succeed(blocked, busyLoop())))
          }
          return result
        }
      }),
      () =>
        Effect.sync(() => {
          proto.sendCommand = original
        })
    )
    return blocked
  })

/** Warnings logged, and a way to wait for one that says something; `layer` goes around the whole test. */
const watchLogs = () => {
  const lines: Array<string> = []
  const waiters: Array<{ readonly text: string; readonly done: Deferred.Deferred<void> }> = []
  const layer = logTo(({ messages }) => {
    const line = String(messages[0])
    lines.push(line)
    for (const w of waiters) if (line.includes(w.text)) Effect.runSync(Deferred.succeed(w.done, undefined))
  })
  const logged = (text: string) =>
    Effect.gen(function* () {
      const done = yield* Deferred.make<void>()
      waiters.push({ text, done })
      if (lines.some((line) => line.includes(text))) return
      yield* Deferred.await(done)
    })
  return { lines, logged, layer }
}

/** A read through the cache in `context`. */
const get = (context: Context.Context<Cache.Cache>, key: string) =>
  Effect.flatMap(Cache.Cache, (cache) => cache.get(key)).pipe(Effect.provide(context))

const reachable = (name: string) =>
  Effect.map(Metric.value(withAttributes(CircuitBreaker.storeReachable, { breaker: name })), (s) => s.value)

/** The cache of the issue: RedisStore under a breaker whose state is shared through RedisBreakerStore. */
const cacheOn = (server: TestServer, prefix: string, name: string) =>
  Cache.layer({ breaker: { name, policy: Policy.consecutiveFailures(1), openFor: "1 minute" } }).pipe(
    Layer.provide(RedisStore.layer({ url: server.url, prefix: `${prefix}cache:`, deadline: DEADLINE })),
    Layer.provide(RedisBreakerStore.layer({ url: server.url, prefix: `${prefix}breaker:`, deadline: DEADLINE }))
  )

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const lost = LoopStall.live.lostBefore(Date.now())
    const start = performance.now()
    const a = yield* effect
    return { a, millis: performance.now() - start, lost: LoopStall.live.lostBefore(Date.now()) - lost }
  })

describe("a stalled event loop and a healthy Redis", () => {
  it.live(
    "a busy loop longer than every deadline: the breaker stays closed, the store is not reported unreachable",
    () =>
      Effect.suspend(() => {
        const logs = watchLogs()
        return Effect.gen(function* () {
          const server = yield* startServer
          const prefix = uniquePrefix("stall")
          const name = "stall-cache"
          yield* Effect.promise(() => server.admin.set(`${prefix}cache:greeting`, "cy1:hello"))

          // The breaker's first load of its shared verdict (the store waits 250 ms for it) meets a stall.
          const loadBlocked = yield* stallAfter(
            (command, args) => command.startsWith("eval") && String(args[2]).endsWith(`{${name}}:circuit`)
          )
          const context = yield* Layer.build(cacheOn(server, prefix, name))
          const breaker = Context.get(context, Cache.CacheBreaker)
          assert.isAtLeast(yield* Deferred.await(loadBlocked), BLOCK)
          assert.deepStrictEqual((yield* breaker.snapshot).store, { connected: true })

          // A read (RedisStore's 200 ms deadline) meets a stall: the value Redis sent is read.
          const getBlocked = yield* stallAfter((command) => command === "get")
          const read = yield* timed(get(context, "greeting"))
          const blocked = yield* Deferred.await(getBlocked)
          // the figures, for docs/redis.md
          console.log(`stall: a read took ${Math.round(read.millis)} ms over a ${Math.round(blocked)} ms block`)
          assert.strictEqual(Option.getOrNull(read.a), "hello")
          assert.strictEqual((yield* breaker.state)._tag, "Closed")
          assert.strictEqual((yield* breaker.snapshot).counts.consecutiveFailures, 0)
          // Held by the stall (the block, and whatever else the process lost), and not by a deadline on top of it.
          assert.isAtLeast(read.millis, blocked)
          assert.isBelow(
            read.millis,
            read.lost + DEADLINE,
            `the read took ${read.millis} ms, blocked ${blocked} ms, lost ${read.lost} ms`
          )

          assert.deepStrictEqual(logs.lines, [])
          assert.strictEqual(yield* reachable(name), 1)
        }).pipe(Effect.scoped, Effect.provide(logs.layer))
      }),
    30_000
  )
})

describe("a really slow Redis (SIGSTOP'd past the deadline)", () => {
  it.live(
    "still opens the breaker and marks the store unreachable, then answers again after SIGCONT",
    () =>
      Effect.suspend(() => {
        const logs = watchLogs()
        return Effect.gen(function* () {
          const server = yield* startServer
          const prefix = uniquePrefix("slow")
          const name = "slow-cache"
          const context = yield* Layer.build(cacheOn(server, prefix, name))
          const breaker = Context.get(context, Cache.CacheBreaker)
          assert.strictEqual(yield* reachable(name), 1)

          yield* server.pause
          const read = yield* timed(get(context, "greeting"))
          console.log(`stall: a read from a stopped Redis took ${Math.round(read.millis)} ms (deadline ${DEADLINE} ms)`)
          assert.isTrue(Option.isNone(read.a))
          assert.strictEqual((yield* breaker.state)._tag, "Open")
          // At its deadline, plus the time this process lost meanwhile (a loaded machine), and not one deadline more.
          assert.isAtLeast(read.millis, DEADLINE)
          assert.isBelow(read.millis, 2 * DEADLINE + read.lost, `the read took ${read.millis} ms, lost ${read.lost} ms`)

          // The trip's verdict cannot be saved: the store is reported unreachable, once, and the gauge says 0.
          yield* logs.logged("unreachable")
          assert.strictEqual(yield* reachable(name), 0)
          assert.deepStrictEqual((yield* breaker.snapshot).store, { connected: false })

          yield* server.resume
          yield* logs.logged("answers again")
          assert.strictEqual(yield* reachable(name), 1)
          assert.strictEqual(logs.lines.filter((line) => line.includes("unreachable")).length, 1)
        }).pipe(Effect.scoped, Effect.provide(logs.layer))
      }),
    30_000
  )
})

describe("the store-reachability gauge on a real Redis", () => {
  it.live(
    "1, 0 while Redis is stopped, 1 once it answers; its series leaves with the breaker the registry evicts",
    () =>
      Effect.suspend(() => {
        const logs = watchLogs()
        return Effect.gen(function* () {
          const server = yield* startServer
          const prefix = uniquePrefix("gauge")
          const context = yield* Layer.build(
            BreakerRegistry.layer({ maxBreakers: 1, defaults: { policy: Policy.consecutiveFailures(1) } }).pipe(
              Layer.provide(RedisBreakerStore.layer({ url: server.url, prefix, deadline: DEADLINE }))
            )
          )
          const registry = Context.get(context, BreakerRegistry.BreakerRegistry)
          const a = yield* registry.get("gauge-a")
          assert.strictEqual(yield* reachable("gauge-a"), 1)

          yield* server.pause
          // A trip: its verdict goes to the stopped store.
          yield* result(CircuitBreaker.withBreaker(Effect.fail("boom"), a))
          yield* logs.logged("unreachable")
          assert.strictEqual(yield* reachable("gauge-a"), 0)
          yield* server.resume
          yield* logs.logged("answers again")
          assert.strictEqual(yield* reachable("gauge-a"), 1)

          // Another name evicts gauge-a (maxBreakers 1): its gauge leaves Effect's registry with it.
          yield* registry.get("gauge-b")
          const series = (breaker: string) =>
            Effect.map(metricSeries, (all) =>
              all.filter(
                (one) => one.name === "circuitry_breaker_store_reachable" && one.attributes["breaker"] === breaker
              )
            )
          assert.deepStrictEqual(yield* series("gauge-a"), [])
          assert.strictEqual((yield* series("gauge-b")).length, 1)
        }).pipe(Effect.scoped, Effect.provide(logs.layer))
      }),
    30_000
  )
})

describe("the liveness watchdog and the deadlines, on the TestClock with an injected stall", () => {
  it.scoped("silence that was the loop's own stall tears nothing down and fails no call", () =>
    Effect.suspend(() => {
      const logs = watchLogs()
      return Effect.gen(function* () {
        const server = yield* startServer
        const store = yield* RedisStore.make({ url: server.url, deadline: "100 millis", liveness: "400 millis" })
        yield* store.set("k", "v")
        yield* server.pause
        const calls = yield* Edition.forkChild(
          Effect.all(
            Array.from({ length: 3 }, () => store.get("k")),
            { concurrency: "unbounded" }
          )
        )
        // 600 ms of silence, past both limits, all of it the loop's own stall.
        yield* TestClock.adjust("600 millis")
        assert.isFalse(
          logs.lines.some((line) => line.includes("torn down")),
          logs.lines.join("\n")
        )
        assert.isUndefined(Edition.pollUnsafe(calls))
        yield* server.resume
        // The replies Redis owed are read on the same connection.
        const values = yield* Fiber.join(calls)
        assert.deepStrictEqual(values.map(Option.getOrNull), ["v", "v", "v"])
      }).pipe(Effect.provideService(LoopStall.LoopStall, LoopStall.scripted([[0, 1_000]])), Effect.provide(logs.layer))
    })
  )
})
