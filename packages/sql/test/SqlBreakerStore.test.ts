import { BreakerStore, CircuitBreaker, Policy } from "@circuitry/breaker"
import { SqlBreakerStore } from "@circuitry/sql"
import * as Edition from "@circuitry/core/Edition"
import type { Subscription } from "@circuitry/testkit"
import { assert, describe, expect, it, poll, remaining, result, Result, take, TestClock } from "@circuitry/testkit"
import { Context, Deferred, Effect, Exit, Fiber, Option, Scope } from "effect"
import type { Db, StoreContext } from "./backends.js"
import { backends, countRows, eventually, instance, row, rows } from "./backends.js"

const OPEN_FOR = 10_000

/** How much real time (the database's clock) a test may take between a save and a read on a busy machine. */
const SLACK = 2_000

const breakerIn = (ctx: StoreContext, name: string, threshold = 3) =>
  CircuitBreaker.make({ name, policy: Policy.consecutiveFailures(threshold), openFor: OPEN_FOR }).pipe(
    Effect.provide(ctx)
  )

const fail = (breaker: CircuitBreaker.CircuitBreaker) => result(breaker.execute(Effect.fail("boom" as const)))
const succeed = (breaker: CircuitBreaker.CircuitBreaker) => result(breaker.execute(Effect.succeed("ok" as const)))
const times = <A, E, R>(n: number, effect: Effect.Effect<A, E, R>) => Effect.repeat(effect, { times: n - 1 })

const stateOf = (db: Db, name: string) =>
  Effect.map(
    row(db, name),
    Option.map((r) => r.state)
  )
const waitForState = (db: Db, name: string, state: string) =>
  eventually(row(db, name), (r) => Option.isSome(r) && r.value.state === state)

/** Whether a database time is now, by the machine's clock (the database's, on this machine), give or take 10 s. */
const isDbNow = (millis: number) => Math.abs(millis - Date.now()) < 10_000

const untilOf = (breaker: CircuitBreaker.CircuitBreaker) =>
  Effect.map(breaker.state, (s) => (s._tag === "Open" ? s.until : Number.NaN))

/** Waits until the breaker announces a transition to `to` (the breaker learns remote verdicts in the background). */
const waitForTransition = (changes: Subscription<CircuitBreaker.Transition>, to: CircuitBreaker.StateTag) =>
  Effect.gen(function* () {
    for (;;) {
      const t = yield* take(changes)
      if (t.to === to) return t
    }
  })

for (const [backend, fresh] of backends) {
  describe(`SqlBreakerStore (${backend})`, () => {
    it.scoped("a new circuit starts closed and reading it creates no row", () =>
      Effect.gen(function* () {
        const db = yield* fresh
        const ctx = yield* instance(db)
        const breaker = yield* breakerIn(ctx, "fresh")
        assert.strictEqual((yield* breaker.state)._tag, "Closed")
        assert.isTrue(yield* breaker.isCallAllowed)
        assert.deepStrictEqual(yield* succeed(breaker), Result.succeed("ok"))
        assert.strictEqual(yield* countRows(db), 0)
      })
    )

    it.scoped("it opens after the threshold, and the row says so", () =>
      Effect.gen(function* () {
        const db = yield* fresh
        const ctx = yield* instance(db)
        yield* TestClock.adjust(1_000)
        const breaker = yield* breakerIn(ctx, "payments")
        yield* times(3, fail(breaker))
        assert.deepStrictEqual(yield* breaker.state, CircuitBreaker.State.Open({ until: 1_000 + OPEN_FOR }))
        const stored = Option.getOrThrow(yield* waitForState(db, "payments", "Open"))
        // on the database's clock, not the breaker's (whose TestClock reads 1 s): open OPEN_FOR from when it was made
        assert.isTrue(isDbNow(stored.verdict_at), `verdict_at ${stored.verdict_at}`)
        assert.strictEqual(stored.open_until - stored.verdict_at, OPEN_FOR)
        assert.strictEqual((yield* rows(db, "payments")).length, 1)
      })
    )

    it.scoped("an open circuit rejects, here and on every other member", () =>
      Effect.gen(function* () {
        const db = yield* fresh
        const a = yield* breakerIn(yield* instance(db), "payments")
        yield* times(3, fail(a))
        yield* waitForState(db, "payments", "Open")
        let runs = 0
        const call = Effect.sync(() => runs++)
        const rejected = yield* result(a.execute(call))
        assert.isTrue(Result.isFailure(rejected))
        // A worker started now loads the stored verdict, aged by the database's clock since it was made
        // (the real time this test took so far: well under SLACK).
        const b = yield* breakerIn(yield* instance(db), "payments")
        const until = yield* untilOf(b)
        assert.isTrue(until <= OPEN_FOR && until > OPEN_FOR - SLACK, `open until ${until}`)
        const error = yield* Effect.flip(b.execute(call))
        assert.strictEqual(error._tag, "BreakerOpenError")
        assert.strictEqual(error.state, "Open")
        assert.strictEqual(error.retryAfterMillis, until)
        assert.strictEqual(runs, 0)
      })
    )

    it.scoped("below the threshold it stays closed, and the failures are counted in the row", () =>
      Effect.gen(function* () {
        const db = yield* fresh
        const breaker = yield* breakerIn(yield* instance(db), "email")
        yield* times(2, fail(breaker))
        assert.strictEqual((yield* breaker.state)._tag, "Closed")
        const stored = yield* eventually(
          row(db, "email"),
          (r) => Option.isSome(r) && r.value.consecutive_failures === 2
        )
        assert.strictEqual(Option.getOrThrow(stored).state, null) // counts, but no verdict yet
        assert.deepStrictEqual(yield* succeed(breaker), Result.succeed("ok"))
      })
    )

    it.scoped("a success resets the consecutive count", () =>
      Effect.gen(function* () {
        const db = yield* fresh
        const breaker = yield* breakerIn(yield* instance(db), "email")
        yield* times(2, fail(breaker))
        yield* eventually(row(db, "email"), (r) => Option.isSome(r) && r.value.consecutive_failures === 2)
        yield* succeed(breaker)
        yield* eventually(row(db, "email"), (r) => Option.isSome(r) && r.value.consecutive_failures === 0)
        yield* times(2, fail(breaker))
        assert.strictEqual((yield* breaker.state)._tag, "Closed")
        yield* eventually(row(db, "email"), (r) => Option.isSome(r) && r.value.consecutive_failures === 2)
        yield* fail(breaker)
        assert.strictEqual((yield* breaker.state)._tag, "Open")
      })
    )

    it.scoped("it turns half-open after the wait and not before, lazily (the row is not touched)", () =>
      Effect.gen(function* () {
        const db = yield* fresh
        const breaker = yield* breakerIn(yield* instance(db), "search")
        yield* times(3, fail(breaker))
        const opened = Option.getOrThrow(yield* waitForState(db, "search", "Open"))
        yield* TestClock.adjust(OPEN_FOR - 1)
        assert.strictEqual((yield* breaker.state)._tag, "Open")
        assert.isFalse(yield* breaker.isCallAllowed)
        yield* TestClock.adjust(1)
        assert.strictEqual((yield* breaker.state)._tag, "HalfOpen")
        assert.isTrue(yield* breaker.isCallAllowed)
        // No timer wrote anything: half-open is derived from open_until and the clock.
        yield* Context.get(yield* instance(db), SqlBreakerStore.SqlBreakerStore).poll
        const after = Option.getOrThrow(yield* row(db, "search"))
        assert.deepStrictEqual(
          [after.state, after.open_until, after.verdict_at, after.origin],
          [opened.state, opened.open_until, opened.verdict_at, opened.origin]
        )
      })
    )

    it.scoped("a half-open success closes", () =>
      Effect.gen(function* () {
        const db = yield* fresh
        const breaker = yield* breakerIn(yield* instance(db), "search")
        yield* times(3, fail(breaker))
        yield* waitForState(db, "search", "Open")
        yield* TestClock.adjust(OPEN_FOR)
        assert.deepStrictEqual(yield* succeed(breaker), Result.succeed("ok"))
        assert.strictEqual((yield* breaker.state)._tag, "Closed")
        const closed = Option.getOrThrow(yield* waitForState(db, "search", "Closed"))
        assert.isTrue(isDbNow(closed.verdict_at))
        assert.strictEqual(closed.open_until, 0)
      })
    )

    it.scoped("a half-open failure reopens with a new open-until", () =>
      Effect.gen(function* () {
        const db = yield* fresh
        const breaker = yield* breakerIn(yield* instance(db), "search")
        yield* times(3, fail(breaker))
        const first = Option.getOrThrow(yield* waitForState(db, "search", "Open"))
        yield* TestClock.adjust(OPEN_FOR + 500)
        yield* fail(breaker)
        const until = 2 * OPEN_FOR + 500
        assert.deepStrictEqual(yield* breaker.state, CircuitBreaker.State.Open({ until }))
        const reopened = Option.getOrThrow(
          yield* eventually(row(db, "search"), (r) => Option.isSome(r) && r.value.verdict_at !== first.verdict_at)
        )
        assert.strictEqual(reopened.state, "Open")
        assert.strictEqual(reopened.open_until - reopened.verdict_at, OPEN_FOR)
        assert.isAtLeast(reopened.verdict_at, first.verdict_at)
      })
    )

    it.scoped("saving a verdict starts the count again; a late, older verdict does not replace a newer one", () =>
      Effect.gen(function* () {
        const db = yield* fresh
        const store = Context.get(yield* instance(db), BreakerStore.BreakerStore)
        const shared = yield* store.connect("orders")
        yield* shared.counts!.recordFailures(2, 10)
        yield* shared.verdict.save({ state: "Open", remainingMillis: 5_000, ageMillis: 0, origin: "w1" })
        assert.deepStrictEqual(yield* shared.counts!.read, { consecutiveFailures: 0, lastFailureAt: 10 })
        // made 5 s ago (a retry that waited): older than the stored one
        yield* shared.verdict.save({ state: "Closed", remainingMillis: 0, ageMillis: 5_000, origin: "w2" })
        assert.deepStrictEqual(
          Option.map(yield* shared.verdict.load, (v) => [v.state, v.origin]),
          Option.some(["Open", "w1"])
        )
        yield* shared.verdict.save({ state: "Isolated", remainingMillis: 0, ageMillis: 0, origin: "w2", by: "ops" })
        assert.deepStrictEqual(
          Option.map(yield* shared.verdict.load, (v) => [v.state, v.origin, v.by]),
          Option.some(["Isolated", "w2", "ops"])
        )
        assert.strictEqual((yield* rows(db, "orders")).length, 1)
      })
    )

    it.scoped("reading an unknown circuit is not an error and creates nothing", () =>
      Effect.gen(function* () {
        const db = yield* fresh
        const store = Context.get(yield* instance(db), BreakerStore.BreakerStore)
        const shared = yield* store.connect("nobody")
        expect(yield* shared.verdict.load).toStrictEqual(Option.none())
        assert.deepStrictEqual(yield* shared.counts!.read, { consecutiveFailures: 0, lastFailureAt: undefined })
        yield* shared.counts!.recordSuccess(5)
        assert.strictEqual(yield* countRows(db), 0)
      })
    )

    it.scoped("reset closes an open circuit, for every member", () =>
      Effect.gen(function* () {
        const db = yield* fresh
        const a = yield* breakerIn(yield* instance(db), "billing")
        const otherCtx = yield* instance(db)
        const b = yield* breakerIn(otherCtx, "billing")
        const bChanges = yield* b.subscribe
        yield* times(3, fail(a))
        yield* waitForState(db, "billing", "Open")
        const poll = Context.get(otherCtx, SqlBreakerStore.SqlBreakerStore).poll
        yield* poll
        yield* waitForTransition(bChanges, "Open")
        assert.strictEqual((yield* b.state)._tag, "Open")
        yield* TestClock.adjust(1_000)
        yield* a.reset
        assert.strictEqual((yield* a.state)._tag, "Closed")
        const closed = Option.getOrThrow(yield* waitForState(db, "billing", "Closed"))
        assert.isTrue(isDbNow(closed.verdict_at))
        yield* poll
        yield* waitForTransition(bChanges, "Closed")
        assert.deepStrictEqual(yield* succeed(b), Result.succeed("ok"))
      })
    )

    it.scoped("verdicts made elsewhere arrive by the background poll", () =>
      Effect.gen(function* () {
        const db = yield* fresh
        const a = yield* breakerIn(yield* instance(db), "feed")
        // The poll alone (on PostgreSQL, NOTIFY would bring it at once: test/notify.test.ts).
        const b = yield* breakerIn(yield* instance(db, { pollInterval: "500 millis", listen: false }), "feed")
        const changes = yield* b.subscribe
        yield* times(3, fail(a))
        yield* waitForState(db, "feed", "Open")
        assert.strictEqual((yield* b.state)._tag, "Closed")
        yield* TestClock.adjust(500)
        const t = yield* waitForTransition(changes, "Open")
        assert.strictEqual(t.at, 500)
        assert.strictEqual(t.origin, (yield* row(db, "feed")).pipe(Option.getOrThrow).origin)
        // b read the time left from the database when its poll ran (its TestClock then read 500 ms,
        // the database's clock a few real ms after the save): b half-opens later than a by that jump at most
        const until = yield* untilOf(b)
        assert.isTrue(until > OPEN_FOR + 500 - SLACK && until <= OPEN_FOR + 500, `open until ${until}`)
      })
    )

    it.scoped("the last failure time is recorded", () =>
      Effect.gen(function* () {
        const db = yield* fresh
        const ctx = yield* instance(db)
        const breaker = yield* breakerIn(ctx, "ledger")
        yield* TestClock.adjust(4_321)
        yield* fail(breaker)
        const stored = yield* eventually(row(db, "ledger"), (r) => Option.isSome(r) && r.value.last_failure_at !== null)
        assert.strictEqual(Option.getOrThrow(stored).last_failure_at, 4_321)
        assert.strictEqual(Option.getOrThrow(stored).updated_at, 4_321)
        const shared = yield* Context.get(ctx, BreakerStore.BreakerStore).connect("ledger")
        assert.deepStrictEqual(yield* shared.counts!.read, { consecutiveFailures: 1, lastFailureAt: 4_321 })
        // An older report (a late retry) never moves it back.
        yield* shared.counts!.recordFailures(1, 1_000)
        assert.deepStrictEqual(yield* shared.counts!.read, { consecutiveFailures: 2, lastFailureAt: 4_321 })
      })
    )

    it.scoped("circuits are isolated by name", () =>
      Effect.gen(function* () {
        const db = yield* fresh
        const ctx = yield* instance(db)
        const a = yield* breakerIn(ctx, "a")
        const b = yield* breakerIn(ctx, "b")
        yield* times(3, fail(a))
        yield* fail(b)
        assert.strictEqual((yield* a.state)._tag, "Open")
        assert.strictEqual((yield* b.state)._tag, "Closed")
        yield* waitForState(db, "a", "Open")
        yield* eventually(row(db, "b"), (r) => Option.isSome(r) && r.value.consecutive_failures === 1)
        expect(yield* stateOf(db, "b")).toStrictEqual(Option.some(null as string | null))
        const b2 = yield* breakerIn(yield* instance(db), "b")
        assert.strictEqual((yield* b2.state)._tag, "Closed")
      })
    )

    it.scoped("50 concurrent failures from separate connections are all counted, in one row", () =>
      Effect.gen(function* () {
        const db = yield* fresh
        const members = yield* Effect.forEach([1, 2, 3, 4, 5], () =>
          Effect.flatMap(instance(db), (ctx) =>
            Effect.flatMap(Effect.provide(BreakerStore.BreakerStore, ctx), (store) => store.connect("hot"))
          )
        )
        yield* Effect.forEach(
          Array.from({ length: 50 }, (_, i) => i),
          (i) => members[i % members.length]!.counts!.recordFailures(1, 100 + i),
          { concurrency: "unbounded", discard: true }
        )
        const stored = yield* rows(db, "hot")
        assert.strictEqual(stored.length, 1)
        assert.strictEqual(stored[0]!.consecutive_failures, 50)
        assert.strictEqual(stored[0]!.last_failure_at, 149)
        assert.deepStrictEqual(yield* members[0]!.counts!.read, { consecutiveFailures: 50, lastFailureAt: 149 })
      })
    )

    it.scoped("state survives closing and reopening the store", () =>
      Effect.gen(function* () {
        const db = yield* fresh
        const scope = yield* Scope.make()
        const first = yield* breakerIn(yield* Effect.provideService(instance(db), Scope.Scope, scope), "durable").pipe(
          Effect.provideService(Scope.Scope, scope)
        )
        yield* times(3, fail(first))
        const stored = Option.getOrThrow(yield* waitForState(db, "durable", "Open"))
        yield* Scope.close(scope, Exit.void)
        // The breaker's clock jumps 4 s; the database's does not: the time left is the database's.
        yield* TestClock.adjust(4_000)
        const again = yield* breakerIn(yield* instance(db), "durable")
        const until = yield* untilOf(again)
        // Open for what is left by the database's clock (this machine's): OPEN_FOR less the real time
        // since the verdict was made, measured here (2.4 s at a load average of 45), give or take 100 ms.
        const aged = Date.now() - stored.verdict_at
        assert.isTrue(
          until > 4_000 + OPEN_FOR - aged - 100 && until <= 4_000 + OPEN_FOR,
          `open until ${until}, aged ${aged}`
        )
        assert.isTrue(Result.isFailure(yield* succeed(again)))
        yield* TestClock.adjust(until - 4_000 - 1)
        assert.strictEqual((yield* again.state)._tag, "Open")
        yield* TestClock.adjust(1)
        assert.strictEqual((yield* again.state)._tag, "HalfOpen")
      })
    )

    it.scoped("the half-open probe is won by exactly one of several concurrent members", () =>
      Effect.gen(function* () {
        const db = yield* fresh
        const opener = yield* breakerIn(yield* instance(db), "probe")
        yield* times(3, fail(opener))
        yield* waitForState(db, "probe", "Open")
        // Four more members, each on its own connection, all loading the open verdict.
        const members = yield* Effect.forEach([1, 2, 3, 4], () =>
          Effect.flatMap(instance(db), (ctx) => breakerIn(ctx, "probe"))
        )
        for (const m of members) assert.strictEqual((yield* m.state)._tag, "Open")
        yield* TestClock.adjust(OPEN_FOR)
        const gate = yield* Deferred.make<void>()
        let runs = 0
        const probe = Effect.andThen(
          Effect.sync(() => runs++),
          Deferred.await(gate)
        )
        const fibers = yield* Effect.forEach(members, (m) => Edition.forkChild(result(m.execute(probe))))
        // Every member but the winner is refused at once; the winner waits on the gate.
        const refused = yield* eventually(
          Effect.forEach(fibers, (f) => poll(f)),
          (polls) => polls.filter(Option.isSome).length === members.length - 1
        )
        assert.strictEqual(runs, 1)
        for (const p of refused) {
          if (Option.isNone(p)) continue
          const outcome = Exit.isSuccess(p.value) ? p.value.value : Result.succeed(undefined)
          const error = Option.getOrUndefined(Result.getFailure(outcome))
          assert.isTrue(Result.isFailure(outcome) && error?._tag === "BreakerOpenError")
          if (error?._tag === "BreakerOpenError") assert.strictEqual(error.state, "HalfOpen")
        }
        yield* Deferred.succeed(gate, undefined)
        yield* Effect.forEach(fibers, Fiber.join)
        assert.strictEqual(runs, 1)
        yield* waitForState(db, "probe", "Closed")
      })
    )

    it.scoped("malformed rows are reported and treated as closed, never a crash", () =>
      Effect.gen(function* () {
        const db = yield* fresh
        const ctx = yield* instance(db)
        const sqlStore = Context.get(ctx, SqlBreakerStore.SqlBreakerStore)
        const problems = yield* sqlStore.subscribeProblems
        yield* db.sql`INSERT INTO ${db.sql(db.table)} (name, state, open_until, verdict_at, origin, updated_at)
          VALUES ('legacy', 'half_open', 99999999, 5, 'php', 5)`.pipe(Effect.orDie)
        const breaker = yield* breakerIn(ctx, "legacy")
        assert.strictEqual((yield* breaker.state)._tag, "Closed")
        assert.deepStrictEqual(yield* succeed(breaker), Result.succeed("ok"))
        const problem = yield* take(problems)
        assert.strictEqual(problem._tag, "BreakerStoreError")
        assert.strictEqual(problem.operation, "decode")
        assert.include(problem.message, `"legacy"`)
        assert.include(problem.message, `"half_open"`)
        const shared = yield* Context.get(ctx, BreakerStore.BreakerStore).connect("legacy")
        const loaded = Option.getOrThrow(yield* shared.verdict.load)
        assert.deepStrictEqual([loaded.state, loaded.remainingMillis, loaded.origin], ["Closed", 0, ""])
        // Reported once while the row stays the same, however often it is read.
        yield* sqlStore.poll
        yield* sqlStore.poll
        assert.strictEqual(yield* remaining(problems), 0)
        // A row that turns malformed while a breaker follows it closes that breaker.
        yield* times(3, fail(breaker))
        yield* waitForState(db, "legacy", "Open")
        const changes = yield* breaker.subscribe
        yield* db.sql`UPDATE ${db.sql(db.table)} SET state = 'OPEN!' WHERE name = 'legacy'`.pipe(Effect.orDie)
        yield* sqlStore.poll
        yield* waitForTransition(changes, "Closed")
        assert.include((yield* take(problems)).message, `"OPEN!"`)
        // The next verdict saved replaces the bad row.
        yield* times(3, fail(breaker))
        yield* waitForState(db, "legacy", "Open")
      })
    )
  })
}
