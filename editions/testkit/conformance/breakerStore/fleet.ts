/**
 * The fleet membership's suite (`BreakerStore.FleetMembership`, what `sharing.quorum` counts), for a
 * backend that offers it: heartbeats and live members, trips counted once per member within a
 * window and not before the stored verdict (put on the caller's clock), members tripping at once.
 */
import { assert, describe } from "@circuitry/testkit"
import { Effect, Option } from "effect"
import { freshName, join, offered, type SuiteIt, verdict } from "./support.js"

/** Joins `name`: its verdict channel and its fleet membership. */
const joinFleet = (name: string) =>
  Effect.map(join(name), (circuit) => ({ verdict: circuit.verdict, fleet: offered(circuit, "fleet") }))

export const fleetSuite = (it: SuiteIt): void => {
  describe("heartbeats", () => {
    it.scoped("heartbeat and members count the members whose last heartbeat is at or after `since`", () =>
      Effect.gen(function* () {
        const name = freshName()
        const a = (yield* joinFleet(name)).fleet
        const b = (yield* joinFleet(name)).fleet
        assert.strictEqual(yield* a.members(0), 0)
        assert.strictEqual(yield* a.heartbeat({ member: "m1", now: 1_000, since: 0 }), 1)
        assert.strictEqual(yield* b.heartbeat({ member: "m2", now: 2_000, since: 0 }), 2)
        assert.strictEqual(yield* b.heartbeat({ member: "m3", now: 3_000, since: 0 }), 3)
        assert.strictEqual(yield* a.members(1_000), 3)
        assert.strictEqual(yield* b.members(2_000), 2)
        assert.strictEqual(yield* a.members(3_001), 0)
        // reading forgets nothing
        assert.strictEqual(yield* a.members(0), 3)
        // a heartbeat refreshes its member, and an earlier one never moves it back
        assert.strictEqual(yield* a.heartbeat({ member: "m1", now: 5_000, since: 0 }), 3)
        assert.strictEqual(yield* a.heartbeat({ member: "m1", now: 4_000, since: 4_000 }), 1)
        assert.strictEqual(yield* b.members(5_000), 1)
        // the heartbeats before `since` were forgotten by it
        assert.strictEqual(yield* b.members(0), 1)
        // another name has members of its own
        const other = (yield* joinFleet(freshName())).fleet
        assert.strictEqual(yield* other.members(0), 0)
        assert.strictEqual(yield* other.heartbeat({ member: "m1", now: 9_000, since: 0 }), 1)
        assert.strictEqual(yield* a.members(9_000), 0)
      })
    )
  })

  describe("trips", () => {
    it.scoped("recordTrip counts distinct members that tripped at or after `since`", () =>
      Effect.gen(function* () {
        const name = freshName()
        const a = yield* joinFleet(name)
        const b = (yield* joinFleet(name)).fleet
        const trip = (member: string, at: number, since: number) => ({ member, at, since, now: 3_000 })
        assert.strictEqual(yield* a.fleet.trips({ since: 0, now: 3_000 }), 0)
        assert.strictEqual(yield* a.fleet.recordTrip(trip("m1", 1_000, 0)), 1)
        // the same member again (a retry, or its next episode) still counts once
        assert.strictEqual(yield* b.recordTrip(trip("m1", 1_000, 0)), 1)
        assert.strictEqual(yield* b.recordTrip(trip("m1", 1_500, 0)), 1)
        assert.strictEqual(yield* b.recordTrip(trip("m2", 2_000, 0)), 2)
        // a window that starts later leaves the older trips out
        assert.strictEqual(yield* a.fleet.recordTrip(trip("m3", 3_000, 1_600)), 2)
        assert.strictEqual(yield* a.fleet.trips({ since: 2_001, now: 3_000 }), 1)
        // an earlier trip never replaces a member's later one
        yield* a.fleet.recordTrip(trip("m3", 100, 0))
        assert.strictEqual(yield* b.trips({ since: 3_000, now: 3_000 }), 1)
        // a trip older than `since` is recorded but does not count
        assert.strictEqual(yield* a.fleet.recordTrip(trip("m4", 500, 2_000)), 2)
        // counts alone are no verdict, and other names count apart
        assert.isTrue(Option.isNone(yield* a.verdict.load))
        const other = (yield* joinFleet(freshName())).fleet
        assert.strictEqual(yield* other.trips({ since: 0, now: 3_000 }), 0)
      })
    )

    // The stored verdict is dated on the store's clock; trips on the members'. The store puts
    // the verdict on the caller's clock as members read verdicts: made its age before `now`.
    it.scoped("a trip before the stored verdict does not count (its episode is over), on the caller's clock", () =>
      Effect.gen(function* () {
        const { fleet, verdict: channel } = yield* joinFleet(freshName())
        const trip = (member: string, at: number, now = 5_000) => ({ member, at, since: 0, now })
        yield* fleet.recordTrip(trip("m1", 1_000))
        yield* fleet.recordTrip(trip("m2", 10_000))
        // made just now by the store's clock: on a caller's clock at 5 s, made at 5 s (less
        // the real time since, on a server)
        yield* channel.save(verdict("Closed"))
        assert.strictEqual(yield* fleet.trips({ since: 0, now: 5_000 }), 1)
        assert.strictEqual(yield* fleet.recordTrip(trip("m3", 6_000)), 2)
        // a late report of a trip from before the verdict counts for nothing
        assert.strictEqual(yield* fleet.recordTrip(trip("m4", 4_000)), 2)
        // on a clock 100 s ahead, the verdict was made at 105 s: every trip here is before it
        assert.strictEqual(yield* fleet.trips({ since: 0, now: 105_000 }), 0)
        // a stale save (older than the stored verdict) does not move the line back
        yield* channel.save(verdict("Closed", "a", { ageMillis: 3_600_000 }))
        assert.strictEqual(yield* fleet.trips({ since: 0, now: 5_000 }), 2)
      })
    )

    it.scoped("members tripping at once: the last report to land counts every one", () =>
      Effect.gen(function* () {
        const name = freshName()
        const members = yield* Effect.all(Array.from({ length: 8 }, () => Effect.map(joinFleet(name), (m) => m.fleet)))
        const counts = yield* Effect.forEach(
          members,
          (m, i) => m.recordTrip({ member: `m${i}`, at: 1_000 + i, since: 0, now: 1_000 + i }),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(Math.max(...counts), 8)
        assert.isTrue(counts.every((n) => n >= 1 && n <= 8))
        assert.strictEqual(yield* members[0]!.trips({ since: 0, now: 2_000 }), 8)
      })
    )
  })
}
