/**
 * A registry's breakers with a `timeout`: typed (a registry whose defaults or overrides carry a
 * timeout is a `BreakerRegistry<BreakerTimeoutError>`; one without stays exactly today's
 * `BreakerRegistry`), per name, and from a JSON config. The type assertions are checked by
 * `pnpm typecheck` (this file is in the project), the runtime ones by vitest.
 */
import * as Edition from "@circuitry/core/Edition"
import { BreakerRegistry, CircuitBreaker, Policy } from "@circuitry/breaker"
import { assert, describe, expectTypeOf, hasTaker, it, logTo, Result, result, TestClock } from "@circuitry/testkit"
import { Effect, Exit, Fiber, Layer, Option, Queue, Stream } from "effect"
import type { Scope } from "effect"
import { tagOf } from "./utils.js"

class Db {
  readonly _tag = "Db"
}
const query: Effect.Effect<string, Db> = Effect.never

class Timed extends Edition.KeyClass<Timed, BreakerRegistry.BreakerRegistry<CircuitBreaker.BreakerTimeoutError>>()(
  "Timed"
) {}
class Plain extends Edition.KeyClass<Plain, BreakerRegistry.BreakerRegistry>()("Plain") {}

/** Waits until the registry's config fiber took every value and waits for the next: it applied them. */
const applied = <A>(queue: Queue.Queue<A>) => Effect.repeat(hasTaker(queue), { until: (waiting) => waiting })

/** Runs `self` in a fiber, moves the TestClock by `by`, and returns its outcome. */
const after = <A, E>(by: Edition.DurationInput, self: Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const fiber = yield* Edition.forkChild(result(self))
    yield* TestClock.adjust(by)
    return yield* Fiber.join(fiber)
  })

const isTimeout = (outcome: Result<unknown, unknown>, millis: number): boolean => {
  const error = Option.getOrUndefined(Result.getFailure(outcome))
  return CircuitBreaker.isBreakerTimeoutError(error) && error.timeoutMillis === millis
}

describe("BreakerRegistry with timeouts", () => {
  it.scoped("defaults.timeout bounds every breaker: BreakerTimeoutError at the deadline, counted, opens", () =>
    Effect.gen(function* () {
      const registry = yield* BreakerRegistry.make({
        defaults: { policy: Policy.consecutiveFailures(2), openFor: "30 seconds", timeout: "1 second" }
      })
      const breaker = yield* registry.get("users-db")
      const early = yield* Edition.forkChild(result(breaker.execute(query)))
      yield* TestClock.adjust("999 millis")
      assert.isUndefined(Edition.pollUnsafe(early), "answered before its deadline")
      yield* TestClock.adjust("1 millis")
      assert.isTrue(isTimeout(yield* Fiber.join(early), 1_000))
      assert.strictEqual((yield* breaker.snapshot).counts.consecutiveFailures, 1)
      assert.isTrue(isTimeout(yield* after("1 second", breaker.execute(query)), 1_000))
      assert.strictEqual(yield* tagOf(breaker), "Open")
    })
  )

  it.scoped("per name: an override's timeout is that breaker's; the others keep the defaults'", () =>
    Effect.gen(function* () {
      const registry = yield* BreakerRegistry.make({
        defaults: { timeout: "5 seconds" },
        overrides: { "users-db": { timeout: "1 second" } }
      })
      const users = yield* registry.get("users-db")
      const orders = yield* registry.get("orders-db")
      assert.isTrue(isTimeout(yield* after("1 second", users.execute(query)), 1_000))
      assert.isTrue(isTimeout(yield* after("5 seconds", orders.execute(query)), 5_000))
    })
  )

  it.scoped("from a JSON config: parseConfig reads a timeout, and a live config changes it per name", () =>
    Effect.gen(function* () {
      const initial = Result.getOrThrow(
        BreakerRegistry.parseConfig(
          '{ "defaults": { "policy": { "_tag": "ConsecutiveFailures", "threshold": 1 }, "timeout": "1 second" } }'
        )
      )
      const updates = yield* Queue.unbounded<BreakerRegistry.TimeoutRegistryOptions>()
      const registry = yield* BreakerRegistry.make({ ...initial, config: Stream.fromQueue(updates) })
      expectTypeOf(registry).toEqualTypeOf<BreakerRegistry.BreakerRegistry<CircuitBreaker.BreakerTimeoutError>>()
      const users = yield* registry.get("users-db")
      const next = Result.getOrThrow(BreakerRegistry.parseConfig('{ "overrides": { "users-db": { "timeout": 250 } } }'))
      yield* Queue.offer(updates, next)
      yield* applied(updates)
      assert.isTrue(isTimeout(yield* after("250 millis", users.execute(query)), 250))
      assert.strictEqual(yield* tagOf(users), "Open")
    })
  )

  it.scoped(
    "a registry made without a timeout rejects a live config that gives one: its type has no BreakerTimeoutError",
    () =>
      Effect.gen(function* () {
        const warnings: Array<string> = []
        const logger = logTo(({ cause, level }) => {
          if (level === "Warn") warnings.push(String(cause))
        })
        const updates = yield* Queue.unbounded<BreakerRegistry.TimeoutRegistryOptions>()
        const registry = yield* BreakerRegistry.make({
          defaults: { policy: Policy.consecutiveFailures(1) },
          config: Stream.fromQueue(updates)
        }).pipe(Effect.provide(logger))
        expectTypeOf(registry).toEqualTypeOf<BreakerRegistry.BreakerRegistry>()
        const db = yield* registry.get("db")
        yield* Queue.offer(
          updates,
          Result.getOrThrow(BreakerRegistry.parseConfig('{ "defaults": { "timeout": 100 } }'))
        )
        yield* applied(updates)
        assert.strictEqual(warnings.length, 1)
        assert.include(warnings[0], "timeout")
        assert.include(warnings[0], "BreakerTimeoutError")
        // the config before stays: no deadline
        const fiber = yield* Edition.forkChild(db.execute(query))
        yield* TestClock.adjust("1 hour")
        assert.isUndefined(Edition.pollUnsafe(fiber))
        yield* Fiber.interrupt(fiber)
      })
  )

  it.effect("layer takes a tag whose registry type has BreakerTimeoutError; withBreakerFor names the registry", () =>
    Effect.gen(function* () {
      const live = BreakerRegistry.layer(Timed, { overrides: { "users-db": { timeout: "1 second" } } })
      expectTypeOf(live).toEqualTypeOf<Layer.Layer<Timed, CircuitBreaker.InvalidBreakerOptions>>()
      const call = query.pipe(BreakerRegistry.withBreakerFor("users-db", Timed))
      expectTypeOf(call).toEqualTypeOf<
        Effect.Effect<string, Db | CircuitBreaker.BreakerOpenError | CircuitBreaker.BreakerTimeoutError, Timed>
      >()
      const dataFirst = BreakerRegistry.withBreakerFor(query, "users-db", Timed)
      expectTypeOf(dataFirst).toEqualTypeOf<typeof call>()
      const outcome = yield* after("1 second", Effect.provide(call, live))
      assert.isTrue(isTimeout(outcome, 1_000))
      // another name of that registry has no timeout (none in its defaults)
      const other = Effect.provide(
        Effect.andThen(
          BreakerRegistry.withBreakerFor(Effect.succeed("ok"), "orders-db", Timed),
          Effect.flatMap(Timed, (registry) => registry.names)
        ),
        live
      )
      assert.deepStrictEqual(yield* other, ["orders-db"])
    })
  )

  it.effect("a registry without a timeout keeps exactly today's types", () =>
    Effect.gen(function* () {
      expectTypeOf(BreakerRegistry.make({ defaults: { policy: Policy.consecutiveFailures(3) } })).toEqualTypeOf<
        Effect.Effect<BreakerRegistry.BreakerRegistry, CircuitBreaker.InvalidBreakerOptions, Scope.Scope>
      >()
      expectTypeOf(BreakerRegistry.make()).toEqualTypeOf<
        Effect.Effect<BreakerRegistry.BreakerRegistry, CircuitBreaker.InvalidBreakerOptions, Scope.Scope>
      >()
      expectTypeOf(BreakerRegistry.layer({ maxBreakers: 10 })).toEqualTypeOf<
        Layer.Layer<BreakerRegistry.BreakerRegistry, CircuitBreaker.InvalidBreakerOptions>
      >()
      expectTypeOf(BreakerRegistry.layer(Plain, {})).toEqualTypeOf<
        Layer.Layer<Plain, CircuitBreaker.InvalidBreakerOptions>
      >()
      expectTypeOf<BreakerRegistry.BreakerRegistry["get"]>().toEqualTypeOf<
        (name: string) => Effect.Effect<CircuitBreaker.CircuitBreaker>
      >()
      expectTypeOf(query.pipe(BreakerRegistry.withBreakerFor("db"))).toEqualTypeOf<
        Effect.Effect<string, Db | CircuitBreaker.BreakerOpenError, BreakerRegistry.BreakerRegistry>
      >()
      expectTypeOf(BreakerRegistry.withBreakerFor(query, "db")).toEqualTypeOf<
        Effect.Effect<string, Db | CircuitBreaker.BreakerOpenError, BreakerRegistry.BreakerRegistry>
      >()
      expectTypeOf(query.pipe(BreakerRegistry.withBreakerFor("db", Plain))).toEqualTypeOf<
        Effect.Effect<string, Db | CircuitBreaker.BreakerOpenError, Plain>
      >()

      const timed = BreakerRegistry.make({ overrides: { db: { timeout: "1 second" } } })
      expectTypeOf(timed).toEqualTypeOf<
        Effect.Effect<
          BreakerRegistry.BreakerRegistry<CircuitBreaker.BreakerTimeoutError>,
          CircuitBreaker.InvalidBreakerOptions,
          Scope.Scope
        >
      >()
      expectTypeOf<BreakerRegistry.BreakerRegistry<CircuitBreaker.BreakerTimeoutError>["get"]>().toEqualTypeOf<
        (name: string) => Effect.Effect<CircuitBreaker.CircuitBreaker<CircuitBreaker.BreakerTimeoutError>>
      >()

      // @ts-expect-error the default tag's registry is typed without BreakerTimeoutError: a timeout needs a tag
      BreakerRegistry.layer({ defaults: { timeout: "1 second" } })
      // @ts-expect-error a Plain registry cannot be given a timeout
      BreakerRegistry.layer(Plain, { defaults: { timeout: "1 second" } })
      const plainOptions: BreakerRegistry.RegistryOptions = {
        // @ts-expect-error RegistryOptions has no room for a timeout: TimeoutRegistryOptions has
        defaults: { timeout: "1 second" }
      }
      const takesPlain = (_: BreakerRegistry.BreakerRegistry) => undefined
      const registry = yield* Effect.scoped(timed)
      // @ts-expect-error a registry with timeouts is not one without (its calls have one more failure)
      takesPlain(registry)
      const takesAny = (_: BreakerRegistry.BreakerRegistry<unknown>) => undefined
      takesAny(registry)
      assert.isDefined(plainOptions)
      // at run time too, the refusal of a timeout through the default tag's layer type is the types' alone:
      // a layer built with a tag serves the timeout
      const exit = yield* Effect.exit(
        Layer.build(BreakerRegistry.layer(Timed, { defaults: { timeout: "1 second" } })).pipe(Effect.scoped)
      )
      assert.isTrue(Exit.isSuccess(exit))
    })
  )
})

describe("parseConfig checks the document when it reads it", () => {
  const rejected = (text: string): string =>
    Result.match(BreakerRegistry.parseConfig(text), {
      onFailure: (error) => `${error._tag}: ${error.message}`,
      onSuccess: () => "accepted"
    })

  it("a policy of an unknown _tag: names the field and lists the valid tags", () => {
    assert.strictEqual(
      rejected('{ "defaults": { "policy": { "_tag": "Nope" } } }'),
      'InvalidBreakerOptions: defaults.policy._tag must be "ConsecutiveFailures" or "FailureRate", got "Nope"'
    )
    assert.strictEqual(
      rejected('{ "overrides": { "db": { "policy": { "_tag": "ConsecutiveFailures", "threshold": 0 } } } }'),
      'InvalidBreakerOptions: overrides["db"].policy: consecutiveFailures threshold must be a whole number >= 1, got 0'
    )
  })

  it('openFor "soon": names the field and says what a duration is', () => {
    assert.strictEqual(
      rejected('{ "defaults": { "openFor": "soon" } }'),
      'InvalidBreakerOptions: defaults.openFor must be a finite duration >= 0 (milliseconds, or a string such as "30 seconds"), got "soon"'
    )
    assert.strictEqual(
      rejected('{ "overrides": { "db": { "timeout": "later" } } }'),
      'InvalidBreakerOptions: overrides["db"].timeout must be a finite duration > 0, got "later"'
    )
  })

  it("fields it does not know, at the top and in breaker options, are listed with the valid ones", () => {
    assert.strictEqual(
      rejected('{ "default": {} }'),
      'InvalidBreakerOptions: config has no field "default"; its fields are "defaults", "overrides", "maxBreakers", "maxOpen"'
    )
    assert.strictEqual(
      rejected('{ "defaults": { "openfor": 5 } }'),
      'InvalidBreakerOptions: defaults has no field "openfor"; breaker options in JSON are "policy", "openFor", "halfOpen", "timeout", "sharing"'
    )
    assert.strictEqual(
      rejected('{ "maxBreakers": 0 }'),
      "InvalidBreakerOptions: maxBreakers must be a whole number >= 1, got 0"
    )
    assert.strictEqual(
      rejected("[1]"),
      "InvalidBreakerOptions: config must be a JSON object of registry options, got [1]"
    )
  })

  it("a valid document is accepted as it was", () => {
    assert.strictEqual(
      rejected(
        JSON.stringify({
          defaults: {
            policy: { _tag: "FailureRate", threshold: 0.5, window: { _tag: "TimeWindow", duration: "10 seconds" } },
            openFor: "30 seconds",
            halfOpen: { permits: 2 },
            timeout: 1_000,
            sharing: { quorum: { fraction: 0.5 } }
          },
          overrides: { db: { openFor: 5_000 } },
          maxBreakers: 100,
          maxOpen: { fraction: 0.3 }
        })
      ),
      "accepted"
    )
  })
})

describe("option errors show numbers as numbers", () => {
  it.effect('openFor: -5 is got -5, not got "-5"', () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Effect.scoped(CircuitBreaker.make({ name: "n", openFor: -5 })))
      assert.strictEqual(error.message, 'openFor must be a finite duration >= 0 or a Schedule, got -5 (breaker "n")')
      const word = yield* Effect.flip(Effect.scoped(CircuitBreaker.make({ name: "w", openFor: "-5" as never })))
      assert.strictEqual(word.message, 'openFor must be a finite duration >= 0 or a Schedule, got "-5" (breaker "w")')
    })
  )
})
