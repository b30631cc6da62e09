import * as Edition from "@circuitry/core/Edition"
import { BreakerStore, CircuitBreaker, Policy } from "@circuitry/breaker"
import { assert, describe, expect, it, Result, runTest, TestClock, yieldNow } from "@circuitry/testkit"
import { Clock, Context, Deferred, Effect, Fiber, Layer, Option, Stream } from "effect"
import * as fc from "fast-check"
import { call, dependency, fail, succeed, tagOf } from "./utils.js"

/** Lets the breakers' background fibers (store followers, writers, heartbeats) run. */
const settle = Effect.gen(function* () {
  for (let i = 0; i < 100; i++) yield* yieldNow
})

const NAME = "payments"
const OPEN_FOR = 5_000

const options = (sharing: CircuitBreaker.Options["sharing"]): CircuitBreaker.Options => ({
  name: NAME,
  policy: Policy.consecutiveFailures(2),
  openFor: OPEN_FOR,
  sharing
})

/** `n` members of one fleet on one memory store: breakers of the same name. */
const fleet = (
  store: Context.Context<BreakerStore.BreakerStore>,
  n: number,
  sharing: CircuitBreaker.Options["sharing"]
) => Effect.all(Array.from({ length: n }, () => CircuitBreaker.make(options(sharing)).pipe(Effect.provide(store))))

/** The store as a test looks at it: the circuit every member joined. */
const storeOf = (store: Context.Context<BreakerStore.BreakerStore>) =>
  Effect.flatMap(BreakerStore.BreakerStore, (s) => s.connect(NAME)).pipe(Effect.provide(store))

const trip = (breaker: CircuitBreaker.CircuitBreaker) =>
  Effect.gen(function* () {
    yield* call(breaker, fail)
    yield* call(breaker, fail)
    assert.strictEqual(yield* tagOf(breaker), "Open")
    yield* settle
  })

const tags = (members: ReadonlyArray<CircuitBreaker.CircuitBreaker>) => Effect.forEach(members, tagOf)

const memoryStore = Effect.map(Layer.build(BreakerStore.layerMemory), (ctx) => ctx)

describe("sharing.quorum (memory store)", () => {
  it.scoped("quorum 3 of 10: one member failing every call opens only itself, however long it fails", () =>
    Effect.gen(function* () {
      const store = yield* memoryStore
      const members = yield* fleet(store, 10, { quorum: 3, quorumWindow: "30 seconds" })
      const circuit = yield* storeOf(store)
      const [bad, ...rest] = members
      yield* trip(bad!)
      assert.deepStrictEqual(yield* tags(rest), Array(9).fill("Closed"))
      assert.isTrue(Option.isNone(yield* circuit.verdict.load), "no fleet verdict")
      assert.strictEqual(yield* circuit.fleet!.trips({ since: 0, now: yield* Clock.currentTimeMillis }), 1)
      const snapshot = yield* bad!.snapshot
      assert.deepStrictEqual(snapshot.store, { connected: true, local: true })
      assert.deepStrictEqual((yield* rest[0]!.snapshot).store, { connected: true, local: false })
      // It half-opens on its own clock and probes alone (a test below shows it takes no fleet lease).
      for (let episode = 0; episode < 5; episode++) {
        yield* TestClock.adjust(OPEN_FOR)
        assert.strictEqual(yield* tagOf(bad!), "HalfOpen")
        yield* call(bad!, fail)
        yield* settle
        assert.strictEqual(yield* tagOf(bad!), "Open")
        assert.deepStrictEqual(yield* tags(rest), Array(9).fill("Closed"))
      }
      assert.isTrue(Option.isNone(yield* circuit.verdict.load))
      // the other members serve traffic all along
      for (const m of rest) assert.isTrue(Result.isSuccess(yield* call(m, succeed)))
    })
  )

  it.scoped("quorum 3 of 10: three members tripping within the window open the fleet", () =>
    Effect.gen(function* () {
      const store = yield* memoryStore
      const members = yield* fleet(store, 10, { quorum: 3, quorumWindow: "10 seconds" })
      const circuit = yield* storeOf(store)
      yield* trip(members[0]!)
      yield* TestClock.adjust("4 seconds")
      yield* trip(members[1]!)
      assert.strictEqual((yield* tags(members)).filter((t) => t !== "Closed").length, 2)
      yield* TestClock.adjust("4 seconds") // members[0] half-opened at 5 s; the window still holds all three
      yield* trip(members[2]!)
      const verdict = Option.getOrThrow(yield* circuit.verdict.load)
      assert.strictEqual(verdict.state, "Open")
      // made now (8 s), open for OPEN_FOR from now, by the memory store's clock
      assert.strictEqual(verdict.ageMillis, 0)
      assert.strictEqual(verdict.remainingMillis, OPEN_FOR)
      // every member adopts the fleet's verdict, the seven that never failed too
      for (const m of members.slice(3)) {
        assert.deepStrictEqual(yield* m.state, CircuitBreaker.State.Open({ until: 8_000 + OPEN_FOR }))
        assert.deepStrictEqual((yield* m.snapshot).store, { connected: true, local: false })
      }
      // one probe for the fleet once it half-opens; its success closes every member
      yield* TestClock.adjust(OPEN_FOR)
      const dep = yield* dependency
      const gate = yield* Deferred.make<void>()
      const probe = dep.effect.pipe(Effect.tap(() => Deferred.await(gate)))
      // Forked one after another from this fiber (see BreakerStore.test.ts: Effect 4 interrupts what
      // the workers of a concurrent forEach fork as each worker ends).
      const calls = yield* Effect.forEach(members, (m) => Edition.forkChild(call(m, probe)))
      yield* settle
      assert.strictEqual(yield* dep.calls, 1)
      yield* Deferred.succeed(gate, undefined)
      const results = yield* Effect.forEach(calls, Fiber.join)
      assert.strictEqual(results.filter(Result.isSuccess).length, 1)
      yield* settle
      assert.deepStrictEqual(yield* tags(members), Array(10).fill("Closed"))
      assert.strictEqual(Option.getOrThrow(yield* circuit.verdict.load).state, "Closed")
      // the trips of the episode that is over count no more: one new trip opens only its member
      yield* trip(members[3]!)
      assert.strictEqual((yield* tags(members)).filter((t) => t !== "Closed").length, 1)
    })
  )

  it.scoped("trips spread wider than the window never open the fleet", () =>
    Effect.gen(function* () {
      const store = yield* memoryStore
      const members = yield* fleet(store, 10, { quorum: 3, quorumWindow: "10 seconds" })
      const circuit = yield* storeOf(store)
      for (const m of members.slice(0, 5)) {
        yield* trip(m)
        yield* TestClock.adjust("10001 millis")
      }
      assert.isTrue(Option.isNone(yield* circuit.verdict.load))
      // each tripped alone and closed alone: no member was ever opened by the fleet
      for (const m of members.slice(0, 5)) yield* call(m, succeed)
      assert.deepStrictEqual(yield* tags(members), Array(10).fill("Closed"))
    })
  )

  it.scoped("a member joining mid-episode adopts the fleet's state", () =>
    Effect.gen(function* () {
      const store = yield* memoryStore
      const members = yield* fleet(store, 3, { quorum: 2 })
      yield* trip(members[0]!)
      // one trip: a member joining now starts Closed (the trip is that member's own)
      const [early] = yield* fleet(store, 1, { quorum: 2 })
      assert.strictEqual(yield* tagOf(early!), "Closed")
      yield* TestClock.adjust("1 second")
      yield* trip(members[1]!)
      // the fleet is open: a member joining now is open until the fleet's time
      const [late] = yield* fleet(store, 1, { quorum: 2 })
      assert.deepStrictEqual(yield* late!.state, CircuitBreaker.State.Open({ until: 1_000 + OPEN_FOR }))
      assert.deepStrictEqual((yield* late!.snapshot).store, { connected: true, local: false })
      // and joins the fleet's probe once it is over
      yield* TestClock.adjust(OPEN_FOR)
      const [later] = yield* fleet(store, 1, { quorum: 2 })
      assert.strictEqual(yield* tagOf(later!), "HalfOpen")
      yield* call(later!, succeed)
      yield* settle
      assert.deepStrictEqual(yield* tags([...members, early!, late!]), Array(5).fill("Closed"))
    })
  )

  it.scoped("a member that opened alone closes alone on its own probe; the fleet never hears of it", () =>
    Effect.gen(function* () {
      const store = yield* memoryStore
      const members = yield* fleet(store, 4, { quorum: 2 })
      const circuit = yield* storeOf(store)
      const told = yield* Deferred.make<BreakerStore.Verdict>()
      yield* Stream.runForEach(circuit.verdict.watch, (v) => Deferred.succeed(told, v)).pipe(Effect.forkScoped)
      yield* trip(members[0]!)
      yield* TestClock.adjust(OPEN_FOR)
      // its probe takes no fleet lease: a lease taken by someone else does not stop it
      assert.isTrue(Option.isSome(yield* circuit.probes!.acquire({ permits: 1, leaseMillis: 60_000, now: OPEN_FOR })))
      assert.isTrue(Result.isSuccess(yield* call(members[0]!, succeed)))
      yield* settle
      assert.deepStrictEqual(yield* tags(members), Array(4).fill("Closed"))
      assert.isTrue(Option.isNone(yield* circuit.verdict.load))
      assert.isTrue(Option.isNone(yield* Deferred.poll(told)), "no verdict was saved")
      // its trip still counts within the window: one more member's trip opens the fleet
      yield* trip(members[1]!)
      assert.strictEqual(Option.getOrThrow(yield* circuit.verdict.load).state, "Open")
      assert.deepStrictEqual(yield* tags(members), Array(4).fill("Open"))
      assert.strictEqual((yield* Deferred.await(told)).state, "Open", "the listener hears the fleet's verdict")
    })
  )

  it.scoped("a member whose trip is still owed when its scope closes sends it (it counts, it opens no fleet)", () =>
    Effect.gen(function* () {
      const store = yield* memoryStore
      const circuit = yield* storeOf(store)
      // the store refuses the first report: the writer will try again in a second, too late
      let refused = 0
      const base = Context.get(store, BreakerStore.BreakerStore)
      const flaky = Context.make(
        BreakerStore.BreakerStore,
        BreakerStore.BreakerStore.of({
          connect: (name) =>
            Effect.map(base.connect(name), (c) => ({
              ...c,
              fleet: {
                ...c.fleet!,
                recordTrip: (trip: Parameters<BreakerStore.FleetMembership["recordTrip"]>[0]) =>
                  refused++ === 0
                    ? Effect.fail(
                        new BreakerStore.BreakerStoreError({ store: "test", operation: "recordTrip", message: "no" })
                      )
                    : c.fleet!.recordTrip(trip)
              }
            }))
        })
      )
      yield* Effect.scoped(
        Effect.gen(function* () {
          const [leaving] = yield* fleet(flaky, 1, { quorum: 2 })
          yield* trip(leaving!)
          assert.strictEqual(refused, 1)
          assert.strictEqual(yield* circuit.fleet!.trips({ since: 0, now: yield* Clock.currentTimeMillis }), 0)
        })
      )
      assert.strictEqual(yield* circuit.fleet!.trips({ since: 0, now: yield* Clock.currentTimeMillis }), 1)
      assert.isTrue(Option.isNone(yield* circuit.verdict.load))
    })
  )

  it.scoped("a fraction is of the live members, rounded up", () =>
    Effect.gen(function* () {
      const store = yield* memoryStore
      const circuit = yield* storeOf(store)
      // a quarter of 6 live members is 1.5: two trips
      const members = yield* fleet(store, 6, { quorum: { fraction: 0.25 } })
      yield* settle
      assert.strictEqual(yield* circuit.fleet!.members(0), 6)
      yield* trip(members[0]!)
      assert.isTrue(Option.isNone(yield* circuit.verdict.load))
      yield* trip(members[1]!)
      assert.strictEqual(Option.getOrThrow(yield* circuit.verdict.load).state, "Open")
      assert.deepStrictEqual(yield* tags(members), Array(6).fill("Open"))
    })
  )

  it.scoped("a fraction follows the fleet's size: members that stop beating are not counted", () =>
    Effect.gen(function* () {
      const store = yield* memoryStore
      const circuit = yield* storeOf(store)
      const [stays] = yield* fleet(store, 1, { quorum: { fraction: 0.5 } })
      // three members join and leave: their heartbeats go stale after 15 seconds
      yield* Effect.scoped(Effect.andThen(fleet(store, 3, { quorum: { fraction: 0.5 } }), settle))
      assert.strictEqual(yield* circuit.fleet!.members(0), 4)
      yield* TestClock.adjust("16 seconds")
      yield* settle
      assert.strictEqual(yield* circuit.fleet!.members(1_000), 1, "only the member that stays beats on")
      // half of one live member is one: its own trip opens the fleet
      yield* trip(stays!)
      assert.strictEqual(Option.getOrThrow(yield* circuit.verdict.load).state, "Open")
    })
  )

  it.scoped("quorum 1 (the default) is today's fleet: one member's trip opens every member", () =>
    Effect.gen(function* () {
      for (const sharing of [undefined, { quorum: 1 }]) {
        const store = yield* memoryStore
        const members = yield* fleet(store, 3, sharing)
        yield* trip(members[0]!)
        assert.deepStrictEqual(yield* tags(members), Array(3).fill("Open"))
        // no quorum, no heartbeat and no `local` in the snapshot
        assert.strictEqual(yield* (yield* storeOf(store)).fleet!.members(0), 0)
        assert.deepStrictEqual((yield* members[1]!.snapshot).store, { connected: true })
      }
    })
  )
})

describe("sharing options", () => {
  const invalid = (sharing: unknown) =>
    Effect.map(
      Effect.flip(CircuitBreaker.make({ name: "x", sharing } as CircuitBreaker.Options)),
      (error) => error.message
    )

  it.scoped("bad sharing options are one InvalidBreakerOptions that names the option and the rule", () =>
    Effect.gen(function* () {
      const count = "sharing.quorum must be a whole number >= 1 or { fraction } with 0 < fraction <= 1, got"
      assert.strictEqual(yield* invalid({ quorum: 0 }), `${count} 0 (breaker "x")`)
      assert.strictEqual(yield* invalid({ quorum: 2.5 }), `${count} 2.5 (breaker "x")`)
      assert.strictEqual(yield* invalid({ quorum: "3" }), `${count} "3" (breaker "x")`)
      assert.strictEqual(yield* invalid({ quorum: Number.NaN }), `${count} NaN (breaker "x")`)
      const fraction = "sharing.quorum.fraction must be a number with 0 < fraction <= 1, got"
      assert.strictEqual(yield* invalid({ quorum: { fraction: 0 } }), `${fraction} 0 (breaker "x")`)
      assert.strictEqual(yield* invalid({ quorum: { fraction: 1.5 } }), `${fraction} 1.5 (breaker "x")`)
      assert.strictEqual(yield* invalid({ quorum: {} }), `${fraction} undefined (breaker "x")`)
      assert.strictEqual(
        yield* invalid({ quorum: 3, quorumWindow: 0 }),
        'sharing.quorumWindow must be a finite duration > 0, got 0 (breaker "x")'
      )
      assert.strictEqual(
        yield* invalid({ quorumWindow: "-1 seconds" }),
        'sharing.quorumWindow must be a finite duration > 0, got "-1 seconds" (breaker "x")'
      )
      assert.strictEqual(yield* invalid(5), 'sharing must be an object, got 5 (breaker "x")')
      const error = yield* Effect.flip(CircuitBreaker.make({ name: "x", sharing: { quorum: -1 } }))
      assert.strictEqual(error._tag, "InvalidBreakerOptions")
    })
  )

  it.scoped("good sharing options make a breaker, with or without a store", () =>
    Effect.gen(function* () {
      const good: ReadonlyArray<CircuitBreaker.Options["sharing"]> = [
        {},
        { quorum: 1 },
        { quorum: 10 },
        { quorum: { fraction: 1 } },
        { quorumWindow: "5 minutes" }
      ]
      for (const sharing of good) {
        const breaker = yield* CircuitBreaker.make({ name: "ok", sharing })
        assert.strictEqual(yield* tagOf(breaker), "Closed")
      }
    })
  )
})

// The quorum rule as a property: members trip once each, at random gaps; with reports landing at
// once (the memory store), the fleet opens exactly when some trip is the q-th within `window` of it.
describe("sharing.quorum: the window rule, as a property", () => {
  const seed = Number(process.env["QUORUM_SEED"] ?? Date.now() % 2 ** 31)
  it(`the fleet opens exactly when q distinct members tripped within the window (seed ${seed})`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 4 }),
        fc.integer({ min: 1, max: 10 }).map((s) => s * 1_000),
        fc.array(fc.integer({ min: 0, max: 6_000 }), { minLength: 1, maxLength: 6 }),
        (quorum, windowMillis, gaps) =>
          runTest(
            Effect.gen(function* () {
              const store = yield* memoryStore
              const circuit = yield* storeOf(store)
              const members = yield* Effect.all(
                gaps.map(() =>
                  CircuitBreaker.make({
                    name: NAME,
                    policy: Policy.consecutiveFailures(1),
                    openFor: "1 hour",
                    sharing: { quorum, quorumWindow: windowMillis }
                  }).pipe(Effect.provide(store))
                )
              )
              const times: Array<number> = []
              let now = 0
              for (let i = 0; i < gaps.length; i++) {
                now += gaps[i]!
                yield* TestClock.adjust(gaps[i]!)
                const before = Option.getOrUndefined(yield* circuit.verdict.load)
                const expected =
                  before === undefined && [...times, now].filter((t) => t >= now - windowMillis).length >= quorum
                if (before !== undefined) {
                  // the fleet is open: this member was opened by it, and cannot trip
                  expect(yield* tagOf(members[i]!)).toBe("Open")
                  continue
                }
                yield* call(members[i]!, fail)
                times.push(now)
                yield* settle
                const after = Option.getOrUndefined(yield* circuit.verdict.load)
                expect(after?.state, `trip ${i} at ${now}, trips ${times}`).toBe(expected ? "Open" : undefined)
                if (expected) expect(yield* tags(members)).toStrictEqual(Array(members.length).fill("Open"))
              }
            })
          )
      ),
      { numRuns: 50, seed }
    )
  }, 120_000)
})
