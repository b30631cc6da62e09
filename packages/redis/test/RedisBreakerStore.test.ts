import { BreakerStore, CircuitBreaker, Policy } from "@circuitry/breaker"
import { RedisBreakerStore } from "@circuitry/redis"
import * as Edition from "@circuitry/core/Edition"
import { assert, childExecArgv, describe, expect, it, Result, result, TestClock } from "@circuitry/testkit"
import { Deferred, Effect, Fiber, Layer, Option, Stream } from "effect"
import { Redis } from "ioredis"
import { spawn } from "node:child_process"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import { failureOf } from "./utils/outcome.js"
import { cleanup, eventually, startServer, uniquePrefix } from "./utils/server.js"
import { openTimeOver, pubSub, type Seen, subscribed, waitFor, watchCommands } from "./utils/wait.js"

const URL = "redis://127.0.0.1:6379"

/** A fresh prefix on the shared test Redis, emptied when the test ends. */
const scratch = Effect.gen(function* () {
  const prefix = uniquePrefix("breaker")
  yield* Effect.acquireRelease(
    Effect.sync(() => new Redis(URL)),
    (client) => Effect.promise(() => cleanup(client, prefix).finally(() => client.disconnect()))
  )
  return prefix
})

const options = (name: string, openFor: Edition.DurationInput = "10 seconds"): CircuitBreaker.Options => ({
  name,
  policy: Policy.consecutiveFailures(2),
  openFor
})

/** An "instance": a breaker with a RedisBreakerStore layer (and so connections) of its own. */
const instance = (prefix: string, name: string, url = URL, openFor?: Edition.DurationInput) =>
  Effect.gen(function* () {
    const store = yield* Layer.build(RedisBreakerStore.layer({ url, prefix }))
    return yield* CircuitBreaker.make(options(name, openFor)).pipe(Effect.provide(store))
  })

/**
 * The open time of members that go on to probe. The store refuses a probe lease while the stored
 * verdict is open by the server's clock, which runs in real time: it must see the open time pass
 * too, so it is short.
 */
const PROBING_OPEN_FOR = 300

/** A plain client of the test's own on `url`, closed with the scope. */
const adminOn = (url = URL) =>
  Effect.acquireRelease(
    Effect.sync(() => new Redis(url)),
    (client) => Effect.sync(() => client.disconnect())
  )

/**
 * The open time of the verdict stored for `name` passes: on the server's clock (real time, waited
 * for by reading it), then on the members' TestClock.
 */
const openTimePasses = (prefix: string, name = "payments") =>
  Effect.gen(function* () {
    yield* openTimeOver(yield* adminOn(), `${prefix}{${name}}:circuit`)
    yield* TestClock.adjust(PROBING_OPEN_FOR)
  })

const untilOf = (breaker: CircuitBreaker.CircuitBreaker) =>
  Effect.map(breaker.state, (s) => (s._tag === "Open" ? s.until : Number.NaN))

/**
 * Both open, and `follower` half-opens at most `millis` before `leader` and never after. The
 * server's clock ages a stored verdict in real time, so a member that reads it later (a resync, a
 * late join) is told that much less time is left; a TestClock jump while a verdict is in flight
 * (the test drives the writer's retries) moves the follower's reading by at most that jump.
 */
const agreeWithin = (leader: CircuitBreaker.CircuitBreaker, follower: CircuitBreaker.CircuitBreaker, millis: number) =>
  Effect.gen(function* () {
    const [a, b] = [yield* untilOf(leader), yield* untilOf(follower)]
    assert.isTrue(Math.abs(a - b) <= millis, `open until ${a} and ${b}: more than ${millis} ms apart`)
  })

const failing = Effect.fail("boom" as const)
const tagOf = (breaker: CircuitBreaker.CircuitBreaker) => Effect.map(breaker.state, (s) => s._tag)
const becomes = (breaker: CircuitBreaker.CircuitBreaker, tag: CircuitBreaker.StateTag, millis = 5_000) =>
  eventually(
    Effect.map(tagOf(breaker), (t) => t === tag),
    millis,
    2
  )

const open = (breaker: CircuitBreaker.CircuitBreaker) =>
  Effect.gen(function* () {
    yield* result(CircuitBreaker.withBreaker(failing, breaker))
    yield* result(CircuitBreaker.withBreaker(failing, breaker))
    assert.strictEqual(yield* tagOf(breaker), "Open")
  })

/** What a verdict says, without its durations (real time passes between a save and a read). */
const summary = (v: BreakerStore.Verdict) => ({ state: v.state, origin: v.origin, by: v.by })

describe("RedisBreakerStore", () => {
  describe("shared verdict", () => {
    it.scoped("two instances see one verdict; opening is seen by the other within 100 ms of bare pub/sub", () =>
      Effect.gen(function* () {
        const prefix = yield* scratch
        const a = yield* instance(prefix, "payments")
        const b = yield* instance(prefix, "payments")
        const other = yield* instance(prefix, "emails") // another name on the same store
        const baseline = yield* pubSub(URL)
        yield* open(a)
        const started = performance.now()
        // within 100 ms of what a bare publication takes, sent at the same moment (same machine, same load)
        const bareFiber = yield* Edition.forkChild(baseline.once)
        assert.isTrue(yield* becomes(b, "Open", 1_000))
        const elapsed = performance.now() - started
        const bare = yield* Fiber.join(bareFiber)
        assert.isTrue(
          elapsed < bare + 100,
          `seen after ${elapsed.toFixed(1)} ms; a bare publication took ${bare.toFixed(1)} ms`
        )
        assert.deepStrictEqual(yield* b.state, yield* a.state)
        // b rejects without running the effect
        let runs = 0
        const outcome = yield* result(
          CircuitBreaker.withBreaker(
            Effect.sync(() => runs++),
            b
          )
        )
        assert.isTrue(failureOf(outcome)?._tag === "BreakerOpenError")
        assert.strictEqual(runs, 0)
        assert.strictEqual(yield* tagOf(other), "Closed")
      })
    )

    it.scoped("an instance created later adopts the stored verdict at once", () =>
      Effect.gen(function* () {
        const prefix = yield* scratch
        const a = yield* instance(prefix, "payments")
        yield* open(a)
        const until = ((yield* a.state) as { until: number }).until
        // the verdict is saved in the background: wait until it is stored
        const probe = yield* Layer.build(RedisBreakerStore.layer({ prefix }))
        const circuit = yield* BreakerStore.BreakerStore.pipe(
          Effect.flatMap((s) => s.connect("payments")),
          Effect.provide(probe)
        )
        assert.isTrue(yield* eventually(Effect.map(Effect.orDie(circuit.verdict.load), Option.isSome)))
        const started = performance.now()
        const c = yield* instance(prefix, "payments")
        // the server aged the verdict by the real time since a saved it (a few ms): no more
        const cUntil = yield* untilOf(c)
        assert.isAtMost(cUntil, until)
        assert.isAtLeast(cUntil, until - (performance.now() - started) - 1_000)
        // the server's clock, not the member's, says how long is left: a member whose clock reads 11 s
        // later (a TestClock jump the server never saw) is still open for the fleet's remaining time,
        // less the real time from c's start to d's (measured: a loaded machine takes longer)
        yield* TestClock.adjust("11 seconds")
        const d = yield* instance(prefix, "payments")
        assert.strictEqual(yield* tagOf(d), "Open")
        assert.isAtLeast(yield* untilOf(d), 11_000 + cUntil - (performance.now() - started))
      })
    )

    it.scoped("one that joins after the open time is over (by the server's clock) joins the fleet's probe", () =>
      Effect.gen(function* () {
        const prefix = yield* scratch
        const a = yield* instance(prefix, "payments", URL, "200 millis")
        yield* open(a)
        const probe = yield* Layer.build(RedisBreakerStore.layer({ prefix }))
        const circuit = yield* BreakerStore.BreakerStore.pipe(
          Effect.flatMap((s) => s.connect("payments")),
          Effect.provide(probe)
        )
        assert.isTrue(yield* eventually(Effect.map(Effect.orDie(circuit.verdict.load), Option.isSome)))
        // real time: the server's clock decides when the episode is over
        yield* openTimeOver(yield* adminOn(), `${prefix}{payments}:circuit`)
        const d = yield* instance(prefix, "payments", URL, "200 millis")
        // over, but not closed: d joins the fleet's probe instead of letting traffic through
        assert.strictEqual(yield* tagOf(d), "HalfOpen")
      })
    )

    it.scoped("a close after a successful probe reaches every member", () =>
      Effect.gen(function* () {
        const prefix = yield* scratch
        const a = yield* instance(prefix, "payments", URL, PROBING_OPEN_FOR)
        const b = yield* instance(prefix, "payments", URL, PROBING_OPEN_FOR)
        yield* open(a)
        assert.isTrue(yield* becomes(b, "Open"))
        yield* openTimePasses(prefix)
        assert.strictEqual(yield* tagOf(b), "HalfOpen")
        assert.strictEqual(yield* CircuitBreaker.withBreaker(Effect.succeed("ok"), a), "ok")
        assert.strictEqual(yield* tagOf(a), "Closed")
        assert.isTrue(yield* becomes(b, "Closed"))
        // and isolation too
        yield* b.isolate
        assert.isTrue(yield* becomes(a, "Isolated"))
        yield* a.reset
        assert.isTrue(yield* becomes(b, "Closed"))
      })
    )

    it.scoped("a burst of probes from three instances reaches the dependency once", () =>
      Effect.gen(function* () {
        const prefix = yield* scratch
        const members = [
          yield* instance(prefix, "payments", URL, PROBING_OPEN_FOR),
          yield* instance(prefix, "payments", URL, PROBING_OPEN_FOR),
          yield* instance(prefix, "payments", URL, PROBING_OPEN_FOR)
        ]
        yield* open(members[0]!)
        for (const m of members) assert.isTrue(yield* becomes(m, "Open"))
        yield* openTimePasses(prefix)
        for (const m of members) assert.strictEqual(yield* tagOf(m), "HalfOpen")

        let calls = 0
        const gate = yield* Deferred.make<void>()
        const dependency = Effect.suspend(() => {
          calls++
          return Deferred.await(gate)
        })
        // every instance gets a burst of calls in the same instant
        const fibers = yield* Effect.forEach(
          members.flatMap((m) => [m, m, m]),
          (m) => Edition.forkChild(result(CircuitBreaker.withBreaker(dependency, m)))
        )
        // all but the one probe are rejected; wait for those, then let the probe succeed
        assert.isTrue(
          yield* eventually(Effect.sync(() => fibers.filter((f) => Edition.pollUnsafe(f) !== undefined).length === 8))
        )
        assert.strictEqual(calls, 1)
        yield* Deferred.succeed(gate, undefined)
        const results = yield* Effect.forEach(fibers, Fiber.join)
        assert.strictEqual(results.filter((r) => Result.isSuccess(r)).length, 1)
        for (const r of results.filter((r) => Result.isFailure(r))) {
          assert.strictEqual(failureOf(r)?._tag, "BreakerOpenError")
          assert.strictEqual((failureOf(r) as CircuitBreaker.BreakerOpenError).state, "HalfOpen")
        }
        assert.strictEqual(calls, 1)
        for (const m of members) assert.isTrue(yield* becomes(m, "Closed"))
      })
    )

    it.scoped("the probe lease is released when the probe ends, so the next episode can probe", () =>
      Effect.gen(function* () {
        const prefix = yield* scratch
        const a = yield* instance(prefix, "payments", URL, PROBING_OPEN_FOR)
        const b = yield* instance(prefix, "payments", URL, PROBING_OPEN_FOR)
        yield* open(a)
        assert.isTrue(yield* becomes(b, "Open"))
        yield* openTimePasses(prefix)
        // a's probe fails: the circuit reopens everywhere
        yield* result(CircuitBreaker.withBreaker(failing, a))
        assert.strictEqual(yield* tagOf(a), "Open")
        assert.isTrue(
          yield* eventually(Effect.map(b.state, (s) => s._tag === "Open" && s.until > PROBING_OPEN_FOR)),
          "b adopts the reopened circuit"
        )
        yield* openTimePasses(prefix)
        // the lease went back: b may probe now, long before the lease would have expired
        assert.isTrue(
          yield* eventually(
            Effect.map(result(CircuitBreaker.withBreaker(Effect.succeed("ok"), b)), (r) => Result.isSuccess(r))
          )
        )
        assert.isTrue(yield* becomes(a, "Closed"))
      })
    )

    it.scoped("the closed success path makes no Redis round trip; failures are reported in the background", () =>
      Effect.gen(function* () {
        const server = yield* startServer
        const prefix = uniquePrefix("quiet")
        const key = `${prefix}{payments}:circuit`
        // watched from before the store starts (a MONITOR that starts amid traffic can misread it)
        const watched = yield* watchCommands([server.admin])
        const a = yield* instance(prefix, "payments", server.url)
        const from = watched.length
        for (let i = 0; i < 200; i++) yield* CircuitBreaker.withBreaker(Effect.void, a)
        // one failure: reported without the caller waiting for it, and after anything the calls
        // before it made the store owe (one connection, one writer, in order)
        yield* result(CircuitBreaker.withBreaker(failing, a))
        // its report: a script on the circuit's key that does more than read it (counts, or the verdict it made)
        const isReport = (c: Seen) => /^eval/.test(c.name) && c.args[2] === key && c.args.length > 3
        yield* waitFor(
          "the failure's report to reach the server",
          Effect.sync(() => watched.slice(from).some(isReport))
        )
        // Before it, nothing but what the store's startup may still send (its resync on ready:
        // the subscription, a read of the stored verdict): no call sends either.
        const isStartup = (c: Seen) => c.name === "subscribe" || (/^eval/.test(c.name) && c.args.length === 3)
        const after = watched.slice(from)
        const before = after.slice(0, after.findIndex(isReport)).filter((c) => !isStartup(c))
        assert.deepStrictEqual(before, [])
        const store = yield* Layer.build(RedisBreakerStore.layer({ url: server.url, prefix }))
        const circuit = yield* BreakerStore.BreakerStore.pipe(
          Effect.flatMap((s) => s.connect("payments")),
          Effect.provide(store)
        )
        assert.deepStrictEqual((yield* Effect.orDie(circuit.counts!.read)).consecutiveFailures, 1)
      })
    )
  })

  describe("two OS processes", () => {
    it.scopedLive(
      "a breaker in another process agrees, both ways",
      () =>
        Effect.gen(function* () {
          const prefix = yield* scratch
          const here = yield* instance(prefix, "payments")
          const script = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "member.ts")
          const child = yield* Effect.acquireRelease(
            Effect.sync(() =>
              spawn(process.execPath, [...childExecArgv, script, URL, prefix, "payments"], {
                stdio: ["pipe", "pipe", "inherit"],
                cwd: path.dirname(script)
              })
            ),
            (c) => Effect.sync(() => c.kill("SIGKILL"))
          )
          const lines: Array<string> = []
          readline.createInterface({ input: child.stdout! }).on("line", (line) => lines.push(line))
          const ask = (command: string, prefixOfAnswer: string) =>
            Effect.gen(function* () {
              const seen = lines.length
              child.stdin!.write(command + "\n")
              assert.isTrue(
                yield* eventually(
                  Effect.sync(() => lines.length > seen),
                  10_000
                ),
                `no answer to ${command}`
              )
              const answer = lines[seen]!
              assert.isTrue(answer.startsWith(prefixOfAnswer), answer)
              return answer.slice(prefixOfAnswer.length)
            })
          assert.isTrue(
            yield* eventually(
              Effect.sync(() => lines.length > 0),
              90_000 // tsx compiles the sources first: slow on a loaded machine, as the fleet's children
            ),
            "child did not start"
          )
          // The child runs the test's Effect major (effect 4 on the Effect 4 run: childExecArgv).
          assert.strictEqual(lines[0], `ready Closed on effect ${Edition.major}`)
          // opened here: seen there
          yield* open(here)
          assert.isTrue(
            yield* eventually(
              Effect.map(ask("state", "state "), (s) => s === "Open"),
              5_000,
              20
            ),
            "the child sees the open circuit"
          )
          // reset here, then opened there: seen here
          yield* here.reset
          assert.isTrue(
            yield* eventually(
              Effect.map(ask("state", "state "), (s) => s === "Closed"),
              5_000,
              20
            )
          )
          assert.strictEqual(yield* ask("fail", "failed "), "boom")
          assert.isTrue(yield* becomes(here, "Open"))
          child.stdin!.write("exit\n")
        }),
      120_000
    )
  })

  describe("Redis down", () => {
    it.scoped(
      "killed mid-run: every call keeps working, and state converges after the restart",
      () =>
        Effect.gen(function* () {
          const server = yield* startServer
          const prefix = uniquePrefix("down")
          const a = yield* instance(prefix, "payments", server.url)
          const b = yield* instance(prefix, "payments", server.url)
          yield* server.kill
          // closed calls succeed, failures count, and a opens on its own local state
          for (let i = 0; i < 20; i++) {
            assert.strictEqual(yield* CircuitBreaker.withBreaker(Effect.succeed(i), b), i)
          }
          yield* open(a)
          const rejected = yield* result(CircuitBreaker.withBreaker(Effect.succeed(1), a))
          assert.isTrue(failureOf(rejected)?._tag === "BreakerOpenError")
          assert.strictEqual(yield* tagOf(b), "Closed")
          yield* server.restart
          // a's background writer retries every second of the Clock; b learns the verdict by pub/sub
          assert.isTrue(
            yield* eventually(
              Effect.gen(function* () {
                yield* TestClock.adjust("1 second")
                return (yield* tagOf(b)) === "Open"
              }),
              10_000,
              50
            )
          )
          yield* agreeWithin(a, b, 1_000)
        }),
      20_000
    )

    it.scoped("while Redis is down, a half-open instance probes on its own instead of waiting for a lease", () =>
      Effect.gen(function* () {
        const server = yield* startServer
        const prefix = uniquePrefix("probe-down")
        const a = yield* instance(prefix, "payments", server.url)
        yield* open(a)
        yield* server.kill
        yield* TestClock.adjust("10 seconds")
        assert.strictEqual(yield* tagOf(a), "HalfOpen")
        // the lease cannot be taken (the store fails fast): the probe runs locally and closes the circuit
        assert.strictEqual(yield* CircuitBreaker.withBreaker(Effect.succeed("probed"), a), "probed")
        assert.strictEqual(yield* tagOf(a), "Closed")
      })
    )

    it.scoped("members that missed a verdict while their subscriber was away resynchronise on reconnect", () =>
      Effect.gen(function* () {
        const server = yield* startServer
        const prefix = uniquePrefix("resync")
        const a = yield* instance(prefix, "payments", server.url)
        const b = yield* instance(prefix, "payments", server.url)
        // both subscribers are in place (a loaded machine's startup may not have waited for them)
        yield* subscribed([server.admin], `${prefix}verdicts`, 2)
        // every subscriber connection is cut; ioredis reconnects them after its backoff (>= 50 ms)
        const killed = yield* Effect.promise(() => server.admin.call("CLIENT", "KILL", "TYPE", "pubsub"))
        assert.strictEqual(killed, 2)
        // published while nobody listens: only the re-emission on reconnect can tell b
        yield* open(a)
        assert.isTrue(
          yield* eventually(
            Effect.promise(() => server.admin.hget(`${prefix}{payments}:circuit`, "state")).pipe(
              Effect.map((state) => state === "Open")
            )
          )
        )
        const started = performance.now()
        assert.isTrue(yield* becomes(b, "Open"))
        // b read the verdict later, by the server's clock, than a made it: at most that much earlier
        yield* agreeWithin(a, b, performance.now() - started + 1_000)
      })
    )

    it.scoped(
      "Redis down at startup: the layer builds, breakers work locally, and join once it is up",
      () =>
        Effect.gen(function* () {
          const server = yield* startServer
          const prefix = uniquePrefix("late")
          yield* server.kill
          const a = yield* instance(prefix, "payments", server.url)
          assert.strictEqual(yield* CircuitBreaker.withBreaker(Effect.succeed("ok"), a), "ok")
          yield* server.restart
          const b = yield* instance(prefix, "payments", server.url)
          yield* open(b)
          // a's subscriber connects in the background (ioredis backoff, real time) and then hears it.
          // b's writer retries on the Clock if it raced the start, so the Clock moves until b's
          // verdict is stored, and not after: each second ages that verdict (Open for 10 s), and
          // a slow reconnect used to see it expired (HalfOpen), never Open.
          const stored = Effect.promise(() => server.admin.hget(`${prefix}{payments}:circuit`, "state"))
          assert.isTrue(
            yield* eventually(
              Effect.gen(function* () {
                if ((yield* tagOf(a)) === "Open") return true
                if ((yield* stored) !== "Open") yield* TestClock.adjust("1 second")
                return false
              }),
              10_000,
              50
            )
          )
        }),
      20_000
    )
  })

  describe("the store itself", () => {
    const circuitOn = (prefix: string, name: string) =>
      Effect.gen(function* () {
        const store = yield* Layer.build(RedisBreakerStore.layer({ prefix }))
        return yield* BreakerStore.BreakerStore.pipe(
          Effect.flatMap((s) => s.connect(name)),
          Effect.provide(store)
        )
      })

    it.scoped("save keeps the newest verdict; an older one does not overwrite it", () =>
      Effect.gen(function* () {
        const prefix = yield* scratch
        const one = yield* circuitOn(prefix, "c")
        const two = yield* circuitOn(prefix, "c")
        assert.isTrue(Option.isNone(yield* one.verdict.load))
        const newer: BreakerStore.Verdict = { state: "Open", remainingMillis: 5_000, ageMillis: 0, origin: "one" }
        const older: BreakerStore.Verdict = { state: "Closed", remainingMillis: 0, ageMillis: 1_000, origin: "two" }
        yield* one.verdict.save(newer)
        yield* two.verdict.save(older)
        expect(Option.map(yield* one.verdict.load, summary)).toStrictEqual(Option.some(summary(newer)))
        expect(Option.map(yield* two.verdict.load, summary)).toStrictEqual(Option.some(summary(newer)))
        const newest: BreakerStore.Verdict = {
          state: "Closed",
          remainingMillis: 0,
          ageMillis: 0,
          origin: "two",
          by: "ops"
        }
        yield* two.verdict.save(newest)
        expect(Option.map(yield* one.verdict.load, summary)).toStrictEqual(Option.some(summary(newest)))
        // stored on the server's clock: the hash holds server times, whatever the savers' clocks say
        const client = yield* Effect.acquireRelease(
          Effect.sync(() => new Redis(URL)),
          (c) => Effect.sync(() => c.disconnect())
        )
        const [seconds] = yield* Effect.promise(() => client.time())
        const stored = yield* Effect.promise(() => client.hgetall(`${prefix}{c}:circuit`))
        assert.isBelow(Math.abs(Number(stored.at) - Number(seconds) * 1_000), 5_000)
        assert.strictEqual(stored.by, "ops")
      })
    )

    it.scoped("verdicts reach the members; a stale save makes the store tell its sender the newer one", () =>
      Effect.gen(function* () {
        const prefix = yield* scratch
        const one = yield* circuitOn(prefix, "c")
        const two = yield* circuitOn(prefix, "c")
        const heard: Record<"one" | "two", Array<BreakerStore.Verdict>> = { one: [], two: [] }
        yield* Effect.forkScoped(Stream.runForEach(one.verdict.watch, (v) => Effect.sync(() => heard.one.push(v))))
        yield* Effect.forkScoped(Stream.runForEach(two.verdict.watch, (v) => Effect.sync(() => heard.two.push(v))))
        const newer: BreakerStore.Verdict = { state: "Open", remainingMillis: 5_000, ageMillis: 0, origin: "one" }
        const older: BreakerStore.Verdict = { state: "Closed", remainingMillis: 0, ageMillis: 1_000, origin: "two" }
        yield* one.verdict.save(newer)
        assert.isTrue(yield* eventually(Effect.sync(() => heard.two.length === 1)))
        assert.deepStrictEqual(heard.two.map(summary), [summary(newer)])
        yield* two.verdict.save(older)
        assert.isTrue(yield* eventually(Effect.sync(() => heard.two.length === 2)))
        assert.deepStrictEqual(heard.two.map(summary), [summary(newer), summary(newer)])
        assert.isFalse([...heard.one, ...heard.two].some((v) => v.origin === older.origin))
      })
    )

    it.scoped("failures add up across members, a success starts the count again", () =>
      Effect.gen(function* () {
        const prefix = yield* scratch
        const one = yield* circuitOn(prefix, "c")
        const two = yield* circuitOn(prefix, "c")
        yield* Effect.all(
          [one.counts!.recordFailures(3, 100), two.counts!.recordFailures(2, 50), one.counts!.recordFailures(1, 120)],
          {
            concurrency: "unbounded"
          }
        )
        assert.deepStrictEqual(yield* two.counts!.read, { consecutiveFailures: 6, lastFailureAt: 120 })
        yield* two.counts!.recordSuccess(130)
        assert.deepStrictEqual(yield* one.counts!.read, { consecutiveFailures: 0, lastFailureAt: 120 })
        // a saved verdict starts the count again too
        yield* one.counts!.recordFailures(4, 140)
        yield* one.verdict.save({ state: "Open", remainingMillis: 1_000, ageMillis: 0, origin: "x" })
        assert.strictEqual((yield* two.counts!.read).consecutiveFailures, 0)
      })
    )

    it.scoped("probe leases: one per permit, fleet-wide, released by their holder, taken over when over", () =>
      Effect.gen(function* () {
        const prefix = yield* scratch
        const one = yield* circuitOn(prefix, "c")
        const two = yield* circuitOn(prefix, "c")
        const first = yield* one.probes!.acquire({ permits: 1, leaseMillis: 1_000, now: 0 })
        assert.isTrue(Option.isSome(first))
        assert.isTrue(Option.isNone(yield* two.probes!.acquire({ permits: 1, leaseMillis: 1_000, now: 500 })))
        // two permits: one more slot
        const second = yield* two.probes!.acquire({ permits: 2, leaseMillis: 1_000, now: 500 })
        assert.isTrue(Option.isSome(second))
        assert.isTrue(Option.isNone(yield* two.probes!.acquire({ permits: 2, leaseMillis: 1_000, now: 600 })))
        // released by the holder: free again; a foreign token releases nothing
        yield* two.probes!.release("0:not-the-token")
        assert.isTrue(Option.isNone(yield* two.probes!.acquire({ permits: 1, leaseMillis: 1_000, now: 700 })))
        yield* one.probes!.release(Option.getOrThrow(first))
        const third = yield* two.probes!.acquire({ permits: 1, leaseMillis: 1_000, now: 700 })
        assert.isTrue(Option.isSome(third))
        // over by the Clock (passed in), though Redis would still keep the key
        assert.isTrue(Option.isNone(yield* one.probes!.acquire({ permits: 1, leaseMillis: 1_000, now: 1_699 })))
        const takenOver = yield* one.probes!.acquire({ permits: 1, leaseMillis: 1_000, now: 1_700 })
        assert.isTrue(Option.isSome(takenOver))
        // the old holder's release does not free the lease that replaced its own
        yield* two.probes!.release(Option.getOrThrow(third))
        assert.isTrue(Option.isNone(yield* two.probes!.acquire({ permits: 1, leaseMillis: 1_000, now: 1_800 })))
      })
    )

    it.scoped(
      "no probe lease while the stored verdict is open by the server's clock: the fleet reopened, a late member does not probe",
      () =>
        Effect.gen(function* () {
          const prefix = yield* scratch
          const prober = yield* circuitOn(prefix, "c")
          const late = yield* circuitOn(prefix, "c")
          // open with no time left: the fleet is half-open
          yield* prober.verdict.save({ state: "Open", remainingMillis: 0, ageMillis: 0, origin: "prober" })
          // the episode is over: a lease, given back after the probe failed and the fleet reopened
          const lease = Option.getOrThrow(
            yield* prober.probes!.acquire({ permits: 1, leaseMillis: 60_000, now: 1_000 })
          )
          yield* prober.verdict.save({ state: "Open", remainingMillis: 60_000, ageMillis: 0, origin: "prober" })
          yield* prober.probes!.release(lease)
          // a member still half-open in the episode before has not heard: no lease for it, whatever
          // its own clock says (the stored verdict's time left is the server's)
          assert.isTrue(Option.isNone(yield* late.probes!.acquire({ permits: 1, leaseMillis: 60_000, now: 1_150 })))
          assert.isTrue(Option.isNone(yield* late.probes!.acquire({ permits: 3, leaseMillis: 60_000, now: 9e12 })))
          // the next episode, once the open time ran out by the server's clock (real time): leases again
          yield* prober.verdict.save({ state: "Open", remainingMillis: 200, ageMillis: 0, origin: "prober" })
          assert.isTrue(Option.isNone(yield* late.probes!.acquire({ permits: 1, leaseMillis: 60_000, now: 2_100 })))
          yield* openTimeOver(yield* adminOn(), `${prefix}{c}:circuit`)
          assert.isTrue(Option.isSome(yield* late.probes!.acquire({ permits: 1, leaseMillis: 60_000, now: 2_100 })))
          // a closed fleet, and a stored value this store cannot read, refuse no lease
          const other = yield* circuitOn(prefix, "d")
          yield* other.verdict.save({ state: "Closed", remainingMillis: 0, ageMillis: 0, origin: "x" })
          assert.isTrue(Option.isSome(yield* other.probes!.acquire({ permits: 1, leaseMillis: 1_000, now: 1 })))
          const admin = new Redis(URL)
          yield* Effect.promise(() => admin.set(`${prefix}{e}:circuit`, "not a hash").finally(() => admin.disconnect()))
          const unreadable = yield* circuitOn(prefix, "e")
          assert.isTrue(Option.isSome(yield* unreadable.probes!.acquire({ permits: 1, leaseMillis: 1_000, now: 1 })))
        })
    )

    it.scoped("bad options are a typed error", () =>
      Effect.gen(function* () {
        for (const [o, message] of [
          [{ url: "localhost:6379" }, "url must be"],
          [{ prefix: 1 as never }, "prefix must be"],
          [{ timeout: -1 }, "timeout must be"]
        ] as const) {
          const outcome = yield* result(Layer.build(RedisBreakerStore.layer(o)))
          assert.isTrue(Result.isFailure(outcome))
          const error = failureOf(outcome)
          if (error !== undefined) {
            assert.strictEqual(error._tag, "InvalidRedisOptions")
            assert.include(error.message, message)
          }
        }
      })
    )
  })
})
