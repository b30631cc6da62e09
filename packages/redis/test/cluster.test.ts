import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { RedisBreakerStore, RedisRetryBudget, RedisStore } from "@circuitry/redis"
import * as Edition from "@circuitry/core/Edition"
import { assert, describe, expect, it, Result, result } from "@circuitry/testkit"
import { Effect, Exit, Fiber, Layer, Option, Scope, Stream } from "effect"
import { Cluster } from "ioredis"
import * as net from "node:net"
import { afterAll, beforeAll } from "vitest"
import { Corruptions, storeSuite } from "@circuitry/testkit/conformance/breakerStore"
import { startCluster, type TestCluster } from "./utils/cluster.js"
import { failureOf } from "./utils/outcome.js"
import { eventually, uniquePrefix } from "./utils/server.js"
import { nodesOf, type Seen, subscribed, waitFor, watchCommands } from "./utils/wait.js"

// The three adapters on a real Redis Cluster of the test's own: three primaries, no replicas (the
// failover test is clusterFailover.test.ts). A node timeout well above a loaded machine's stalls,
// so that no node is judged failed here.
let cluster: TestCluster
const scope = Effect.runSync(Scope.make())
beforeAll(async () => {
  cluster = await Effect.runPromise(
    Effect.provideService(startCluster({ replicas: false, nodeTimeoutMillis: 5_000 }), Scope.Scope, scope)
  )
}, 120_000)
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)), 30_000)

/** What a loaded machine may add to a deadline. */
const SLACK_MILLIS = 1_000

/** A layer built from the cluster once it is up (the layers are built after `beforeAll`). */
const onCluster = <A, E>(make: (cluster: TestCluster) => Layer.Layer<A, E>): Layer.Layer<A, E> =>
  Layer.suspend(() => make(cluster))

/** The port of the primary that serves `key`. */
const primaryOf = (key: string) => Effect.suspend(() => cluster.primaryOf(key))

// The breaker-store conformance suite. Its probe-lease tests take several permit slots in one Lua
// step, and every step is a script: a circuit's keys in two slots fail it with CROSSSLOT.
const prefix = uniquePrefix("cluster-contract")
const circuitKey = (name: string) => `${prefix}{${name}}:circuit`
const corruptions = onCluster(({ admin }) => {
  const hset = (name: string, fields: Record<string, string>) =>
    Effect.promise(() => admin.del(circuitKey(name)).then(() => admin.hset(circuitKey(name), fields)))
  return Layer.succeed(Corruptions, [
    ["times as text", (name) => hset(name, { state: "Open", until: "tomorrow", at: "9999999999999x", origin: "a" })],
    ["no time at all", (name) => hset(name, { state: "Open", until: "5000", origin: "a" })],
    [
      "a foreign state with a far-future time",
      (name) => hset(name, { state: "OPEN!", until: "1", at: "9e15", origin: "x" })
    ],
    ["an old schema's fields", (name) => hset(name, { status: "open", openedAt: "123", version: "1" })],
    [
      "a string where the hash belongs",
      (name) => Effect.promise(() => admin.set(circuitKey(name), "open")).pipe(Effect.asVoid)
    ]
  ])
})
storeSuite([
  [
    "Redis Cluster",
    Layer.provideMerge(
      onCluster(({ nodes }) => RedisBreakerStore.layer({ cluster: nodes, prefix })),
      corruptions
    ),
    { corruptible: true }
  ]
])

describe("Redis Cluster", () => {
  it.scopedLive(
    "a circuit's keys (verdict, probe leases) are on one node, and circuits spread over the primaries",
    () =>
      Effect.gen(function* () {
        const prefix = uniquePrefix("cluster-spread")
        const store = yield* RedisBreakerStore.make({ cluster: cluster.nodes, prefix })
        const names = Array.from({ length: 12 }, (_, i) => `spread-${i}`)
        for (const name of names) {
          const circuit = yield* store.connect(name)
          // Open with no time left (half-open, by the server's clock), so that the lease is given and
          // its key made: the store refuses a lease while the stored verdict still has time left.
          yield* circuit.verdict.save({ state: "Open", remainingMillis: 0, ageMillis: 0, origin: "a" })
          assert.isTrue(Option.isSome(yield* circuit.probes!.acquire({ permits: 1, leaseMillis: 60_000, now: 1_000 })))
        }
        // Where the store's keys are: each primary scanned for the keys under the prefix.
        const nodeOf = new Map<string, Set<string>>()
        for (const node of cluster.admin.nodes("master")) {
          const found = yield* Effect.promise(() => node.keys(`${prefix}*`))
          for (const key of found) {
            const name = names.find((n) => key.includes(`{${n}}`))
            assert.isDefined(name, `a key without its circuit's tag: ${key}`)
            const nodes = nodeOf.get(name!) ?? new Set()
            nodes.add(`${node.options.port}`)
            nodeOf.set(name!, nodes)
            if (key.includes(":probe:")) nodes.add(`probe`)
          }
        }
        const homes = new Set<string>()
        for (const name of names) {
          const nodes = Array.from(nodeOf.get(name) ?? []).filter((n) => n !== "probe")
          assert.isTrue(nodeOf.get(name)?.has("probe"), `no probe lease of ${name} found`)
          assert.strictEqual(nodes.length, 1, `the keys of ${name} are on ${nodes.length} nodes`)
          homes.add(nodes[0]!)
        }
        assert.isAbove(homes.size, 1, "every circuit on one primary: the names are not what is hashed")
      })
  )

  it.scopedLive("a closed success sends no command to any node", () =>
    Effect.gen(function* () {
      const prefix = uniquePrefix("cluster-quiet")
      const key = `${prefix}{payments}:circuit`
      // Every command each primary executes once the breaker is made, apart from what clients do to
      // follow the cluster (CLUSTER SLOTS), to look at it (INFO) or to connect. Watched from before
      // the store starts (a MONITOR that starts amid traffic can misread it).
      const watched = yield* watchCommands(cluster.admin.nodes("master"))
      const store = yield* Layer.build(RedisBreakerStore.layer({ cluster: cluster.nodes, prefix }))
      const breaker = yield* CircuitBreaker.make({ name: "payments", policy: Policy.consecutiveFailures(1) }).pipe(
        Effect.provide(store)
      )
      const from = watched.length
      const data = (c: Seen) => !/^(cluster|info|ping|command|client|readonly|hello|select)/.test(c.name)
      for (let i = 0; i < 200; i++) yield* CircuitBreaker.withBreaker(Effect.void, breaker)
      // a failure does reach the cluster, after anything the calls before it made the store owe
      // (one writer, in order, to the circuit's one primary)
      yield* result(CircuitBreaker.withBreaker(Effect.fail("boom"), breaker))
      // its report: a script on the circuit's key that does more than read it (counts, or the verdict it made)
      const isReport = (c: Seen) => /^eval/.test(c.name) && c.args[2] === key && c.args.length > 3
      yield* waitFor(
        "the failure's report to reach the circuit's primary",
        Effect.sync(() => watched.slice(from).some(isReport))
      )
      // Before it, nothing but what the store's startup may still send (its resync on ready: the
      // subscription, a read of the stored verdict): no call sends either.
      const isStartup = (c: Seen) => c.name === "subscribe" || (/^eval/.test(c.name) && c.args.length === 3)
      const seen = watched.slice(from)
      const before = seen.slice(0, seen.findIndex(isReport)).filter((c) => data(c) && !isStartup(c))
      assert.deepStrictEqual(before, [])
    })
  )

  it.scopedLive("RedisStore: every operation, with keys on every primary, keys and size across all of them", () =>
    Effect.gen(function* () {
      const prefix = uniquePrefix("cluster-cache")
      const store = yield* RedisStore.make({ cluster: cluster.nodes, prefix })
      const keys = Array.from({ length: 30 }, (_, i) => `user:${i}`)
      for (const key of keys) assert.isTrue(yield* store.set(key, `v-${key}`, { ttl: "1 minute" }))
      const primaries = new Set<number>()
      for (const key of keys) primaries.add(yield* primaryOf(prefix + key))
      assert.strictEqual(primaries.size, 3, "the keys are not spread over the three primaries")

      expect(yield* store.get("user:7")).toStrictEqual(Option.some("v-user:7"))
      const entry = yield* store.getEntry!("user:7")
      assert.isTrue(Option.isSome(entry) && Option.isSome(entry.value.ttl))
      assert.deepStrictEqual((yield* store.keys("user:")).slice().sort(), keys.slice().sort())
      assert.strictEqual(yield* store.size, 30)
      assert.isTrue(yield* store.touch("user:1"))
      assert.strictEqual(yield* Effect.promise(() => cluster.admin.pttl(prefix + "user:1")), -1)
      assert.isTrue(yield* store.delete("user:2"))
      assert.isFalse(yield* store.delete("user:2"))
      assert.isTrue(Option.isNone(yield* store.get("user:2")))
      assert.strictEqual(yield* store.size, 29)
      assert.isTrue(yield* store.ping)
      yield* Effect.promise(() => Promise.all(keys.map((key) => cluster.admin.del(prefix + key))))
    })
  )

  it.scopedLive("RedisRetryBudget: two instances share one budget on the cluster", () =>
    Effect.gen(function* () {
      const prefix = uniquePrefix("cluster-budget")
      const options = { name: "payments", prefix, ratio: 0.5, minPerSecond: 0, cluster: cluster.nodes }
      const a = yield* RedisRetryBudget.make(options)
      const b = yield* RedisRetryBudget.make(options)
      for (let i = 0; i < 10; i++) yield* a.deposit // 5 tokens for the fleet
      assert.isTrue(yield* eventually(Effect.map(b.available, (n) => n === 5)))
      let spent = 0
      for (let i = 0; i < 3; i++) if (yield* b.tryWithdraw) spent++
      for (let i = 0; i < 3; i++) if (yield* a.tryWithdraw) spent++
      // b never deposited: alone it could not retry; the fleet had 5 tokens, and no more.
      assert.strictEqual(spent, 5)
      assert.strictEqual(yield* a.available, 0)
    })
  )

  it.scopedLive("an ioredis Cluster the application owns is used as it is and left open", () =>
    Effect.gen(function* () {
      const owned = new Cluster([...cluster.nodes], { lazyConnect: true })
      owned.on("error", () => {})
      yield* Effect.addFinalizer(() => Effect.sync(() => owned.disconnect()))
      yield* Effect.promise(() => owned.connect())
      const prefix = uniquePrefix("cluster-owned")
      yield* Effect.scoped(
        Effect.gen(function* () {
          const store = yield* RedisStore.make({ cluster: owned, prefix })
          assert.isTrue(yield* store.set("a", "1"))
          expect(yield* store.get("a")).toStrictEqual(Option.some("1"))
          // Two breaker stores on it: a verdict one saves reaches the other (its own subscriber).
          const a = yield* (yield* RedisBreakerStore.make({ cluster: owned, prefix })).connect("owned")
          const b = yield* (yield* RedisBreakerStore.make({ cluster: owned, prefix })).connect("owned")
          const told = yield* Edition.forkChild(Stream.runHead(b.verdict.watch))
          // both stores' subscribers are in place, on whichever nodes they are
          yield* subscribed(nodesOf(owned), `${prefix}verdicts`, 2)
          yield* a.verdict.save({ state: "Open", remainingMillis: 60_000, ageMillis: 0, origin: "a" })
          // as durations from the server's now when it published: aged by the transit at most
          const heard = Option.getOrThrow(yield* Fiber.join(told))
          expect([heard.state, heard.origin]).toStrictEqual(["Open", "a"])
          expect(heard.remainingMillis).toBeGreaterThan(55_000)
          expect(heard.remainingMillis).toBeLessThanOrEqual(60_000)
          expect(heard.ageMillis).toBeLessThan(5_000)
        })
      )
      assert.strictEqual(owned.status, "ready")
      assert.strictEqual(yield* Effect.promise(() => owned.get(prefix + "a")), RedisStore.ENVELOPE + "1")
      yield* Effect.promise(() => owned.del(prefix + "a"))
    })
  )
})

describe("Redis Cluster down", () => {
  it.scopedLive("with no node up, every adapter builds within seconds and its calls fail fast", () =>
    Effect.gen(function* () {
      // A port nothing listens on (a fresh ephemeral port, closed at once).
      const port = yield* Effect.promise(
        () =>
          new Promise<number>((resolve) => {
            const server = net.createServer().listen(0, "127.0.0.1", () => {
              const address = server.address()
              server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
            })
          })
      )
      const nodes = [{ host: "127.0.0.1", port }]
      const started = performance.now()
      const cache = yield* RedisStore.make({ cluster: nodes, prefix: "down:" })
      const breakers = yield* RedisBreakerStore.make({ cluster: nodes, prefix: "down:" })
      const budget = yield* RedisRetryBudget.make({ name: "down", cluster: nodes, minPerSecond: 0 })
      assert.isBelow(performance.now() - started, 10_000, "building waited on the missing cluster")

      const timed = <A, E>(self: Effect.Effect<A, E>) =>
        Effect.gen(function* () {
          const at = performance.now()
          const outcome = yield* result(self)
          return [outcome, performance.now() - at] as const
        })
      const [get, getMillis] = yield* timed(cache.get("a"))
      assert.isTrue(failureOf(get)?._tag === "CacheError")
      assert.isBelow(getMillis, 1_000 + SLACK_MILLIS)
      const circuit = yield* breakers.connect("c")
      const [load, loadMillis] = yield* timed(circuit.verdict.load)
      assert.isTrue(failureOf(load)?._tag === "BreakerStoreError")
      assert.isBelow(loadMillis, 1_000 + SLACK_MILLIS)
      // The budget decides locally: no deposits, no floor, so no retry; and no wait past its deadline.
      const [spent, spendMillis] = yield* timed(budget.tryWithdraw)
      assert.deepStrictEqual(spent, Result.succeed(false))
      assert.isBelow(spendMillis, 100 + SLACK_MILLIS)
    })
  )
})

describe("Redis Cluster options", () => {
  it.effect("url and cluster together, or a cluster that is no cluster, are the one options error", () =>
    Effect.gen(function* () {
      const both = yield* result(
        Effect.scoped(RedisStore.make({ url: "redis://127.0.0.1:6379", cluster: [{ host: "127.0.0.1", port: 7000 }] }))
      )
      assert.isTrue(Result.isFailure(both))
      const bothError = failureOf(both)
      if (bothError !== undefined) {
        assert.strictEqual(bothError._tag, "InvalidRedisOptions")
        assert.include(bothError.message, "url and cluster")
      }
      const empty = failureOf(yield* result(Effect.scoped(RedisBreakerStore.make({ cluster: [] }))))
      assert.isTrue(empty !== undefined && empty.message.startsWith("cluster must be"))
      const port = failureOf(
        yield* result(Effect.scoped(RedisBreakerStore.make({ cluster: [{ host: "127.0.0.1", port: 70_000 }] })))
      )
      assert.isTrue(port !== undefined && port.message.includes("cluster"))
      const budget = yield* result(
        Effect.scoped(RedisRetryBudget.make({ name: "x", cluster: ["http://127.0.0.1:7000"] }))
      )
      assert.isTrue(Result.isFailure(budget))
      const budgetError = failureOf(budget)
      if (budgetError !== undefined) {
        assert.strictEqual(budgetError._tag, "InvalidRedisOptions")
        assert.include(budgetError.message, "cluster")
      }
    })
  )
})
