import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { Cache } from "@circuitry/cache"
import type { CacheStore } from "@circuitry/cache"
import * as Edition from "@circuitry/core/Edition"
import { assert, combineCauses, describe, interruptCause, it, logTo, TestClock, yieldNow } from "@circuitry/testkit"
import { Cause, Data, Effect, Exit, Option } from "effect"
import { assertEqual } from "./equal.js"
import { makeTestStore } from "./testStore.js"

class Boom extends Data.TaggedError("Boom")<{}> {}

/** A store whose every operation fails with `cause`. */
const failingWith = (cause: Cause.Cause<unknown>): CacheStore.CacheStore<unknown> => {
  const fail = Effect.failCause(cause)
  return {
    get: () => fail,
    getEntry: () => fail,
    set: () => fail,
    touch: () => fail,
    delete: () => fail,
    keys: () => fail,
    size: fail,
    ping: fail
  }
}

const guarded = (store: CacheStore.CacheStore<unknown>, threshold = 100) =>
  Effect.gen(function* () {
    const breaker = yield* CircuitBreaker.make({
      name: "reports",
      policy: Policy.consecutiveFailures(threshold),
      openFor: "30 seconds"
    })
    const reports: Array<Cache.ErrorReport> = []
    const cache = Cache.guard(store, breaker, {
      onError: (report) => Effect.sync(() => void reports.push(report))
    })
    return { breaker, cache, reports }
  })

describe("Cache.guard: what an error report says", () => {
  it.scoped("the kind is the operation and the error's tag, name or type; a defect is a defect", () =>
    Effect.gen(function* () {
      const cases: Array<[Cause.Cause<unknown>, string]> = [
        [Cause.fail(new Boom()), "Boom"],
        [Cause.fail({ _tag: "Plain" }), "Plain"],
        [Cause.fail({ _tag: 42 }), "object"],
        [Cause.fail(new TypeError("x")), "TypeError"],
        [Cause.fail("refused"), "string"],
        [Cause.fail(null), "object"],
        [Cause.fail(7), "number"],
        [Cause.die(new Error("bug")), "defect"]
      ]
      for (const [cause, tag] of cases) {
        const { cache, reports } = yield* guarded(failingWith(cause))
        assertEqual(yield* cache.get("k"), Option.none())
        assertEqual(yield* cache.getEntry!("k"), Option.none())
        assert.isFalse(yield* cache.set("k", "v"))
        assert.isFalse(yield* cache.touch("k"))
        assert.isFalse(yield* cache.delete("k"))
        assertEqual(yield* cache.keys(), [])
        assert.strictEqual(yield* cache.size, 0)
        assert.isFalse(yield* cache.ping)
        // getEntry is a read of the key: the same kind as get, so it is counted, not reported again
        assertEqual(
          reports.map((r) => [r._tag, r.kind, r.operation, r.breaker]),
          ["get", "set", "touch", "delete", "keys", "size", "ping"].map((op) => [
            "First",
            `${op}: ${tag}`,
            op,
            "reports"
          ]),
          tag
        )
        assert.isTrue(reports.every((r) => Cause.isCause(r.cause)))
      }
    })
  )

  it.scoped("the episode ends only with a success while Closed; then each kind repeated is counted once", () =>
    Effect.gen(function* () {
      const store = yield* makeTestStore()
      const { breaker, cache, reports } = yield* guarded(store, 2)
      yield* cache.get("k") // a success with no episode: nothing to report
      assert.strictEqual(reports.length, 0)
      store.failing = true
      yield* cache.get("a")
      yield* cache.set("a", "1") // the second failure opens the circuit
      assert.strictEqual((yield* breaker.state)._tag, "Open")
      store.failing = false
      yield* cache.set("b", "1") // a repair that succeeds while Open: the episode goes on
      assert.strictEqual(reports.length, 2)
      yield* TestClock.adjust("30 seconds")
      store.failing = true
      yield* cache.get("c") // the probe fails: Open again
      store.failing = false
      yield* TestClock.adjust("30 seconds")
      yield* cache.get("d") // the probe succeeds: Closed, the episode ends
      assert.strictEqual((yield* breaker.state)._tag, "Closed")
      assertEqual(
        reports.map((r) => [r._tag, r.kind, r._tag === "Suppressed" ? r.count : 0]),
        [
          ["First", "get: CacheError", 0],
          ["First", "set: CacheError", 0],
          ["Suppressed", "get: CacheError", 1]
        ]
      )
      const suppressed = reports[2]!
      assert.strictEqual(suppressed.operation, "get")
      assert.strictEqual(suppressed.breaker, "reports")
      // the first error's cause, not the last one's
      assert.strictEqual(suppressed.cause, reports[0]!.cause)
      // the next success adds nothing
      yield* cache.get("e")
      assert.strictEqual(reports.length, 3)
    })
  )

  it.scoped("two reads that succeed at once end the episode once, through a breaker whose state read yields", () =>
    Effect.gen(function* () {
      const store = yield* makeTestStore()
      const { breaker, reports } = yield* guarded(store)
      // Any breaker may guard a cache; this one lets other fibers run while its state is read, so
      // both reads find the episode still open before either has ended it.
      const yielding = new Proxy(breaker, {
        get: (target, key) => {
          if (key === "state") return Effect.andThen(yieldNow, target.state)
          const value: unknown = Reflect.get(target, key)
          return typeof value === "function" ? value.bind(target) : value
        }
      })
      const cache = Cache.guard(store, yielding, { onError: (report) => Effect.sync(() => void reports.push(report)) })
      yield* cache.set("k", "v")
      store.failNext = 2
      assertEqual(yield* cache.get("k"), Option.none())
      assertEqual(yield* cache.get("k"), Option.none())
      const both = yield* Effect.all([cache.get("k"), cache.get("k")], { concurrency: 2 })
      assertEqual(both, [Option.some("v"), Option.some("v")])
      assertEqual(
        reports.map((r) => [r._tag, r.kind, r._tag === "Suppressed" ? r.count : 0]),
        [
          ["First", "get: CacheError", 0],
          ["Suppressed", "get: CacheError", 1]
        ]
      )
    })
  )

  it.scoped("a hook that fails or dies leaves the fallback in place", () =>
    Effect.gen(function* () {
      const store = yield* makeTestStore()
      const breaker = yield* CircuitBreaker.make({ name: "cache" })
      store.failing = true
      for (const onError of [
        () => Effect.fail("no"),
        () => Effect.die("no"),
        () => {
          throw new Error("no")
        }
      ]) {
        const cache = Cache.guard(store, breaker, { onError: onError as never })
        assertEqual(yield* cache.get("a"), Option.none())
        assert.isFalse(yield* cache.set("a", "1"))
      }
    })
  )

  it.scoped("the default hook logs a warning per report", () =>
    Effect.gen(function* () {
      const logs: Array<[string, string]> = []
      const logger = logTo(({ level, messages }) => {
        logs.push([level, messages.join(" ")])
      })
      const store = yield* makeTestStore()
      const breaker = yield* CircuitBreaker.make({ name: "logged", policy: Policy.consecutiveFailures(5) })
      const cache = Cache.guard(store, breaker)
      yield* Effect.gen(function* () {
        store.failing = true
        yield* cache.get("a")
        yield* cache.get("a")
        yield* cache.get("a")
        store.failing = false
        yield* cache.get("a")
      }).pipe(Effect.provide(logger))
      assertEqual(logs, [
        ["Warn", `cache "logged": get: CacheError (repeats are counted, not logged, until the cache is healthy again)`],
        ["Warn", `cache "logged": 2 more get: CacheError while the cache was unhealthy`]
      ])
      // logReport is that hook, usable on its own
      const direct: Array<string> = []
      yield* Cache.logReport(
        Cache.ErrorReport.Suppressed({ breaker: "b", kind: "k", operation: "get", cause: Cause.empty, count: 3 })
      ).pipe(Effect.provide(logTo(({ messages }) => void direct.push(messages.join(" ")))))
      assertEqual(direct, [`cache "b": 3 more k while the cache was unhealthy`])
    })
  )

  it.scoped("an interruption from inside the store interrupts the caller: no fallback, no report", () =>
    Effect.gen(function* () {
      const store = yield* makeTestStore()
      const { cache, reports } = yield* guarded({ ...store, get: () => Effect.interrupt, set: () => Effect.interrupt })
      const read = yield* Effect.exit(cache.get("k"))
      assert.isTrue(Exit.isFailure(read) && Edition.hasInterruptsOnly(read.cause))
      const write = yield* Effect.exit(cache.set("k", "v"))
      assert.isTrue(Exit.isFailure(write) && Edition.hasInterruptsOnly(write.cause))
      assert.strictEqual(reports.length, 0)
      // an interruption with a failure beside it is a failure: reported, answered with the fallback
      const mixed = combineCauses(interruptCause, Cause.fail(new Boom()))
      const both = yield* guarded(failingWith(mixed))
      assertEqual(yield* both.cache.get("k"), Option.none())
      assert.strictEqual(both.reports.length, 1)
    })
  )

  it.scoped("the guard offers getEntry exactly when the store does", () =>
    Effect.gen(function* () {
      const without = yield* guarded(yield* makeTestStore({ getEntry: false }))
      assert.isUndefined(without.cache.getEntry)
      const withIt = yield* guarded(yield* makeTestStore())
      yield* withIt.cache.set("k", "v")
      assertEqual(
        Option.map(yield* withIt.cache.getEntry!("k"), (e) => e.value),
        Option.some("v")
      )
    })
  )
})
