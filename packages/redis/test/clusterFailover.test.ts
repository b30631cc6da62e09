import { BreakerStore, CircuitBreaker, Policy } from "@circuitry/breaker"
import { RedisBreakerStore } from "@circuitry/redis"
import * as Edition from "@circuitry/core/Edition"
import { assert, describe, it, result } from "@circuitry/testkit"
import { Duration, Effect, Exit, Fiber, Layer, Option } from "effect"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { startCluster } from "./utils/cluster.js"
import { failureOf, successOf } from "./utils/outcome.js"
import { eventually, uniquePrefix } from "./utils/server.js"
import { type Seen, watchCommands } from "./utils/wait.js"

// A primary of a real Redis Cluster (3 primaries, a replica each) killed with SIGKILL while the
// members of a fleet trip and adopt verdicts. Real time throughout (a failover is real): the
// cluster's node timeout is 2 s, and every wait is bounded with room for a loaded machine.

const DEADLINE_MILLIS = 300
/**
 * What a loaded machine may add to a deadline before a call counts as held past it. The bound
 * stays below the node timeout: a call held until the failover would take longer than that.
 */
const SLACK_MILLIS = 900
const NODE_TIMEOUT_MILLIS = 2_000

const tagOf = (breaker: CircuitBreaker.CircuitBreaker) => Effect.map(breaker.state, (s) => s._tag)

describe("Redis Cluster failover", () => {
  it.scopedLive(
    "a primary killed mid-run: no call is held past its deadline, nothing crashes, verdicts converge after the failover",
    () =>
      Effect.gen(function* () {
        const cluster = yield* startCluster({ replicas: true, nodeTimeoutMillis: NODE_TIMEOUT_MILLIS })
        const prefix = uniquePrefix("cluster-failover")
        const name = "checkout"
        const options: RedisBreakerStore.Options = {
          cluster: cluster.nodes,
          prefix,
          deadline: Duration.millis(DEADLINE_MILLIS),
          liveness: "1 second"
        }

        // Three members, each on connections of its own (as three processes would be).
        const failing = [false, false, false]
        const members = yield* Effect.forEach(failing, () =>
          Effect.gen(function* () {
            const store = yield* Layer.build(RedisBreakerStore.layer(options))
            return yield* CircuitBreaker.make({
              name,
              policy: Policy.consecutiveFailures(1),
              openFor: "1 minute"
            }).pipe(Effect.provide(store))
          })
        )
        // A fourth store, whose calls are timed one by one: each must end within its deadline.
        const watcher = yield* RedisBreakerStore.make(options)
        const watched = yield* watcher.connect(name)
        // A fifth store, for what the test reads to check values (not timed): a loaded machine may
        // hold its reply past 300 ms, which says nothing of the store.
        const reader = yield* (yield* RedisBreakerStore.make({
          ...options,
          deadline: "10 seconds",
          liveness: "10 seconds"
        })).connect(name)

        // The load: every member calls through its breaker all the time; the watcher reads.
        // The event loop's own worst delay in the run is added to the bound: a loaded machine's
        // stall is not the store holding a call.
        const loopDelay = monitorEventLoopDelay({ resolution: 10 })
        loopDelay.enable()
        yield* Effect.addFinalizer(() => Effect.sync(() => loopDelay.disable()))
        let slowestCall = 0
        let slowestStoreCall = 0
        let storeFailures = 0
        let running = true
        const load = yield* Effect.forEach(members, (breaker, i) =>
          Edition.forkChild(
            Effect.gen(function* () {
              while (running) {
                const started = performance.now()
                const call = failing[i] ? Effect.fail("boom" as const) : Effect.succeed("ok" as const)
                yield* result(CircuitBreaker.withBreaker(call, breaker))
                slowestCall = Math.max(slowestCall, performance.now() - started)
                yield* Effect.sleep("10 millis") // the load's pace, on the live Clock
              }
            })
          )
        )
        const reads = yield* Edition.forkChild(
          Effect.gen(function* () {
            while (running) {
              const started = performance.now()
              const error = failureOf(yield* result(watched.verdict.load))
              slowestStoreCall = Math.max(slowestStoreCall, performance.now() - started)
              if (error !== undefined) {
                assert.instanceOf(error, BreakerStore.BreakerStoreError)
                storeFailures++
              }
              yield* Effect.sleep("20 millis") // the reads' pace, on the live Clock
            }
          })
        )

        // The control: a fiber that sleeps one deadline at a time on the live Clock, as the store's
        // deadline sweeper does (deadlines.ts). How late it wakes is what this machine adds to any
        // deadline at the moment, the store aside; a call held by the store goes past that.
        let lateWake = 0
        const control = yield* Edition.forkChild(
          Effect.gen(function* () {
            while (running) {
              const started = performance.now()
              yield* Effect.sleep(Duration.millis(DEADLINE_MILLIS))
              lateWake = Math.max(lateWake, performance.now() - started - DEADLINE_MILLIS)
            }
          })
        )

        const allAre = (tag: string) =>
          Effect.map(Effect.forEach(members, tagOf), (tags) => tags.every((t) => t === tag))

        // Before: one member's trip reaches the fleet.
        failing[0] = true
        assert.isTrue(yield* eventually(allAre("Open"), 10_000), "the first trip did not reach every member")
        failing[0] = false
        yield* Effect.forEach(members, (m) => m.reset, { discard: true })
        assert.isTrue(yield* allAre("Closed"))
        const before = yield* reader.verdict.load
        assert.isTrue(Option.isSome(before))
        // When it was made, in real time (the members' clocks here): the server dates verdicts by
        // its clock, on this machine too.
        const beforeAt = Date.now() - Option.getOrThrow(before).ageMillis

        // The primary that serves the circuit is killed, and member 1 trips at once: its verdict
        // cannot be saved until a replica has taken over.
        const primary = yield* cluster.primaryOf(`${prefix}{${name}}:circuit`)
        yield* cluster.kill(primary)
        const killedAt = performance.now()
        failing[1] = true
        assert.isTrue(
          yield* eventually(
            Effect.map(tagOf(members[1]!), (t) => t === "Open"),
            10_000
          )
        )
        failing[1] = false

        // After the failover, member 1's verdict reaches the store and every member.
        assert.isTrue(yield* cluster.healthy(60_000), "the cluster did not fail over within 60 seconds")
        const outage = performance.now() - killedAt
        assert.isTrue(
          yield* eventually(allAre("Open"), 20_000),
          `the fleet did not converge after the failover: ${(yield* Effect.forEach(members, tagOf)).join(", ")}`
        )
        const after = yield* eventually(
          Effect.map(result(reader.verdict.load), (outcome) => {
            const v = successOf(outcome)
            return (
              v !== undefined &&
              Option.isSome(v) &&
              v.value.state === "Open" &&
              Date.now() - v.value.ageMillis > beforeAt
            )
          }),
          10_000
        )
        assert.isTrue(after, "the stored verdict is not member 1's trip")
        // The stored half-open moment in real time: the server's now at the load (this machine's
        // clock) is between the real times before and after it, however slow the load. Member 1 may
        // save its verdict again once the store answers (dated when the server runs it), so the
        // stored moment can still move while its publication is on its way: the members must
        // converge on it, checked until they have (or 10 s passed).
        let mismatches: ReadonlyArray<string> = []
        const converged = Effect.gen(function* () {
          const loadStart = Date.now()
          const stored = Option.getOrThrow(yield* reader.verdict.load)
          const loadEnd = Date.now()
          const found: Array<string> = []
          for (const [i, member] of members.entries()) {
            const state = yield* member.state
            if (state._tag !== "Open") {
              found.push(`member ${i} is ${state._tag}`)
              continue
            }
            // The members that adopted it: the same half-open moment, up to the publication's transit
            // (1 s allows for a busy machine). Member 1 keeps its own: its save went out as durations
            // while the slot failed over and was dated when the server ran it, so the stored moment
            // is later by the save's transit, at most one send's deadline (5 s; a send past it is
            // made again with the time left then).
            const transit = i === 1 ? 5_000 : 0
            const low = loadStart + stored.remainingMillis - 1_000 - transit
            const high = loadEnd + stored.remainingMillis + 1_000
            if (state.until < low || state.until > high) {
              found.push(`member ${i}: half-opens at ${state.until}, outside [${low}, ${high}]`)
            }
          }
          mismatches = found
          return found.length === 0
        })
        assert.isTrue(yield* eventually(converged, 10_000), mismatches.join("; "))

        running = false
        const exits = yield* Effect.forEach([...load, reads, control], Fiber.await)
        for (const exit of exits) assert.isTrue(Exit.isSuccess(exit), `a load fiber crashed: ${String(exit)}`)
        // The outage was seen (the watcher's reads failed during it) and held no call: none took
        // longer than its deadline, the machine's lateness (the worst of the event loop's delay and
        // the control's late wake) and a slack. A call held until the failover ended would.
        assert.isAbove(storeFailures, 0, "the kill was never seen by a store call")
        const bound = DEADLINE_MILLIS + SLACK_MILLIS + Math.max(loopDelay.max / 1e6, lateWake)
        assert.isAbove(outage, bound, "the failover was too short to tell a held call")
        console.log(
          `cluster failover: outage ${outage.toFixed(0)} ms; slowest store call ${slowestStoreCall.toFixed(0)} ms, ` +
            `slowest breaker call ${slowestCall.toFixed(0)} ms, against ${bound.toFixed(0)} ms (deadline ` +
            `${DEADLINE_MILLIS} + slack ${SLACK_MILLIS} + loop delay ${(loopDelay.max / 1e6).toFixed(0)} / late wake ${lateWake.toFixed(0)})`
        )
        assert.isBelow(slowestStoreCall, bound, "a store call was held past its deadline")
        assert.isBelow(slowestCall, bound, "a breaker call was held past the store deadline")
      }),
    180_000
  )

  it.scopedLive(
    "a node lost to a failover resyncs every member from the store (a verdict its subscriber may have missed)",
    () =>
      Effect.gen(function* () {
        const cluster = yield* startCluster({ replicas: true, nodeTimeoutMillis: NODE_TIMEOUT_MILLIS })
        const prefix = uniquePrefix("cluster-resync")
        const name = "quiet"
        const options: RedisBreakerStore.Options = {
          cluster: cluster.nodes,
          prefix,
          deadline: Duration.millis(DEADLINE_MILLIS)
        }
        const members = yield* Effect.forEach([0, 1], () =>
          Effect.gen(function* () {
            const store = yield* Layer.build(RedisBreakerStore.layer(options))
            return yield* CircuitBreaker.make({
              name,
              policy: Policy.consecutiveFailures(1),
              openFor: "1 minute"
            }).pipe(Effect.provide(store))
          })
        )
        // Each member's subscriber is in place, and so its first resync (which waits for the
        // subscription) has read the store: a verdict made by one member reaches the other, and back.
        yield* members[0]!.isolate
        assert.isTrue(
          yield* eventually(
            Effect.map(tagOf(members[1]!), (t) => t === "Isolated"),
            30_000
          )
        )
        yield* members[1]!.reset
        assert.isTrue(
          yield* eventually(
            Effect.map(tagOf(members[0]!), (t) => t === "Closed"),
            30_000
          )
        )

        // Another primary than the circuit's is chosen for the kill: the circuit's own slot stays up.
        const key = `${prefix}{${name}}:circuit`
        const home = yield* cluster.primaryOf(key)
        const primaries = new Set<number>()
        for (let i = 0; i < 64; i++) primaries.add(yield* cluster.primaryOf(`k${i}`))
        const victim = Array.from(primaries).find((port) => port !== home)
        assert.isDefined(victim)

        // A verdict written behind the fleet's back, never published: as if every subscriber had
        // missed its publication. The members cannot know of it until they read the store, which
        // the circuit's primary sees (MONITOR): none does before the node is lost. It is written
        // just before the kill, so that the window in which a member could read it for another
        // reason (a slots refresh that drops a node counts as a reconnect) is as short as it can be.
        const seen = yield* watchCommands(cluster.admin.nodes("master").filter((n) => n.options.port === home))
        const isRead = (c: Seen) => /^eval/.test(c.name) && c.args[2] === key && c.args.length === 3
        const now = Date.now()
        yield* Effect.promise(() =>
          cluster.admin.hset(key, { state: "Open", until: String(now + 60_000), at: String(now), origin: "elsewhere" })
        )
        for (const member of members) assert.strictEqual(yield* tagOf(member), "Closed")
        const readsBeforeTheLoss = seen.filter(isRead).length
        yield* cluster.kill(victim!)
        assert.isTrue(
          yield* eventually(
            Effect.map(Effect.forEach(members, tagOf), (tags) => tags.every((t) => t === "Open")),
            30_000
          ),
          "the members did not read the store after the node was lost"
        )
        assert.strictEqual(readsBeforeTheLoss, 0, "a member read the store before the node was lost")
        assert.isAbove(seen.filter(isRead).length, 0, "the primary saw no read of the circuit")
        // read as the time left by the server's clock (this machine's) and added to the members'
        // clocks (real time): the same moment, up to the read's transit (1 s allows for a busy machine)
        for (const member of members) {
          const state = yield* member.state
          if (state._tag === "Open") assert.isBelow(Math.abs(state.until - (now + 60_000)), 1_000)
        }
      }),
    180_000
  )
})
