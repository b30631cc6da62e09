/**
 * The breaker's `timeout` answers with a typed failure, `BreakerTimeoutError`, and only breakers
 * made with one say so in their type: a breaker without a timeout keeps exactly
 * `E | BreakerOpenError`. The type assertions are checked by `pnpm typecheck` (this file is in the
 * project), the runtime ones by vitest.
 */
import * as Edition from "@circuitry/core/Edition"
import { BreakerRegistry, CircuitBreaker } from "@circuitry/breaker"
import { assert, describe, expectTypeOf, it, Result, result, TestClock, withAttributes } from "@circuitry/testkit"
import { Effect, Fiber, Layer, Metric, Option, Stream } from "effect"
import type { Scope } from "effect"

class Db {
  readonly _tag = "Db"
}
const query: Effect.Effect<string, Db> = Effect.never

class Plain extends Edition.KeyClass<Plain, CircuitBreaker.CircuitBreaker>()("Plain") {}
class Timed extends Edition.KeyClass<Timed, CircuitBreaker.CircuitBreaker<CircuitBreaker.BreakerTimeoutError>>()(
  "Timed"
) {}

describe("the breaker's timeout is a typed failure", () => {
  it.scoped("catchTag recovers it; the circuit counted it", () =>
    Effect.gen(function* () {
      const breaker = yield* CircuitBreaker.make({ name: "db", timeout: "1 second" })
      const recovered = CircuitBreaker.withBreaker(query, breaker).pipe(
        Effect.catchTag("BreakerTimeoutError", (e) => Effect.succeed(`timed out after ${e.timeoutMillis} ms`))
      )
      expectTypeOf(recovered).toEqualTypeOf<Effect.Effect<string, Db | CircuitBreaker.BreakerOpenError>>()
      const fiber = yield* Edition.forkChild(recovered)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Fiber.join(fiber), "timed out after 1000 ms")
      assert.strictEqual((yield* breaker.snapshot).counts.consecutiveFailures, 1)
    })
  )

  it.scoped("a breaker's type carries the timeout only when its options may give one", () =>
    Effect.gen(function* () {
      const plain = yield* CircuitBreaker.make({ name: "plain" })
      expectTypeOf(plain).toEqualTypeOf<CircuitBreaker.CircuitBreaker>()
      expectTypeOf(CircuitBreaker.withBreaker(query, plain)).toEqualTypeOf<
        Effect.Effect<string, Db | CircuitBreaker.BreakerOpenError>
      >()
      expectTypeOf(query.pipe(CircuitBreaker.withBreaker(plain))).toEqualTypeOf<
        Effect.Effect<string, Db | CircuitBreaker.BreakerOpenError>
      >()

      const timed = yield* CircuitBreaker.make({ name: "timed", timeout: "1 second" })
      expectTypeOf(timed).toEqualTypeOf<CircuitBreaker.CircuitBreaker<CircuitBreaker.BreakerTimeoutError>>()
      expectTypeOf(query.pipe(CircuitBreaker.withBreaker(timed))).toEqualTypeOf<
        Effect.Effect<string, Db | CircuitBreaker.BreakerOpenError | CircuitBreaker.BreakerTimeoutError>
      >()
      expectTypeOf(timed.execute(query)).toEqualTypeOf<
        Effect.Effect<string, Db | CircuitBreaker.BreakerOpenError | CircuitBreaker.BreakerTimeoutError>
      >()

      // Options typed as such: `Options` has no timeout; `TimeoutOptions` may have one, so it is typed.
      const options: CircuitBreaker.Options = { name: "o" }
      const maybe: CircuitBreaker.TimeoutOptions = { name: "m" }
      expectTypeOf(CircuitBreaker.make(options)).toEqualTypeOf<
        Effect.Effect<CircuitBreaker.CircuitBreaker, CircuitBreaker.InvalidBreakerOptions, Scope.Scope>
      >()
      expectTypeOf(CircuitBreaker.make(maybe)).toEqualTypeOf<
        Effect.Effect<
          CircuitBreaker.CircuitBreaker<CircuitBreaker.BreakerTimeoutError>,
          CircuitBreaker.InvalidBreakerOptions,
          Scope.Scope
        >
      >()
      expectTypeOf(CircuitBreaker.make()).toEqualTypeOf<
        Effect.Effect<CircuitBreaker.CircuitBreaker, CircuitBreaker.InvalidBreakerOptions, Scope.Scope>
      >()

      // A timed breaker is not a breaker without a timeout (its calls have one more failure) ...
      const takesPlain = (_: CircuitBreaker.CircuitBreaker) => undefined
      // @ts-expect-error BreakerTimeoutError is not in CircuitBreaker<never>'s error channel
      takesPlain(timed)
      // ... but every breaker is a CircuitBreaker<unknown>
      const takesAny = (_: CircuitBreaker.CircuitBreaker<unknown>) => undefined
      takesAny(timed)
      takesAny(plain)
      // `options` has no room for a timeout
      // @ts-expect-error timeout belongs to TimeoutOptions
      const wrong: CircuitBreaker.Options = { timeout: "1 second" }
      assert.isDefined(wrong)
    })
  )

  it.effect("layer: a timeout needs a tag whose breaker type has BreakerTimeoutError", () =>
    Effect.gen(function* () {
      expectTypeOf(CircuitBreaker.layer(Plain, { name: "p" })).toEqualTypeOf<
        Layer.Layer<Plain, CircuitBreaker.InvalidBreakerOptions>
      >()
      expectTypeOf(CircuitBreaker.layer(Timed, { name: "t", timeout: "1 second" })).toEqualTypeOf<
        Layer.Layer<Timed, CircuitBreaker.InvalidBreakerOptions>
      >()
      // @ts-expect-error a Plain breaker cannot be given a timeout: its type says its calls never time out
      CircuitBreaker.layer(Plain, { name: "p", timeout: "1 second" })
      expectTypeOf(query.pipe(CircuitBreaker.withBreaker(Plain))).toEqualTypeOf<
        Effect.Effect<string, Db | CircuitBreaker.BreakerOpenError, Plain>
      >()
      const throughTimed = query.pipe(CircuitBreaker.withBreaker(Timed))
      expectTypeOf(throughTimed).toEqualTypeOf<
        Effect.Effect<string, Db | CircuitBreaker.BreakerOpenError | CircuitBreaker.BreakerTimeoutError, Timed>
      >()
      const fiber = yield* Edition.forkChild(
        result(throughTimed.pipe(Effect.provide(CircuitBreaker.layer(Timed, { name: "t", timeout: "1 second" }))))
      )
      yield* TestClock.adjust("1 second")
      const outcome = yield* Fiber.join(fiber)
      assert.isTrue(Option.getOrUndefined(Result.getFailure(outcome))?._tag === "BreakerTimeoutError")
    })
  )

  it.effect(
    "a registry made without a timeout refuses one its live config gives: its breakers are typed without BreakerTimeoutError",
    () =>
      Effect.gen(function* () {
        // A registry with a timeout is typed so (see registryTimeout.test.ts); one made without keeps
        // today's type, so a JSON config that adds a timeout later is refused when applied.
        const config = JSON.parse(`{ "timeout": "1 second" }`) as CircuitBreaker.TimeoutOptions
        const rejected = Metric.value(withAttributes(BreakerRegistry.configsTotal, { outcome: "rejected" }))
        const before = (yield* rejected).count
        const registry = yield* BreakerRegistry.make({ config: Stream.make({ overrides: { db: config } }) })
        expectTypeOf(registry).toEqualTypeOf<BreakerRegistry.BreakerRegistry>()
        const breaker = yield* registry.get("db")
        // the config's fiber runs; its one value is rejected
        yield* Effect.repeat(rejected, { until: (state) => state.count > before })
        const fiber = yield* Edition.forkChild(CircuitBreaker.withBreaker(query, breaker))
        yield* TestClock.adjust("1 hour")
        assert.isUndefined(Edition.pollUnsafe(fiber), "no deadline: the config with a timeout was refused")
        yield* Fiber.interrupt(fiber)
      }).pipe(Effect.scoped)
  )
})
