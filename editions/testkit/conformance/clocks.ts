/**
 * A fleet of breakers on one shared store, as one suite for every backend (memory, Redis, SQLite,
 * PostgreSQL), like `storeSuite` (./breakerStore.ts): members whose clocks disagree by ±5 s, and the
 * fleet-wide operations (isolate, reset, extendOpen) with who asked for them. It needs only the
 * store's verdict channel.
 *
 * ```ts
 * import { clocksSuite } from "@circuitry/testkit/conformance/clocks"
 * ```
 *
 * Each member runs on a clock of its own: the fleet's clock plus an offset (`offsetClock`), so a
 * member 5 s ahead reads every instant 5 s later than the fleet's clock, and 10 s later than a
 * member 5 s behind. The fleet's clock is the TestClock, plus, for a backend whose store's clock is
 * a server's that runs on while members wait for a poll (`realTime`), the real time since the test
 * began: members' clocks then run as the server's does, as real clocks do. The store keeps its own
 * clock (the memory store's is the TestClock; a server's is real). Members agree on the half-open
 * moment when each one's `until`, less its offset, is the same instant of the fleet's clock, within
 * the backend's `boundMillis`.
 */
import * as Edition from "@circuitry/core/Edition"
import type { BreakerStore } from "@circuitry/breaker"
import { BreakerStore as Store, CircuitBreaker, Policy } from "@circuitry/breaker"
import {
  assert,
  describe,
  drain,
  it,
  makeClock,
  result,
  type ServiceOf,
  type Subscription,
  take,
  TestClock,
  withClock,
  yieldNow
} from "@circuitry/testkit"
import { Clock, Effect, Option } from "effect"
import type { Scope } from "effect"

/**
 * A clock `offset` milliseconds off `base` (ahead when positive), plus `drift()` milliseconds (the
 * real time a backend's fleet clock follows); it sleeps on `base`.
 */
export const offsetClock = (base: Clock.Clock, offset: number, drift: () => number = () => 0): Clock.Clock =>
  makeClock(base, () => Edition.nowUnsafe(base) + offset + drift())

/** One member's way into the shared store, and how to make it read the store now (a poll), if it must. */
export interface Joined {
  readonly store: ServiceOf<typeof BreakerStore.BreakerStore>
  readonly nudge: Effect.Effect<void>
}

export interface FleetBackend {
  readonly name: string
  /** A fresh fleet (a prefix, a table, a store of its own); `join` adds one member's store connection. */
  readonly fleet: Effect.Effect<{ readonly join: Effect.Effect<Joined, unknown, Scope.Scope> }, unknown, Scope.Scope>
  /**
   * How far apart (in the fleet's time) members may half-open. 0 where a verdict reaches the
   * members in the instant it is saved (memory, Redis pub/sub) and members' clocks stand still
   * meanwhile. With members' clocks in real time, the transit of the save and of the read (a poll)
   * moves it either way (a few ms; bounded for a busy machine).
   */
  readonly boundMillis: number
  /** Members' clocks run in real time too (see above): for a store whose clock is a server's, read by a poll. */
  readonly realTime: boolean
  /**
   * The store's clock is a server's, and a member may read a verdict back after it heard it (the
   * resync that follows a connection's ready): the read is aged by the server's real time since the
   * save, so with members' clocks standing still they may also disagree by up to the real time the
   * test has taken since the trip.
   */
  readonly readBackAges?: boolean
}

const OPEN_FOR = 30_000

/** The fleet's clock: the TestClock, plus the real time since it was made when the backend runs in real time. */
interface FleetClock {
  readonly drift: () => number
  readonly now: Effect.Effect<number>
  /** Moves the TestClock so that the fleet's clock reads `instant` (never back). */
  readonly adjustTo: (instant: number) => Effect.Effect<void>
}

const fleetClock = (realTime: boolean): Effect.Effect<FleetClock> =>
  Effect.map(Effect.clockWith(Effect.succeed), (base) => {
    const started = performance.now()
    const drift = realTime ? () => Math.floor(performance.now() - started) : () => 0
    const now = Effect.sync(() => Edition.nowUnsafe(base) + drift())
    return {
      drift,
      now,
      adjustTo: (instant) => Effect.flatMap(now, (at) => TestClock.adjust(Math.max(0, instant - at)))
    }
  })

/** A breaker on a clock of its own: every use of it goes through `run`, on that clock. */
interface Member {
  readonly offset: number
  readonly breaker: CircuitBreaker.CircuitBreaker
  readonly changes: Subscription<CircuitBreaker.Transition>
  readonly nudge: Effect.Effect<void>
  readonly run: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

const member = (join: Effect.Effect<Joined, unknown, Scope.Scope>, clock: FleetClock, name: string, offset: number) =>
  Effect.gen(function* () {
    const joined = yield* join
    const own = offsetClock(yield* Effect.clockWith(Effect.succeed), offset, clock.drift)
    const run = <A, E, R>(effect: Effect.Effect<A, E, R>) => withClock(effect, own)
    const breaker = yield* run(
      CircuitBreaker.make({ name, policy: Policy.consecutiveFailures(2), openFor: OPEN_FOR }).pipe(
        Effect.provideService(Store.BreakerStore, joined.store)
      )
    )
    const changes = yield* breaker.subscribe
    return { offset, breaker, changes, nudge: joined.nudge, run } satisfies Member
  })

/** Three members of one circuit: 5 s ahead, on time, 5 s behind. */
const threeMembers = (backend: FleetBackend) =>
  Effect.gen(function* () {
    const { join } = yield* backend.fleet
    const clock = yield* fleetClock(backend.realTime)
    const name = freshName()
    const ahead = yield* member(join, clock, name, 5_000)
    const onTime = yield* member(join, clock, name, 0)
    const behind = yield* member(join, clock, name, -5_000)
    return { join, clock, name, ahead, onTime, behind, fleet: [ahead, onTime, behind] }
  })

const tagOf = (m: Member) => m.run(Effect.map(m.breaker.state, (s) => s._tag))

/** When `m` half-opens, as an instant of the fleet's clock (its own `until` less its offset). */
const halfOpensAt = (m: Member) =>
  m.run(Effect.map(m.breaker.state, (s) => (s._tag === "Open" ? s.until - m.offset : Number.NaN)))

const trip = (m: Member) =>
  m.run(Effect.repeat(result(CircuitBreaker.withBreaker(Effect.fail("boom"), m.breaker)), { times: 1 }))

/**
 * Waits until `done` holds, nudging every member (a poll) and letting real time pass (delivery may
 * cross a network), for at most 10 seconds of real time. The TestClock does not move meanwhile.
 */
const eventually = (members: ReadonlyArray<Member>, done: Effect.Effect<boolean>, what: string) =>
  Effect.gen(function* () {
    for (let i = 0; i < 1_000; i++) {
      if (yield* done) return
      for (const m of members) yield* m.nudge
      for (let j = 0; j < 20; j++) yield* yieldNow
      if (yield* done) return
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
    assert.fail(`not within 10 seconds: ${what}`)
  })

const allAre = (members: ReadonlyArray<Member>, tag: CircuitBreaker.StateTag) =>
  Effect.map(Effect.forEach(members, tagOf), (tags) => tags.every((t) => t === tag))

/** The next transition `m` announces to `to`, skipping others (e.g. HalfOpen on the way). */
const nextTo = (m: Member, to: CircuitBreaker.StateTag) =>
  Effect.gen(function* () {
    for (;;) {
      const t = yield* take(m.changes)
      if (t.to === to) return t
    }
  })

let counter = 0
const freshName = () => `fleet-${process.pid}-${Date.now().toString(36)}-${counter++}`

export const clocksSuite = (backends: ReadonlyArray<FleetBackend>): void => {
  for (const backend of backends) {
    describe(`fleet on ${backend.name}`, () => {
      const bound = backend.boundMillis
      // With members' clocks in real time, the fleet's clock moves (ms) between moving the TestClock
      // and reading the states: each check keeps this far from the moment it is about.
      const margin = backend.realTime ? 500 : 1

      it.scoped("members whose clocks are 5 s ahead, on time and 5 s behind half-open at the same moment", () =>
        Effect.gen(function* () {
          const { ahead, clock, fleet } = yield* threeMembers(backend)
          // the member ahead trips (at 5 s past the fleet's clock, by its own)
          const tripped = yield* clock.now
          const trippedReal = performance.now()
          yield* trip(ahead)
          const at = yield* halfOpensAt(ahead)
          assert.isTrue(at >= tripped + OPEN_FOR && at <= tripped + OPEN_FOR + margin, `half-opens at ${at}`)
          yield* eventually(fleet, allAre(fleet, "Open"), "every member open")
          const ats = yield* Effect.forEach(fleet, halfOpensAt)
          const allowed = bound + (backend.readBackAges === true ? Math.ceil(performance.now() - trippedReal) : 0)
          for (const [i, other] of ats.entries()) {
            assert.isTrue(
              Math.abs(other - at) <= allowed,
              `a member ${fleet[i]!.offset} ms off half-opens at ${other}, the one that tripped at ${at} (bound ${allowed} ms)`
            )
          }
          // the measured spread, for docs/fleet.md
          console.log(
            `fleet on ${backend.name}: members 5 s apart half-open within ${Math.max(...ats) - Math.min(...ats)} ms`
          )
          // the moment comes for all of them together, whatever their clocks read
          // (in real time the fleet's clock runs on during the read: on a busy machine a read can end
          // past the moment itself, and then a member may rightly be half-open already)
          yield* clock.adjustTo(Math.min(...ats) - margin)
          const open = yield* allAre(fleet, "Open")
          const readBy = yield* clock.now
          assert.isTrue(open || readBy >= Math.min(...ats), `a member half-open before its moment (read by ${readBy})`)
          yield* clock.adjustTo(Math.max(...ats))
          assert.isTrue(yield* allAre(fleet, "HalfOpen"))
        })
      )

      it.scoped(
        "a member 5 s behind resets and isolates a circuit opened by one 5 s ahead; the fleet is told who",
        () =>
          Effect.gen(function* () {
            const { ahead, behind, fleet, onTime } = yield* threeMembers(backend)
            yield* trip(ahead)
            yield* eventually(fleet, allAre(fleet, "Open"), "every member open")
            const origin = (yield* nextTo(behind, "Open")).origin
            assert.isString(origin, "an adopted verdict names the member that made it")

            // reset by an operator on the member whose clock reads 10 s earlier than the opener's
            yield* behind.run(behind.breaker.resetBy("alice"))
            const closed = yield* nextTo(behind, "Closed")
            assert.deepStrictEqual([closed.by, closed.origin], ["alice", undefined])
            yield* eventually(fleet, allAre(fleet, "Closed"), "every member closed")
            for (const m of [ahead, onTime]) {
              const t = yield* nextTo(m, "Closed")
              assert.strictEqual(t.by, "alice")
              assert.isString(t.origin)
              assert.notStrictEqual(t.origin, origin, "the reset is the member behind's verdict")
            }

            // isolated from the member behind: everyone rejects, and is told who
            yield* behind.run(behind.breaker.isolateBy("bob"))
            yield* eventually(fleet, allAre(fleet, "Isolated"), "every member isolated")
            for (const m of fleet) assert.strictEqual((yield* nextTo(m, "Isolated")).by, "bob")
            // and reset from the member ahead, without a name: the transition names no one
            yield* ahead.run(ahead.breaker.reset)
            yield* eventually(fleet, allAre(fleet, "Closed"), "every member closed again")
            for (const m of fleet) assert.isUndefined((yield* nextTo(m, "Closed")).by)
          })
      )

      it.scoped("extendOpen on one member keeps the whole fleet open longer, and the store says who", () =>
        Effect.gen(function* () {
          const { ahead, behind, clock, fleet, join, name } = yield* threeMembers(backend)
          yield* trip(ahead)
          yield* eventually(fleet, allAre(fleet, "Open"), "every member open")
          const first = yield* halfOpensAt(ahead)
          // the member behind extends, by its own clock: 60 s later than it half-opens now
          const until = yield* behind.run(Effect.map(behind.breaker.state, (s) => (s._tag === "Open" ? s.until : 0)))
          yield* behind.run(behind.breaker.extendOpen(until + 60_000, { by: "carol" }))
          const extended = until - behind.offset + 60_000
          yield* eventually(
            fleet,
            Effect.map(Effect.forEach(fleet, halfOpensAt), (ats) => ats.every((at) => at > first + bound)),
            "every member open longer"
          )
          const ats = yield* Effect.forEach(fleet, halfOpensAt)
          for (const [i, at] of ats.entries()) {
            assert.isTrue(
              Math.abs(at - extended) <= bound,
              `a member ${fleet[i]!.offset} ms off half-opens at ${at}, expected ${extended} (bound ${bound} ms)`
            )
          }
          // the stored verdict says who asked
          const { store } = yield* join
          const stored = yield* Effect.flatMap(store.connect(name), (circuit) => circuit.verdict.load)
          assert.deepStrictEqual(
            Option.map(stored, (v) => [v.state, v.by]),
            Option.some(["Open", "carol"])
          )
          // an extension is no transition: nobody announced anything since opening
          for (const m of fleet) {
            const announced = Array.from(yield* drain(m.changes), (t) => t.to)
            assert.deepStrictEqual(announced, ["Open"])
          }
          // past the first episode's end every member is still open; at the extended end all half-open
          yield* clock.adjustTo(first + margin)
          assert.isTrue(yield* allAre(fleet, "Open"))
          yield* clock.adjustTo(Math.max(...ats))
          assert.isTrue(yield* allAre(fleet, "HalfOpen"))
        })
      )
    })
  }
}
