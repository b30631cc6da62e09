/**
 * The `BreakerStore` contract as one suite for every backend (memory, Redis, SQLite, PostgreSQL,
 * and any future one), the way Effect's PersistedQueue tests run one suite over several layers:
 *
 * ```ts
 * import { storeSuite } from "../../breaker/test/storeSuite.js"
 * storeSuite([["Redis", RedisBreakerStore.layer({ prefix })]])
 * ```
 *
 * Every test joins circuits of a name of its own, so one store (one layer) serves the whole suite.
 * Verdicts cross as durations and the store dates them on its own clock (the memory store's Effect
 * Clock, a server's clock): what a member reads back is the saved durations aged by the store's
 * clock, compared within SLACK (real time passes between a save and a read on a real server).
 * Lease and count times are passed in as the breakers pass them (from their Clock).
 */
import * as Edition from "@circuitry/core/Edition"
import type { BreakerStore } from "@circuitry/breaker"
import { BreakerStore as Store } from "@circuitry/breaker"
import { assert, describe, layer as sharedLayer, result, Result, TestClock, yieldNow } from "@circuitry/testkit"
import { Effect, Fiber, Option, Stream } from "effect"
import type { Layer, Scope } from "effect"

let counter = 0
/** A circuit name no other test (or earlier run on a shared server) uses. */
const freshName = (): string => `suite-${process.pid}-${Date.now().toString(36)}-${counter++}`

/** A verdict as a member sends it: made `ageMillis` ago, open for 10 s more when Open. */
const verdict = (
  state: BreakerStore.Verdict["state"],
  origin = "a",
  more?: { readonly ageMillis?: number; readonly remainingMillis?: number; readonly by?: string }
): BreakerStore.Verdict => ({
  state,
  remainingMillis: state === "Open" ? (more?.remainingMillis ?? 10_000) : 0,
  ageMillis: more?.ageMillis ?? 0,
  origin,
  ...(more?.by === undefined ? undefined : { by: more.by })
})

/**
 * How much real time a read may follow a save by on a busy machine (the load average may be 10+).
 * A store that dated a verdict on a member's clock, or not at all, is off by far more.
 */
const SLACK = 2_000

/**
 * Whether `actual` is `expected` read back later by the store's clock: the same state, origin and
 * `by`; at most `elapsed + SLACK` less time left and at most that much older, and at least
 * `elapsed` (time the store's clock is known to have moved) older.
 */
const agedFrom = (actual: BreakerStore.Verdict, expected: BreakerStore.Verdict, elapsed = 0): string | undefined => {
  const problems: Array<string> = []
  if (actual.state !== expected.state || actual.origin !== expected.origin || actual.by !== expected.by) {
    problems.push("state, origin or by differ")
  }
  const aged = actual.ageMillis - expected.ageMillis
  if (aged < elapsed || aged > elapsed + SLACK)
    problems.push(`aged ${aged} ms, expected ${elapsed}..${elapsed + SLACK}`)
  const spent = expected.remainingMillis - actual.remainingMillis
  if (expected.state === "Open" && expected.remainingMillis > elapsed + SLACK) {
    if (spent < elapsed || spent > elapsed + SLACK) problems.push(`${spent} ms of the open time spent`)
  } else if (actual.remainingMillis !== 0 && expected.state !== "Open") {
    problems.push("time left on a verdict that is not Open")
  }
  return problems.length === 0
    ? undefined
    : `${problems.join("; ")}: ${JSON.stringify(actual)} read back from ${JSON.stringify(expected)}`
}

const assertAged = (actual: Option.Option<BreakerStore.Verdict>, expected: BreakerStore.Verdict, elapsed = 0) => {
  assert.isTrue(Option.isSome(actual), `nothing stored, expected ${JSON.stringify(expected)}`)
  if (Option.isSome(actual)) {
    const problem = agedFrom(actual.value, expected, elapsed)
    assert.isUndefined(problem, problem)
  }
}

const assertAllAged = (actual: ReadonlyArray<BreakerStore.Verdict>, expected: ReadonlyArray<BreakerStore.Verdict>) => {
  assert.strictEqual(actual.length, expected.length, JSON.stringify(actual))
  actual.forEach((v, i) => assertAged(Option.some(v), expected[i]!))
}

/** Moves the store's clock by `millis`: the TestClock (the memory store's) and real time (a server's). */
const pass = (millis: number) =>
  Effect.andThen(
    TestClock.adjust(millis),
    Effect.promise(() => new Promise((resolve) => setTimeout(resolve, millis)))
  )

/** Lets forked fibers start (a stream subscribes when it first runs). */
const settle = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* yieldNow
})

/**
 * The next `n` verdicts a member is told, collected in the background. Delivery may cross a
 * network (Redis pub/sub): joining waits for it in real time, bounded by the test's timeout.
 */
const listen = (circuit: BreakerStore.SharedCircuit, n: number) =>
  Effect.gen(function* () {
    const fiber = yield* Edition.forkChild(Stream.runCollect(Stream.take(circuit.verdicts, n)))
    yield* settle
    return Effect.map(Fiber.join(fiber), (values) => Array.from(values))
  })

/** Every verdict a member is told from now on, as it is told (a background fiber of the scope). */
const collect = (circuit: BreakerStore.SharedCircuit) =>
  Effect.gen(function* () {
    const told: Array<BreakerStore.Verdict> = []
    yield* Effect.forkScoped(Stream.runForEach(circuit.verdicts, (v) => Effect.sync(() => told.push(v))))
    yield* settle
    return told
  })

/** Waits (in real time: delivery may cross a network) until `done` holds, for at most 10 seconds. */
const eventually = (done: () => boolean) =>
  Effect.gen(function* () {
    for (let i = 0; i < 1_000 && !done(); i++) {
      yield* settle
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
    assert.isTrue(done(), "not reached within 10 seconds")
  })

/** Joins `name` on the store in the context, for as long as the scope lasts. */
const join = (
  name: string
): Effect.Effect<BreakerStore.SharedCircuit, BreakerStore.BreakerStoreError, Scope.Scope | Store.BreakerStore> =>
  Effect.flatMap(Store.BreakerStore, (store) => store.connect(name))

const lease = { permits: 1, leaseMillis: 60_000 } as const

/**
 * How a backend spoils a circuit's stored state the way an old schema, a foreign writer or a hand
 * edit does: each entry writes, under `name`, state the store cannot read. A backend that can be
 * spoiled provides it beside its store and passes `{ corruptible: true }`.
 */
export class Corruptions extends Edition.KeyClass<
  Corruptions,
  ReadonlyArray<readonly [kind: string, spoil: (name: string) => Effect.Effect<void>]>
>()("storeSuite/Corruptions") {}

/**
 * Registers the contract tests for each `[name, layer]`. The layer is built once per backend.
 */
export const storeSuite = (
  backends: ReadonlyArray<
    | readonly [string, Layer.Layer<BreakerStore.BreakerStore, unknown>]
    | readonly [string, Layer.Layer<BreakerStore.BreakerStore | Corruptions, unknown>, { readonly corruptible: true }]
  >
): void => {
  for (const [backend, given, flags] of backends) {
    const layer = given as Layer.Layer<BreakerStore.BreakerStore | Corruptions, unknown>
    sharedLayer(layer, { timeout: "30 seconds" })(`BreakerStore contract: ${backend}`, (it) => {
      if (flags?.corruptible) {
        it.scoped("unreadable stored state is treated as Closed and replaced by the next verdict", () =>
          Effect.gen(function* () {
            const corruptions = yield* Corruptions
            assert.isAbove(corruptions.length, 0)
            for (const [kind, spoil] of corruptions) {
              const name = freshName()
              const a = yield* join(name)
              const b = yield* join(name)
              const told = yield* collect(b)
              yield* spoil(name)
              // Unreadable: an error (the breaker then starts Closed) or a Closed verdict, never Open.
              const loaded = yield* result(a.load)
              assert.isTrue(
                Option.match(Result.getSuccess(loaded), {
                  onNone: () => true, // an error
                  onSome: (verdict) => Option.isNone(verdict) || verdict.value.state === "Closed"
                }),
                `${kind}: loaded ${JSON.stringify(loaded)}`
              )
              // The next verdict replaces it, for every member, and is shared again.
              const open = verdict("Open", `fixed-${kind}`)
              yield* a.save(open)
              assertAged(yield* a.load, open)
              assertAged(yield* b.load, open)
              yield* eventually(() => told.some((v) => v.state === "Open" && v.origin === open.origin))
              // ...and the ordering of verdicts holds from then on.
              yield* b.save(verdict("Closed", "late", { ageMillis: 60_000 }))
              assertAged(yield* a.load, open)
            }
          })
        )
      }

      describe("load and save", () => {
        it.scoped("a circuit never saved loads as None, with zero counts", () =>
          Effect.gen(function* () {
            const circuit = yield* join(freshName())
            assert.isTrue(Option.isNone(yield* circuit.load))
            assert.deepStrictEqual(yield* circuit.counts, { consecutiveFailures: 0, lastFailureAt: undefined })
          })
        )

        it.scoped("a saved verdict is what load returns, for every member", () =>
          Effect.gen(function* () {
            const name = freshName()
            const a = yield* join(name)
            const b = yield* join(name)
            const open = verdict("Open")
            yield* a.save(open)
            assertAged(yield* a.load, open)
            assertAged(yield* b.load, open)
            // a member that joins later loads it too
            const late = yield* join(name)
            assertAged(yield* late.load, open)
            // every stored state round-trips, and who asked for it; a verdict without `by` has none
            for (const v of [
              verdict("Isolated", "b", { by: "ops@example" }),
              verdict("Closed", "b", { by: "someone else" }),
              verdict("Open", "b", { remainingMillis: 250_000 }),
              verdict("Closed", "b")
            ]) {
              yield* b.save(v)
              assertAged(yield* a.load, v)
            }
          })
        )

        it.scoped("a verdict is dated and aged by the store's clock, never by the saver's", () =>
          Effect.gen(function* () {
            const name = freshName()
            const a = yield* join(name)
            // made 3 s ago by the saver's clock, 20 s left: the store keeps both as durations from its now
            const open = verdict("Open", "a", { ageMillis: 3_000, remainingMillis: 20_000 })
            yield* a.save(open)
            const first = Option.getOrThrow(yield* a.load)
            assertAged(Option.some(first), open)
            // the store's clock moves on: the open time left shrinks and the verdict grows older by as much
            yield* pass(300)
            assertAged(yield* a.load, first, 300)
            // an open time that is over is none left, not a negative one
            yield* a.save(verdict("Open", "a", { remainingMillis: 100 }))
            yield* pass(300)
            assert.strictEqual(Option.getOrThrow(yield* a.load).remainingMillis, 0)
          })
        )

        it.scoped("a verdict made before the stored one (a late retry) does not replace it", () =>
          Effect.gen(function* () {
            const circuit = yield* join(freshName())
            const newer = verdict("Open", "newer")
            yield* circuit.save(newer)
            yield* circuit.recordFailures(2, 5_100)
            // sent now, but made 5 s ago: it waited in an outbox while the newer one was made
            yield* circuit.save(verdict("Closed", "late", { ageMillis: 5_000 }))
            assertAged(yield* circuit.load, newer)
            // the stale save changed nothing: the count it would have started again is still there
            assert.strictEqual((yield* circuit.counts).consecutiveFailures, 2)
            // a verdict made after it is stored, whoever made it
            const after = verdict("Closed", "after")
            yield* circuit.save(after)
            assertAged(yield* circuit.load, after)
          })
        )

        it.scoped("circuits are apart by name", () =>
          Effect.gen(function* () {
            const a = yield* join(freshName())
            const b = yield* join(freshName())
            yield* a.save(verdict("Open"))
            yield* a.recordFailures(3, 1_000)
            assert.isTrue(Option.isNone(yield* b.load))
            assert.deepStrictEqual(yield* b.counts, { consecutiveFailures: 0, lastFailureAt: undefined })
          })
        )
      })

      describe("verdicts", () => {
        it.scoped("every member, the saver included, is told each saved verdict", () =>
          Effect.gen(function* () {
            const name = freshName()
            const a = yield* join(name)
            const b = yield* join(name)
            const other = yield* join(freshName())
            const toA = yield* collect(a)
            const toB = yield* collect(b)
            const toOther = yield* collect(other)
            const first = verdict("Open", "a")
            const second = verdict("Closed", "b", { by: "ops" })
            yield* a.save(first)
            yield* eventually(() => toB.length === 1 && toA.length === 1)
            yield* b.save(second)
            yield* eventually(() => toB.length === 2 && toA.length === 2)
            assertAllAged(toA, [first, second])
            assertAllAged(toB, [first, second])
            // another name hears nothing of it
            assert.deepStrictEqual(toOther, [])
          })
        )

        it.scoped("members that leave do not stop the others being told, nor a later member", () =>
          Effect.gen(function* () {
            const name = freshName()
            const stays = yield* join(name)
            yield* Effect.scoped(join(name)) // joins and leaves
            const told = yield* listen(stays, 1)
            const v = verdict("Isolated")
            yield* stays.save(v)
            assertAllAged(yield* told, [v])
            // every member of a name leaves; one that joins afterwards is told again
            const gone = freshName()
            yield* Effect.scoped(join(gone))
            const again = yield* join(gone)
            const toAgain = yield* listen(again, 1)
            yield* again.save(verdict("Closed"))
            assertAllAged(yield* toAgain, [verdict("Closed")])
          })
        )
      })

      describe("counts", () => {
        it.scoped("failures add up over members, never losing one, and a success starts again", () =>
          Effect.gen(function* () {
            const name = freshName()
            const a = yield* join(name)
            const b = yield* join(name)
            yield* Effect.all(
              Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).recordFailures(1, 1_000 + i)),
              { concurrency: "unbounded", discard: true }
            )
            yield* a.recordFailures(5, 900)
            assert.deepStrictEqual(yield* b.counts, { consecutiveFailures: 25, lastFailureAt: 1_019 })
            yield* b.recordSuccess(2_000)
            // a success starts the count again; when the last failure happened is still known
            assert.deepStrictEqual(yield* a.counts, { consecutiveFailures: 0, lastFailureAt: 1_019 })
          })
        )

        it.scoped("recordFailures(0, at) records the time of the last failure only", () =>
          Effect.gen(function* () {
            const circuit = yield* join(freshName())
            yield* circuit.recordFailures(0, 1_500)
            assert.deepStrictEqual(yield* circuit.counts, { consecutiveFailures: 0, lastFailureAt: 1_500 })
            yield* circuit.recordFailures(2, 1_600)
            yield* circuit.recordFailures(0, 1_700)
            assert.deepStrictEqual(yield* circuit.counts, { consecutiveFailures: 2, lastFailureAt: 1_700 })
            // an earlier time never moves the last failure back
            yield* circuit.recordFailures(0, 1_000)
            assert.strictEqual((yield* circuit.counts).lastFailureAt, 1_700)
            // counts alone are no verdict
            assert.isTrue(Option.isNone(yield* circuit.load))
          })
        )

        it.scoped("saving a verdict starts the count again", () =>
          Effect.gen(function* () {
            const circuit = yield* join(freshName())
            yield* circuit.recordFailures(4, 1_000)
            yield* circuit.save(verdict("Open"))
            assert.deepStrictEqual(yield* circuit.counts, { consecutiveFailures: 0, lastFailureAt: 1_000 })
          })
        )
      })

      describe("fleet: heartbeats and trips", () => {
        it.scoped("heartbeat and members count the members whose last heartbeat is at or after `since`", () =>
          Effect.gen(function* () {
            const name = freshName()
            const a = yield* join(name)
            const b = yield* join(name)
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
            const other = yield* join(freshName())
            assert.strictEqual(yield* other.members(0), 0)
            assert.strictEqual(yield* other.heartbeat({ member: "m1", now: 9_000, since: 0 }), 1)
            assert.strictEqual(yield* a.members(9_000), 0)
          })
        )

        it.scoped("recordTrip counts distinct members that tripped at or after `since`", () =>
          Effect.gen(function* () {
            const name = freshName()
            const a = yield* join(name)
            const b = yield* join(name)
            const trip = (member: string, at: number, since: number) => ({ member, at, since, now: 3_000 })
            assert.strictEqual(yield* a.trips({ since: 0, now: 3_000 }), 0)
            assert.strictEqual(yield* a.recordTrip(trip("m1", 1_000, 0)), 1)
            // the same member again (a retry, or its next episode) still counts once
            assert.strictEqual(yield* b.recordTrip(trip("m1", 1_000, 0)), 1)
            assert.strictEqual(yield* b.recordTrip(trip("m1", 1_500, 0)), 1)
            assert.strictEqual(yield* b.recordTrip(trip("m2", 2_000, 0)), 2)
            // a window that starts later leaves the older trips out
            assert.strictEqual(yield* a.recordTrip(trip("m3", 3_000, 1_600)), 2)
            assert.strictEqual(yield* a.trips({ since: 2_001, now: 3_000 }), 1)
            // an earlier trip never replaces a member's later one
            yield* a.recordTrip(trip("m3", 100, 0))
            assert.strictEqual(yield* b.trips({ since: 3_000, now: 3_000 }), 1)
            // a trip older than `since` is recorded but does not count
            assert.strictEqual(yield* a.recordTrip(trip("m4", 500, 2_000)), 2)
            // counts alone are no verdict, and other names count apart
            assert.isTrue(Option.isNone(yield* a.load))
            const other = yield* join(freshName())
            assert.strictEqual(yield* other.trips({ since: 0, now: 3_000 }), 0)
          })
        )

        // The stored verdict is dated on the store's clock; trips on the members'. The store puts
        // the verdict on the caller's clock as members read verdicts: made its age before `now`.
        it.scoped("a trip before the stored verdict does not count (its episode is over), on the caller's clock", () =>
          Effect.gen(function* () {
            const name = freshName()
            const a = yield* join(name)
            const trip = (member: string, at: number, now = 5_000) => ({ member, at, since: 0, now })
            yield* a.recordTrip(trip("m1", 1_000))
            yield* a.recordTrip(trip("m2", 10_000))
            // made just now by the store's clock: on a caller's clock at 5 s, made at 5 s (less
            // the real time since, on a server)
            yield* a.save(verdict("Closed"))
            assert.strictEqual(yield* a.trips({ since: 0, now: 5_000 }), 1)
            assert.strictEqual(yield* a.recordTrip(trip("m3", 6_000)), 2)
            // a late report of a trip from before the verdict counts for nothing
            assert.strictEqual(yield* a.recordTrip(trip("m4", 4_000)), 2)
            // on a clock 100 s ahead, the verdict was made at 105 s: every trip here is before it
            assert.strictEqual(yield* a.trips({ since: 0, now: 105_000 }), 0)
            // a stale save (older than the stored verdict) does not move the line back
            yield* a.save(verdict("Closed", "a", { ageMillis: 3_600_000 }))
            assert.strictEqual(yield* a.trips({ since: 0, now: 5_000 }), 2)
          })
        )

        it.scoped("members tripping at once: the last report to land counts every one", () =>
          Effect.gen(function* () {
            const name = freshName()
            const members = yield* Effect.all(Array.from({ length: 8 }, () => join(name)))
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

      describe("probe leases", () => {
        it.scoped("exactly one holder per slot, however many ask at once", () =>
          Effect.gen(function* () {
            const name = freshName()
            const members = yield* Effect.all(Array.from({ length: 4 }, () => join(name)))
            const asks = members.flatMap((m) => [m, m, m])
            const one = yield* Effect.forEach(asks, (m) => m.acquireProbe({ ...lease, now: 1_000 }), {
              concurrency: "unbounded"
            })
            assert.strictEqual(one.filter(Option.isSome).length, 1)
            // more permits, more holders: exactly that many, each in a slot of its own
            const another = freshName()
            const other = yield* Effect.all(Array.from({ length: 4 }, () => join(another)))
            const three = yield* Effect.forEach(
              other.flatMap((m) => [m, m, m]),
              (m) => m.acquireProbe({ ...lease, permits: 3, now: 1_000 }),
              { concurrency: "unbounded" }
            )
            const held = three.filter(Option.isSome).map((o) => o.value)
            assert.strictEqual(held.length, 3)
            assert.strictEqual(new Set(held).size, 3)
          })
        )

        it.scoped("a released lease can be taken again; only its holder releases it", () =>
          Effect.gen(function* () {
            const name = freshName()
            const a = yield* join(name)
            const b = yield* join(name)
            const held = Option.getOrThrow(yield* a.acquireProbe({ ...lease, now: 1_000 }))
            // a lease string that is not the holder's, or not a lease at all, releases nothing
            yield* b.releaseProbe(held.replace(/:.*/, ":not-the-token"))
            yield* b.releaseProbe("nonsense")
            assert.isTrue(Option.isNone(yield* b.acquireProbe({ ...lease, now: 1_001 })))
            yield* a.releaseProbe(held)
            const next = yield* b.acquireProbe({ ...lease, now: 1_002 })
            assert.isTrue(Option.isSome(next))
            assert.notStrictEqual(Option.getOrThrow(next), held)
            // releasing twice is harmless
            yield* a.releaseProbe(held)
            assert.isTrue(Option.isNone(yield* a.acquireProbe({ ...lease, now: 1_003 })))
          })
        )

        it.scoped("a lease is over at leaseMillis after it was taken, by the time passed in", () =>
          Effect.gen(function* () {
            const name = freshName()
            const a = yield* join(name)
            const b = yield* join(name)
            const first = Option.getOrThrow(yield* a.acquireProbe({ ...lease, now: 0 }))
            assert.isTrue(Option.isNone(yield* b.acquireProbe({ ...lease, now: 59_999 })))
            const second = Option.getOrThrow(yield* b.acquireProbe({ ...lease, now: 60_000 }))
            // the first holder's late release does not free the lease that replaced its own
            yield* a.releaseProbe(first)
            assert.isTrue(Option.isNone(yield* a.acquireProbe({ ...lease, now: 60_001 })))
            yield* b.releaseProbe(second)
            assert.isTrue(Option.isSome(yield* a.acquireProbe({ ...lease, now: 60_002 })))
          })
        )

        it.scoped("leases of different names are apart", () =>
          Effect.gen(function* () {
            const a = yield* join(freshName())
            const b = yield* join(freshName())
            assert.isTrue(Option.isSome(yield* a.acquireProbe({ ...lease, now: 1 })))
            assert.isTrue(Option.isSome(yield* b.acquireProbe({ ...lease, now: 1 })))
          })
        )
      })
    })
  }
}
