/**
 * `sharing.quorum` on real Redis: every member a breaker with a RedisBreakerStore (so connections)
 * of its own. Decisions read the TestClock; what crosses the network is awaited in real time,
 * bounded (`waitFor`), and every negative claim ("only itself") is checked once the store has
 * provably received what could have changed it.
 */
import { BreakerStore, CircuitBreaker, Policy } from "@circuitry/breaker"
import { RedisBreakerStore } from "@circuitry/redis"
import { assert, describe, it, Result, result, TestClock } from "@circuitry/testkit"
import { Clock, Effect, Layer, Option } from "effect"
import { Redis } from "ioredis"
import { tcpProxy } from "../../../test-support/proxy.js"
import { cleanup, startServer, uniquePrefix } from "./utils/server.js"
import { openTimeOver, waitFor } from "./utils/wait.js"

const URL = "redis://127.0.0.1:6379"
const NAME = "payments"
const OPEN_FOR = 10_000

/**
 * The open time of a fleet that goes on to probe. The store refuses a probe lease while the stored
 * verdict is open by the server's clock, which runs in real time: the test waits it out for real,
 * so it is short.
 */
const PROBING_OPEN_FOR = 3_000

/** A fresh prefix on the shared test Redis, emptied when the test ends. */
const scratch = Effect.gen(function* () {
  const prefix = uniquePrefix("quorum")
  yield* Effect.acquireRelease(
    Effect.sync(() => new Redis(URL)),
    (client) => Effect.promise(() => cleanup(client, prefix).finally(() => client.disconnect()))
  )
  return prefix
})

type Sharing = CircuitBreaker.Options["sharing"]

/** One member of the fleet: a breaker on a store (two Redis connections) of its own. */
const member = (prefix: string, sharing: Sharing, url = URL, openFor = OPEN_FOR) =>
  Effect.gen(function* () {
    const store = yield* Layer.build(RedisBreakerStore.layer({ url, prefix }))
    return yield* CircuitBreaker.make({
      name: NAME,
      policy: Policy.consecutiveFailures(2),
      openFor,
      sharing
    }).pipe(Effect.provide(store))
  })

const fleet = (prefix: string, n: number, sharing: Sharing, openFor = OPEN_FOR) =>
  Effect.all(Array.from({ length: n }, () => member(prefix, sharing, URL, openFor)))

/** The circuit as the test reads it, on a connection of its own. */
const watch = (prefix: string, url = URL) =>
  Effect.gen(function* () {
    const store = yield* Layer.build(RedisBreakerStore.layer({ url, prefix }))
    const circuit = yield* Effect.flatMap(BreakerStore.BreakerStore, (s) => s.connect(NAME)).pipe(Effect.provide(store))
    return {
      circuit,
      load: Effect.orDie(circuit.verdict.load),
      /**
       * Distinct members whose latest trip, recorded in Redis, is at or after `since` (and not
       * before the stored verdict, put on the test's Clock).
       */
      trips: (since: number) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.orDie(circuit.fleet!.trips({ since, now }))),
      members: (since: number) => Effect.orDie(circuit.fleet!.members(since))
    }
  })

const tagOf = (breaker: CircuitBreaker.CircuitBreaker) => Effect.map(breaker.state, (s) => s._tag)
const tags = (members: ReadonlyArray<CircuitBreaker.CircuitBreaker>) => Effect.forEach(members, tagOf)
const fail = (breaker: CircuitBreaker.CircuitBreaker) =>
  result(CircuitBreaker.withBreaker(Effect.fail("boom"), breaker))
const trip = (breaker: CircuitBreaker.CircuitBreaker) =>
  Effect.gen(function* () {
    yield* fail(breaker)
    yield* fail(breaker)
    assert.strictEqual(yield* tagOf(breaker), "Open", "its own policy opens it at once")
  })

/** Waits (real time, bounded) until `condition` holds; fails the test with `what` if it never does. */
const until = waitFor

const allAre = (members: ReadonlyArray<CircuitBreaker.CircuitBreaker>, tag: CircuitBreaker.StateTag) =>
  Effect.map(tags(members), (ts) => ts.every((t) => t === tag))

describe("sharing.quorum on Redis", () => {
  it.scoped(
    "quorum 3 of 10: one member failing every call opens only itself",
    () =>
      Effect.gen(function* () {
        const prefix = yield* scratch
        const members = yield* fleet(prefix, 10, { quorum: 3 })
        const store = yield* watch(prefix)
        const [bad, ...healthy] = members
        for (let episode = 0; episode < 4; episode++) {
          const now = episode * OPEN_FOR
          if (episode === 0) yield* trip(bad!)
          else {
            assert.strictEqual(yield* tagOf(bad!), "HalfOpen")
            // its probe is its own: it runs though the fleet's probe lease is held (here, by the test)
            const held = yield* Effect.orDie(store.circuit.probes!.acquire({ permits: 1, leaseMillis: 60_000, now }))
            assert.isTrue(Option.isSome(held))
            let runs = 0
            yield* result(
              CircuitBreaker.withBreaker(
                Effect.suspend(() => Effect.fail(++runs)),
                bad!
              )
            )
            assert.strictEqual(runs, 1)
            assert.strictEqual(yield* tagOf(bad!), "Open", "its probe failed: open again, alone")
            yield* Effect.orDie(store.circuit.probes!.release(Option.getOrThrow(held)))
          }
          // the store has this episode's trip, and it is one member's
          yield* until(
            "the trip reaches Redis",
            Effect.map(store.trips(now), (n) => n === 1)
          )
          assert.isTrue(Option.isNone(yield* store.load), "no fleet verdict")
          assert.deepStrictEqual(yield* tags(healthy), Array(9).fill("Closed"))
          for (const m of healthy)
            assert.isTrue(Result.isSuccess(yield* CircuitBreaker.withBreaker(Effect.succeed(1), m).pipe(result)))
          assert.deepStrictEqual((yield* bad!.snapshot).store, { connected: true, local: true })
          yield* TestClock.adjust(OPEN_FOR)
        }
        assert.strictEqual(yield* store.trips(0), 1)
      }),
    60_000
  )

  it.scoped(
    "quorum 3 of 10: three members failing within the window open the fleet; a member joining then adopts it",
    () =>
      Effect.gen(function* () {
        const prefix = yield* scratch
        const members = yield* fleet(prefix, 10, { quorum: 3, quorumWindow: "30 seconds" }, PROBING_OPEN_FOR)
        const store = yield* watch(prefix)
        yield* trip(members[0]!)
        yield* until(
          "the first trip reaches Redis",
          Effect.map(store.trips(0), (n) => n === 1)
        )
        yield* TestClock.adjust("2 seconds")
        yield* trip(members[1]!)
        yield* until(
          "the second trip reaches Redis",
          Effect.map(store.trips(0), (n) => n === 2)
        )
        assert.isTrue(Option.isNone(yield* store.load), "two of three: no fleet verdict yet")
        assert.deepStrictEqual(yield* tags(members.slice(2)), Array(8).fill("Closed"))
        yield* TestClock.adjust("2 seconds")
        yield* trip(members[2]!)
        // the third trip opens the fleet: every member, the seven that never failed too
        yield* until("every member opens", allAre(members, "Open"))
        const verdict = Option.getOrThrow(yield* store.load)
        assert.strictEqual(verdict.state, "Open")
        // made at 4 s (the TestClock's now) by the server's clock: read back a little older (real time)
        assert.isBelow(verdict.ageMillis, 2_000)
        assert.isAbove(verdict.remainingMillis, PROBING_OPEN_FOR - 2_000)
        for (const m of members.slice(3)) {
          // told by pub/sub with the time left as the save computed it: exactly the saver's
          assert.deepStrictEqual(yield* m.state, CircuitBreaker.State.Open({ until: 4_000 + PROBING_OPEN_FOR }))
          assert.deepStrictEqual((yield* m.snapshot).store, { connected: true, local: false })
        }
        // a member joining mid-episode adopts the fleet's state at once (read a little later, real time)
        const late = yield* member(prefix, { quorum: 3, quorumWindow: "30 seconds" }, URL, PROBING_OPEN_FOR)
        const lateState = yield* late.state
        assert.strictEqual(lateState._tag, "Open")
        if (lateState._tag === "Open") {
          assert.isAtMost(lateState.until, 4_000 + PROBING_OPEN_FOR)
          assert.isAbove(lateState.until, 4_000 + PROBING_OPEN_FOR - 2_000)
        }
        // the fleet probes once, and its success closes every member: once the open time is over
        // on the server's clock (real time), then on the members' TestClock
        yield* Effect.acquireRelease(
          Effect.sync(() => new Redis(URL)),
          (client) => Effect.sync(() => client.disconnect())
        ).pipe(Effect.flatMap((admin) => openTimeOver(admin, `${prefix}{${NAME}}:circuit`)))
        yield* TestClock.adjust(PROBING_OPEN_FOR)
        let runs = 0
        const results = yield* Effect.forEach(
          [...members, late],
          (m) =>
            result(
              CircuitBreaker.withBreaker(
                Effect.sync(() => ++runs),
                m
              )
            ),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(runs, 1)
        assert.strictEqual(results.filter((r) => Result.isSuccess(r)).length, 1)
        yield* until("every member closes", allAre([...members, late], "Closed"))
      }),
    60_000
  )

  it.scoped(
    "failures spread beyond the window do not open the fleet",
    () =>
      Effect.gen(function* () {
        const prefix = yield* scratch
        const members = yield* fleet(prefix, 10, { quorum: 3, quorumWindow: "5 seconds" })
        const store = yield* watch(prefix)
        for (let i = 0; i < 4; i++) {
          const now = i * 6_000
          yield* trip(members[i]!)
          // recorded, and alone in its window
          yield* until(
            "the trip reaches Redis",
            Effect.map(store.trips(now), (n) => n === 1)
          )
          assert.strictEqual(yield* store.trips(now - 5_000), 1)
          assert.isTrue(Option.isNone(yield* store.load))
          assert.deepStrictEqual(yield* tags(members.slice(i + 1)), Array(9 - i).fill("Closed"))
          yield* TestClock.adjust("6 seconds")
        }
        // four members tripped in all, never two within 5 seconds; the six others never opened
        assert.deepStrictEqual(yield* tags(members.slice(4)), Array(6).fill("Closed"))
        assert.isTrue(Option.isNone(yield* store.load))
      }),
    60_000
  )

  it.scoped(
    "a fraction quorum is of the live members, by heartbeat",
    () =>
      Effect.gen(function* () {
        const prefix = yield* scratch
        // 30% of 10 live members: 3 trips
        const members = yield* fleet(prefix, 10, { quorum: { fraction: 0.3 } })
        const store = yield* watch(prefix)
        yield* until(
          "every member's heartbeat reaches Redis",
          Effect.map(store.members(0), (n) => n === 10)
        )
        yield* trip(members[0]!)
        yield* trip(members[1]!)
        yield* until(
          "two trips reach Redis",
          Effect.map(store.trips(0), (n) => n === 2)
        )
        assert.isTrue(Option.isNone(yield* store.load))
        assert.deepStrictEqual(yield* tags(members.slice(2)), Array(8).fill("Closed"))
        yield* trip(members[2]!)
        yield* until("every member opens", allAre(members, "Open"))
        // members that leave stop beating: past the heartbeat's 15 s life they no longer count
        yield* Effect.scoped(
          Effect.gen(function* () {
            const many = yield* fleet(prefix, 5, { quorum: { fraction: 0.3 } })
            yield* until(
              "5 more heartbeats",
              Effect.map(store.members(0), (n) => n === 15)
            )
            return many
          })
        )
        for (let i = 0; i < 4; i++) {
          yield* TestClock.adjust("5 seconds") // the fleet's members beat again
          yield* until(
            "the 10 beat",
            Effect.map(store.members(i * 5_000 + 5_000), (n) => n === 10)
          )
        }
        assert.strictEqual(yield* store.members(20_000 - 15_000), 10, "the 5 that left are no longer live")
      }),
    60_000
  )

  it.scoped(
    "partition: a member that loses Redis decides locally, loses no count, and converges when the path returns",
    () =>
      Effect.gen(function* () {
        const server = yield* startServer
        const path = yield* tcpProxy(server.port)
        const prefix = uniquePrefix("partition")
        const sharing = { quorum: 2 } as const
        const connected = yield* Effect.all([1, 2, 3].map(() => member(prefix, sharing, server.url)))
        const cutOff = yield* member(prefix, sharing, `redis://127.0.0.1:${path.port}`)
        const store = yield* watch(prefix, server.url)
        const everyone = [...connected, cutOff]
        yield* until(
          "every heartbeat reaches Redis",
          Effect.map(store.members(0), (n) => n === 4)
        )

        yield* path.cut
        // cut off: it judges its calls alone, at once, and opens itself
        yield* trip(cutOff)
        assert.isTrue(Result.isFailure(yield* result(CircuitBreaker.withBreaker(Effect.succeed(1), cutOff))))
        yield* until(
          "it knows the store is gone",
          Effect.map(cutOff.snapshot, (s) => s.store?.connected === false)
        )
        // one connected member trips too: one trip reaches Redis, below the quorum of 2
        yield* trip(connected[0]!)
        yield* until(
          "the connected member's trip reaches Redis",
          Effect.map(store.trips(0), (n) => n === 1)
        )
        yield* TestClock.adjust("3 seconds") // the cut-off member's writer retries, in vain
        assert.strictEqual(yield* store.trips(0), 1)
        assert.isTrue(Option.isNone(yield* store.load))
        assert.deepStrictEqual(yield* tags(connected.slice(1)), ["Closed", "Closed"])

        // the path returns: its trip was kept, reaches Redis, and is the second: the fleet opens
        yield* path.restore
        yield* until(
          "the fleet opens",
          Effect.andThen(
            TestClock.adjust("100 millis"), // the writer retries every second of the Clock
            allAre(everyone, "Open")
          ),
          20_000
        )
        assert.strictEqual(yield* Effect.promise(() => server.admin.zcard(`${prefix}{${NAME}}:trips`)), 2)
        const verdict = Option.getOrThrow(yield* store.load)
        assert.strictEqual(verdict.state, "Open")
        for (const m of everyone) {
          const snapshot = yield* m.snapshot
          assert.deepStrictEqual(snapshot.store, { connected: true, local: false })
        }
      }),
    60_000
  )
})
