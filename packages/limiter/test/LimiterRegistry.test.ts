import { Limit, LimiterRegistry } from "@circuitry/limiter"
import * as Edition from "@circuitry/core/Edition"
import { assert, describe, it } from "@circuitry/testkit"
import { Deferred, Effect, Exit, Fiber, Layer, Option } from "effect"
import { untilInFlight } from "./utils.js"

class Tenants extends Edition.KeyClass<Tenants, LimiterRegistry.LimiterRegistry>()("test/Tenants") {}

const provideRegistry = (options?: LimiterRegistry.RegistryOptions) => Effect.provide(LimiterRegistry.layer(options))

describe("LimiterRegistry", () => {
  it.effect("same name, same limiter; names lists them, least recently used first", () =>
    Effect.gen(function* () {
      const registry = yield* LimiterRegistry.LimiterRegistry
      const a = yield* registry.get("a")
      const b = yield* registry.get("b")
      assert.strictEqual(yield* registry.get("a"), a)
      assert.notStrictEqual(a, b)
      assert.strictEqual(b.name, "b")
      assert.deepStrictEqual(yield* registry.names, ["b", "a"])
      const all = yield* Effect.all(
        Array.from({ length: 20 }, () => registry.get("c")),
        { concurrency: "unbounded" }
      )
      assert.isTrue(all.every((l) => l === all[0]))
    }).pipe(provideRegistry())
  )

  it.effect("defaults apply to every limiter, overrides to their names", () =>
    Effect.gen(function* () {
      const registry = yield* LimiterRegistry.LimiterRegistry
      assert.strictEqual(yield* (yield* registry.get("plain")).limit, 3)
      assert.strictEqual(yield* (yield* registry.get("legacy")).limit, 1)
      const result = yield* Effect.succeed(1).pipe(LimiterRegistry.withLimiterFor("legacy"))
      assert.strictEqual(result, 1)
    }).pipe(provideRegistry({ defaults: { limit: Limit.fixed(3) }, overrides: { legacy: { limit: Limit.fixed(1) } } }))
  )

  it.effect("bounded: past maxLimiters the least recently used idle limiter goes", () =>
    Effect.gen(function* () {
      const registry = yield* LimiterRegistry.LimiterRegistry
      const busy = yield* registry.get("busy")
      const gate = yield* Deferred.make<void>()
      const fiber = yield* Edition.forkChild(busy.execute(Deferred.await(gate)))
      yield* untilInFlight(busy, 1)
      yield* registry.get("idle")
      yield* registry.get("new")
      assert.deepStrictEqual(yield* registry.names, ["busy", "new"]) // "busy" was older, but in use
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(fiber)
    }).pipe(provideRegistry({ maxLimiters: 2 }))
  )

  it.effect("bad options fail the layer with InvalidLimiterOptions", () =>
    Effect.gen(function* () {
      for (const options of [
        { maxLimiters: 0 },
        { defaults: { limit: Limit.fixed(0) } },
        { overrides: { x: { queue: { size: -1 } } } }
      ]) {
        const exit = yield* Effect.exit(Effect.scoped(LimiterRegistry.make(options)))
        assert.isTrue(Exit.isFailure(exit))
        const error = Exit.isFailure(exit) ? Option.getOrUndefined(Edition.findError(exit.cause)) : undefined
        assert.strictEqual(error?._tag, "InvalidLimiterOptions")
      }
    })
  )

  it.effect("its own options are decoded into InvalidLimiterOptions naming the option, the rule and the value", () =>
    Effect.gen(function* () {
      const message = (options: LimiterRegistry.RegistryOptions) =>
        Effect.map(Effect.flip(Effect.scoped(LimiterRegistry.make(options))), (e) => e.message)
      assert.strictEqual(yield* message({ maxLimiters: 0 }), "maxLimiters must be a whole number >= 1, got 0")
      assert.strictEqual(yield* message({ maxLimiters: 2.5 }), "maxLimiters must be a whole number >= 1, got 2.5")
      assert.strictEqual(
        yield* message({ overrides: "x" as never }),
        'overrides must be an object of limiter options by name, got "x"'
      )
      assert.strictEqual(
        yield* message({ defaults: 3 as never }),
        "defaults must be an object of limiter options, got 3"
      )
      assert.strictEqual(
        yield* message({ overrides: { x: { queue: { size: -1 } } } }),
        'queue.size must be a whole number between 0 and 1000000, got -1 (limiter "x")'
      )
      // Infinity is the default bound, and may be given
      const registry = yield* LimiterRegistry.make({ maxLimiters: Infinity })
      assert.strictEqual((yield* registry.get("a")).name, "a")
    }).pipe(Effect.scoped)
  )

  it.effect("layer(tag, options): a second registry under the application's tag, as BreakerRegistry.layer", () =>
    Effect.gen(function* () {
      const tenants = yield* Tenants
      const main = yield* LimiterRegistry.LimiterRegistry
      assert.notStrictEqual(tenants, main)
      assert.strictEqual(yield* (yield* tenants.get("gold")).limit, 3)
      assert.deepStrictEqual(yield* main.names, [])
      const exit = yield* Effect.exit(Effect.scoped(Layer.build(LimiterRegistry.layer(Tenants, { maxLimiters: 0 }))))
      const error = Exit.isFailure(exit) ? Option.getOrUndefined(Edition.findError(exit.cause)) : undefined
      assert.strictEqual(error?._tag, "InvalidLimiterOptions")
    }).pipe(
      Effect.provide(
        Layer.merge(LimiterRegistry.layer(Tenants, { defaults: { limit: Limit.fixed(3) } }), LimiterRegistry.layer())
      )
    )
  )
})
