import * as Edition from "@circuitry/core/Edition"
import { BreakerRegistry, BreakerStore, CircuitBreaker, Policy } from "@circuitry/breaker"
import { assert, describe, it, result, Result } from "@circuitry/testkit"
import { Effect, Exit, Layer, Option } from "effect"
import { call, fail, tagOf } from "./utils.js"

const provideRegistry = (options?: Parameters<typeof BreakerRegistry.layer>[0]) =>
  Effect.provide(BreakerRegistry.layer(options))

describe("BreakerRegistry", () => {
  it.effect("same name, same breaker; names lists them", () =>
    Effect.gen(function* () {
      const registry = yield* BreakerRegistry.BreakerRegistry
      const a = yield* registry.get("a")
      const b = yield* registry.get("b")
      assert.strictEqual(yield* registry.get("a"), a)
      assert.notStrictEqual(a, b)
      assert.strictEqual(a.name, "a")
      assert.deepStrictEqual(yield* registry.names, ["b", "a"]) // least recently used first
    }).pipe(provideRegistry())
  )

  it.effect("concurrent first uses of a name make one breaker", () =>
    Effect.gen(function* () {
      const registry = yield* BreakerRegistry.BreakerRegistry
      const breakers = yield* Effect.all(
        Array.from({ length: 50 }, () => registry.get("shared")),
        { concurrency: "unbounded" }
      )
      assert.isTrue(breakers.every((b) => b === breakers[0]))
    }).pipe(provideRegistry())
  )

  it.effect("defaults apply to every breaker, overrides to their names", () =>
    Effect.gen(function* () {
      const registry = yield* BreakerRegistry.BreakerRegistry
      const plain = yield* registry.get("plain")
      const touchy = yield* registry.get("touchy")
      yield* call(plain, fail)
      yield* call(touchy, fail)
      assert.strictEqual(yield* tagOf(plain), "Closed")
      assert.strictEqual(yield* tagOf(touchy), "Open")
      yield* call(plain, fail)
      assert.strictEqual(yield* tagOf(plain), "Open")
    }).pipe(
      provideRegistry({
        defaults: { policy: Policy.consecutiveFailures(2) },
        overrides: { touchy: { policy: Policy.consecutiveFailures(1) } }
      })
    )
  )

  it.effect("withBreakerFor runs through the named breaker", () =>
    Effect.gen(function* () {
      yield* result(fail.pipe(BreakerRegistry.withBreakerFor("db")))
      const rejected = yield* result(Effect.succeed(1).pipe(BreakerRegistry.withBreakerFor("db")))
      assert.isTrue(Option.getOrUndefined(Result.getFailure(rejected)) instanceof CircuitBreaker.BreakerOpenError)
      const other = yield* result(Effect.succeed(1).pipe(BreakerRegistry.withBreakerFor("cache")))
      assert.deepStrictEqual<unknown>(other, Result.succeed(1))
    }).pipe(provideRegistry({ defaults: { policy: Policy.consecutiveFailures(1) } }))
  )

  it.effect("withBreakerFor is dual; the registry hands out CircuitBreakers", () =>
    Effect.gen(function* () {
      yield* result(BreakerRegistry.withBreakerFor(fail, "db"))
      const rejected = yield* result(BreakerRegistry.withBreakerFor(Effect.succeed(1), "db"))
      assert.isTrue(Option.getOrUndefined(Result.getFailure(rejected)) instanceof CircuitBreaker.BreakerOpenError)
      const registry = yield* BreakerRegistry.BreakerRegistry
      assert.isTrue(CircuitBreaker.isCircuitBreaker(yield* registry.get("db")))
      assert.strictEqual(yield* tagOf(yield* registry.get("db")), "Open")
    }).pipe(provideRegistry({ defaults: { policy: Policy.consecutiveFailures(1) } }))
  )

  it.effect("maxBreakers evicts the least recently used closed breaker first", () =>
    Effect.gen(function* () {
      const registry = yield* BreakerRegistry.BreakerRegistry
      const a = yield* registry.get("a")
      yield* call(a, fail) // "a" is open: keep its verdict
      yield* registry.get("b")
      yield* registry.get("c")
      yield* registry.get("b") // "c" is now the least recently used closed breaker
      yield* registry.get("d")
      assert.deepStrictEqual([...(yield* registry.names)].sort(), ["a", "b", "d"])
      assert.strictEqual(yield* registry.get("a"), a)
      // With every breaker open, the least recently used goes.
      for (const name of ["a", "b", "d"]) yield* call(yield* registry.get(name), fail)
      yield* registry.get("e")
      assert.deepStrictEqual([...(yield* registry.names)].sort(), ["b", "d", "e"])
    }).pipe(provideRegistry({ maxBreakers: 3, defaults: { policy: Policy.consecutiveFailures(1) } }))
  )

  it.effect("a registry of 10,000 names under maxBreakers 100 holds 100", () =>
    Effect.gen(function* () {
      const registry = yield* BreakerRegistry.BreakerRegistry
      for (let i = 0; i < 10_000; i++) yield* registry.get(`host-${i}`)
      assert.strictEqual((yield* registry.names).length, 100)
      assert.strictEqual((yield* registry.names)[99], "host-9999")
    }).pipe(provideRegistry({ maxBreakers: 100 }))
  )

  it.effect("validating the options joins no shared circuit; a breaker joins its own on first use", () =>
    Effect.gen(function* () {
      const memory = yield* BreakerStore.makeMemory
      const joined: Array<string> = []
      const recording = BreakerStore.BreakerStore.of({
        connect: (name) =>
          Effect.andThen(
            Effect.sync(() => joined.push(name)),
            memory.connect(name)
          )
      })
      const program = Effect.gen(function* () {
        const registry = yield* BreakerRegistry.BreakerRegistry
        assert.deepStrictEqual(joined, [])
        yield* registry.get("a")
        assert.deepStrictEqual(joined, ["a"])
      })
      yield* program.pipe(
        Effect.provide(BreakerRegistry.layer({ overrides: { b: { openFor: "1 minute" } } })),
        Effect.provideService(BreakerStore.BreakerStore, recording)
      )
    })
  )

  it.effect("bad defaults, overrides or maxBreakers fail the layer with InvalidBreakerOptions", () =>
    Effect.gen(function* () {
      const attempts = [
        { defaults: { halfOpen: { permits: -1 } } },
        { overrides: { x: { policy: Policy.consecutiveFailures(0) } } },
        { maxBreakers: 0 }
      ]
      for (const options of attempts) {
        const exit = yield* Effect.exit(Effect.scoped(Layer.build(BreakerRegistry.layer(options))))
        if (Exit.isSuccess(exit)) return assert.fail(`expected a failure for ${JSON.stringify(options)}`)
        const error = Edition.findError(exit.cause)
        assert.strictEqual(error._tag === "Some" ? error.value._tag : "none", "InvalidBreakerOptions")
      }
    })
  )
})
