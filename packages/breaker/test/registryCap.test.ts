import { BreakerRegistry, BreakerStore, CircuitBreaker, Policy } from "@circuitry/breaker"
import { assert, describe, drain, it, logTo, remaining, TestClock, yieldNow } from "@circuitry/testkit"
import { Effect, Metric } from "effect"
import * as Ejection from "../src/internal/ejection.js"
import { call, fail, succeed, tagOf } from "./utils.js"

/** Log lines at warning level, with their `breaker` annotation. */
const captureWarnings = () => {
  const lines: Array<{ readonly message: string; readonly breaker: string | undefined }> = []
  const layer = logTo(({ annotations, level, messages }) => {
    if (level !== "Warn") return
    const text = messages.join(" ")
    const breaker = annotations["breaker"]
    lines.push({ message: text, breaker: breaker === undefined ? undefined : String(breaker) })
  })
  return { lines, layer }
}

const cappedCount = Effect.map(Metric.value(BreakerRegistry.tripsCapped), (state) => state.count)

/** A dependency per name that counts the calls that really ran. */
const counting = () => {
  const ran = new Map<string, number>()
  const run = (name: string, outcome: "fail" | "ok") =>
    Effect.suspend(() => {
      ran.set(name, (ran.get(name) ?? 0) + 1)
      return outcome === "fail" ? fail : succeed
    })
  return { ran: (name: string) => ran.get(name) ?? 0, run }
}

describe("BreakerRegistry maxOpen", () => {
  it.scoped(
    "10 breakers, maxOpen 30%: the 4th trip is capped and reported, keeps serving, opens once one closes",
    () => {
      const { layer, lines } = captureWarnings()
      return Effect.gen(function* () {
        const registry = yield* BreakerRegistry.BreakerRegistry
        const trips = yield* registry.cappedTrips
        const hosts = Array.from({ length: 10 }, (_, i) => `host-${i}`)
        const breakers = yield* Effect.forEach(hosts, (host) => registry.get(host))
        const before = yield* cappedCount
        const dep = counting()
        for (const i of [0, 1, 2]) yield* call(breakers[i]!, dep.run(hosts[i]!, "fail"))
        assert.deepStrictEqual(yield* Effect.forEach(breakers.slice(0, 3), tagOf), ["Open", "Open", "Open"])

        // The 4th trip: capped. The breaker stays closed, and says so.
        yield* call(breakers[3]!, dep.run("host-3", "fail"))
        assert.strictEqual(yield* tagOf(breakers[3]!), "Closed")
        assert.isTrue((yield* breakers[3]!.snapshot).capped)
        assert.strictEqual((yield* cappedCount) - before, 1)
        assert.deepStrictEqual(yield* drain(trips), [{ breaker: "host-3", at: 0, open: 3, maxOpen: 3, breakers: 10 }])
        const warnings = lines.filter((line) => line.breaker === "host-3")
        assert.strictEqual(warnings.length, 1)
        assert.include(warnings[0]!.message, "3 of 10 breakers are open (maxOpen 3)")

        // It keeps serving: calls go through, and failing ones are reported once per spell.
        yield* call(breakers[3]!, dep.run("host-3", "fail"))
        yield* call(breakers[3]!, dep.run("host-3", "fail"))
        assert.strictEqual(dep.ran("host-3"), 3)
        assert.strictEqual(yield* tagOf(breakers[3]!), "Closed")
        assert.strictEqual((yield* cappedCount) - before, 1)
        assert.strictEqual(lines.filter((line) => line.breaker === "host-3").length, 1)
        assert.strictEqual(yield* remaining(trips), 0)

        // HalfOpen still counts: the 30 s are up, and host-3 is still capped.
        yield* TestClock.adjust("30 seconds")
        assert.strictEqual(yield* tagOf(breakers[0]!), "HalfOpen")
        yield* call(breakers[3]!, dep.run("host-3", "fail"))
        assert.strictEqual(yield* tagOf(breakers[3]!), "Closed")

        // host-0's probe succeeds: it closes, and host-3's next failing call (its policy still trips) opens it.
        yield* call(breakers[0]!, dep.run("host-0", "ok"))
        assert.strictEqual(yield* tagOf(breakers[0]!), "Closed")
        yield* call(breakers[3]!, dep.run("host-3", "fail"))
        assert.strictEqual(yield* tagOf(breakers[3]!), "Open")
        assert.isUndefined((yield* breakers[3]!.snapshot).capped)
        assert.strictEqual((yield* cappedCount) - before, 1)
      }).pipe(
        Effect.provide(
          BreakerRegistry.layer({
            defaults: { policy: Policy.consecutiveFailures(1), openFor: "30 seconds" },
            maxOpen: { fraction: 0.3 }
          })
        ),
        Effect.provide(layer)
      )
    }
  )

  it.effect("a count cap; a capped spell ends when the policy stops tripping, and a new spell is reported again", () =>
    Effect.gen(function* () {
      const registry = yield* BreakerRegistry.BreakerRegistry
      const [a, b, c] = yield* Effect.forEach(["a", "b", "c"], (name) => registry.get(name))
      const before = yield* cappedCount
      yield* call(a!, fail)
      yield* call(a!, fail)
      yield* call(b!, fail)
      yield* call(b!, fail)
      assert.strictEqual(yield* tagOf(b!), "Closed") // capped: a is open, maxOpen 1
      assert.isTrue((yield* b!.snapshot).capped)
      yield* call(b!, succeed) // consecutive failures start again: no longer tripping
      assert.isUndefined((yield* b!.snapshot).capped)
      assert.deepStrictEqual((yield* b!.snapshot).counts.consecutiveFailures, 0)
      yield* call(b!, fail)
      yield* call(b!, fail)
      assert.isTrue((yield* b!.snapshot).capped)
      assert.strictEqual((yield* cappedCount) - before, 2)
      // A capped breaker's window is its own: c, one failure, neither trips nor is capped.
      yield* call(c!, fail)
      assert.isUndefined((yield* c!.snapshot).capped)
    }).pipe(Effect.provide(BreakerRegistry.layer({ defaults: { policy: Policy.consecutiveFailures(2) }, maxOpen: 1 })))
  )

  it.effect("Isolated does not count; isolating an open breaker frees its place; a reset clears a capped spell", () =>
    Effect.gen(function* () {
      const registry = yield* BreakerRegistry.BreakerRegistry
      const [a, b, c, d] = yield* Effect.forEach(["a", "b", "c", "d"], (name) => registry.get(name))
      yield* a!.isolate
      yield* b!.isolate
      yield* call(c!, fail)
      assert.strictEqual(yield* tagOf(c!), "Open") // two isolated, yet one may open
      yield* call(d!, fail)
      assert.strictEqual(yield* tagOf(d!), "Closed")
      assert.isTrue((yield* d!.snapshot).capped)
      yield* d!.reset
      assert.isUndefined((yield* d!.snapshot).capped)
      yield* c!.isolate // Open -> Isolated: no longer counted
      yield* call(d!, fail)
      assert.strictEqual(yield* tagOf(d!), "Open")
      // a (Isolated -> Closed by reset) changes nothing: d holds the one place.
      yield* a!.reset
      yield* call(a!, fail)
      assert.strictEqual(yield* tagOf(a!), "Closed")
      assert.isTrue((yield* a!.snapshot).capped)
    }).pipe(Effect.provide(BreakerRegistry.layer({ defaults: { policy: Policy.consecutiveFailures(1) }, maxOpen: 1 })))
  )

  it.effect("a failed probe reopens an open breaker past the cap; an evicted open breaker frees its place", () =>
    Effect.gen(function* () {
      const registry = yield* BreakerRegistry.BreakerRegistry
      const a = yield* registry.get("a")
      yield* call(a, fail)
      yield* TestClock.adjust("10 seconds")
      yield* call(a, fail) // a failed probe: Open again, not capped (it was counted already)
      assert.strictEqual(yield* tagOf(a), "Open")
      // "b" evicts the open "a" (maxBreakers 1): a's place is free.
      const b = yield* registry.get("b")
      assert.deepStrictEqual(yield* registry.names, ["b"])
      yield* call(b, fail)
      assert.strictEqual(yield* tagOf(b), "Open")
      assert.isUndefined((yield* b.snapshot).capped)
    }).pipe(
      Effect.provide(
        BreakerRegistry.layer({
          defaults: { policy: Policy.consecutiveFailures(1), openFor: "10 seconds" },
          maxOpen: 1,
          maxBreakers: 1
        })
      )
    )
  )

  it.scoped("a verdict adopted from the shared store is not capped, and counts", () =>
    Effect.gen(function* () {
      const registry = yield* BreakerRegistry.BreakerRegistry
      const a = yield* registry.get("a")
      const b = yield* registry.get("b")
      // Another member of the fleet trips "a": this registry adopts the fleet's verdict.
      const other = yield* CircuitBreaker.make({ name: "a", policy: Policy.consecutiveFailures(1) })
      yield* call(other, fail)
      // The verdict arrives on the subscription's fiber: let it run (bounded).
      yield* Effect.andThen(yieldNow, tagOf(a)).pipe(Effect.repeat({ until: (tag) => tag === "Open", times: 100 }))
      assert.strictEqual(yield* tagOf(a), "Open")
      yield* call(b, fail)
      assert.strictEqual(yield* tagOf(b), "Closed") // a, adopted, holds the one place
      assert.isTrue((yield* b.snapshot).capped)
    }).pipe(
      Effect.provide(BreakerRegistry.layer({ defaults: { policy: Policy.consecutiveFailures(1) }, maxOpen: 1 })),
      Effect.provide(BreakerStore.layerMemory)
    )
  )

  it.effect("an evicted capped breaker is no longer capped", () =>
    Effect.gen(function* () {
      const registry = yield* BreakerRegistry.BreakerRegistry
      const a = yield* registry.get("a")
      const b = yield* registry.get("b")
      yield* call(a, fail)
      yield* call(b, fail)
      assert.isTrue((yield* b.snapshot).capped)
      yield* registry.get("c") // evicts b (closed), not a (open)
      assert.deepStrictEqual([...(yield* registry.names)].sort(), ["a", "c"])
      assert.isUndefined((yield* b.snapshot).capped)
    }).pipe(
      Effect.provide(
        BreakerRegistry.layer({ defaults: { policy: Policy.consecutiveFailures(1) }, maxOpen: 1, maxBreakers: 2 })
      )
    )
  )

  it.effect("a fraction rounds down, but lets one breaker open", () =>
    Effect.gen(function* () {
      const registry = yield* BreakerRegistry.BreakerRegistry
      const [a, b] = yield* Effect.forEach(["a", "b"], (name) => registry.get(name))
      yield* call(a!, fail)
      yield* call(b!, fail)
      assert.deepStrictEqual(yield* Effect.forEach([a!, b!], tagOf), ["Open", "Closed"]) // 0.3 of 2 is 0: still 1
      assert.strictEqual(Ejection.allowed({ _tag: "Fraction", fraction: 0.29 }, 100), 29)
      assert.strictEqual(Ejection.allowed({ _tag: "Fraction", fraction: 0.3 }, 10), 3)
      assert.strictEqual(Ejection.allowed({ _tag: "Fraction", fraction: 0.3 }, 9), 2)
      assert.strictEqual(Ejection.allowed({ _tag: "Fraction", fraction: 1 }, 7), 7)
      assert.strictEqual(Ejection.allowed({ _tag: "Count", count: 4 }, 2), 4)
    }).pipe(
      Effect.provide(
        BreakerRegistry.layer({ defaults: { policy: Policy.consecutiveFailures(1) }, maxOpen: { fraction: 0.3 } })
      )
    )
  )

  it.effect("without maxOpen nothing is capped", () =>
    Effect.gen(function* () {
      const registry = yield* BreakerRegistry.BreakerRegistry
      const breakers = yield* Effect.forEach(["a", "b", "c"], (name) => registry.get(name))
      for (const breaker of breakers) yield* call(breaker, fail)
      assert.deepStrictEqual(yield* Effect.forEach(breakers, tagOf), ["Open", "Open", "Open"])
    }).pipe(Effect.provide(BreakerRegistry.layer({ defaults: { policy: Policy.consecutiveFailures(1) } })))
  )

  it.effect("maxOpen is validated into InvalidBreakerOptions", () =>
    Effect.gen(function* () {
      const messageOf = (maxOpen: unknown) =>
        BreakerRegistry.make({ maxOpen } as BreakerRegistry.RegistryOptions).pipe(
          Effect.scoped,
          Effect.flip,
          Effect.map((error) => {
            assert.strictEqual(error._tag, "InvalidBreakerOptions")
            return error.message
          })
        )
      const rule = "a whole number >= 1 or { fraction } with 0 < fraction <= 1"
      assert.strictEqual(yield* messageOf(0), `maxOpen must be ${rule}, got 0`)
      assert.strictEqual(yield* messageOf(2.5), `maxOpen must be ${rule}, got 2.5`)
      assert.strictEqual(yield* messageOf("30%"), `maxOpen must be ${rule}, got "30%"`)
      assert.strictEqual(
        yield* messageOf({ fraction: 0 }),
        "maxOpen.fraction must be a number with 0 < fraction <= 1, got 0"
      )
      assert.strictEqual(
        yield* messageOf({ fraction: 1.5 }),
        "maxOpen.fraction must be a number with 0 < fraction <= 1, got 1.5"
      )
      assert.include(yield* messageOf({ fraction: 0.5, count: 2 }), `maxOpen must be ${rule}, got`)
    })
  )
})
