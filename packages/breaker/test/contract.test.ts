/**
 * The public contract of ../shared/API.md ("@circuitry/breaker"), written the way code outside this
 * repository uses it: each signature is checked by the compiler (an assignment to the type API.md
 * gives), and each value is used once at run time.
 */
import * as Edition from "@circuitry/core/Edition"
import { BreakerRegistry, BreakerStore, CircuitBreaker, Policy } from "@circuitry/breaker"
import { assert, describe, it, type Subscription } from "@circuitry/testkit"
import type { Cause, Schedule, Scope, Stream } from "effect"
import { Effect, Layer } from "effect"

type StateTag = "Closed" | "Open" | "HalfOpen" | "Isolated"

interface ContractOptions {
  readonly name?: string
  readonly policy?: Policy.Policy
  readonly openFor?: Edition.DurationInput | Schedule.Schedule<unknown, unknown>
  readonly halfOpen?: { readonly permits?: number; readonly successesToClose?: number }
  readonly isFailure?: (cause: Cause.Cause<unknown>) => boolean
}

interface ContractBreaker {
  readonly name: string
  readonly state: Effect.Effect<CircuitBreaker.State>
  readonly isCallAllowed: Effect.Effect<boolean>
  readonly changes: Stream.Stream<{ readonly from: StateTag; readonly to: StateTag; readonly at: number }>
  readonly subscribe: Effect.Effect<Subscription<CircuitBreaker.Transition>, never, Scope.Scope>
  readonly isolate: Effect.Effect<void>
  readonly reset: Effect.Effect<void>
}

class Tagged extends Edition.KeyClass<Tagged, CircuitBreaker.CircuitBreaker>()("contract/Tagged") {}

describe("API.md contract: @circuitry/breaker", () => {
  it.scoped("CircuitBreaker", () =>
    Effect.gen(function* () {
      const options: ContractOptions = { name: "contract", openFor: "1 second", halfOpen: { permits: 1 } }
      const make: (
        options?: ContractOptions
      ) => Effect.Effect<CircuitBreaker.CircuitBreaker, CircuitBreaker.InvalidBreakerOptions, Scope.Scope> =
        CircuitBreaker.make
      const layer: <I>(
        tag: Edition.Key<I, CircuitBreaker.CircuitBreaker>,
        options?: ContractOptions
      ) => Layer.Layer<I, CircuitBreaker.InvalidBreakerOptions> = CircuitBreaker.layer
      const repairing: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> = CircuitBreaker.repairing
      const breaker: ContractBreaker = yield* make(options)
      const open: CircuitBreaker.State = CircuitBreaker.State.Open({ until: 1 })
      assert.strictEqual(open._tag, "Open")
      const dataLast: Effect.Effect<number, CircuitBreaker.BreakerOpenError> = Effect.succeed(1).pipe(
        CircuitBreaker.withBreaker(yield* make())
      )
      const dataFirst: Effect.Effect<number, string | CircuitBreaker.BreakerOpenError, Tagged> =
        CircuitBreaker.withBreaker(Effect.succeed(1) as Effect.Effect<number, string>, Tagged)
      assert.strictEqual(yield* dataLast, 1)
      assert.strictEqual(yield* Effect.provide(dataFirst, layer(Tagged, options)), 1)
      assert.strictEqual(yield* repairing(Effect.succeed(2)), 2)
      assert.strictEqual(breaker.name, "contract")
      const error = new CircuitBreaker.BreakerOpenError({ breaker: "b", state: "HalfOpen", retryAfterMillis: 0 })
      assert.strictEqual(error._tag, "BreakerOpenError")
      assert.strictEqual(new CircuitBreaker.InvalidBreakerOptions({ message: "m" })._tag, "InvalidBreakerOptions")
    })
  )

  it("Policy", () => {
    const consecutive: (threshold: number) => Policy.Policy = Policy.consecutiveFailures
    const rate: (options: {
      readonly threshold: number
      readonly minimumCalls?: number
      readonly window: Policy.Window
      readonly slowCall?: { readonly duration: Edition.DurationInput; readonly threshold: number }
    }) => Policy.Policy = Policy.failureRate
    const countWindow: (size: number) => Policy.Window = Policy.countWindow
    const timeWindow: (duration: Edition.DurationInput) => Policy.Window = Policy.timeWindow
    assert.strictEqual(consecutive(3)._tag, "ConsecutiveFailures")
    assert.strictEqual(rate({ threshold: 0.5, window: countWindow(10) })._tag, "FailureRate")
    assert.strictEqual(timeWindow("1 minute")._tag, "TimeWindow")
  })

  it.effect("BreakerRegistry and BreakerStore", () =>
    Effect.gen(function* () {
      const layer: (options?: {
        defaults?: ContractOptions
        overrides?: Record<string, ContractOptions>
        maxBreakers?: number
      }) => Layer.Layer<BreakerRegistry.BreakerRegistry, CircuitBreaker.InvalidBreakerOptions> = BreakerRegistry.layer
      const withBreakerFor: (
        name: string
      ) => <A, E, R>(
        self: Effect.Effect<A, E, R>
      ) => Effect.Effect<A, E | CircuitBreaker.BreakerOpenError, R | BreakerRegistry.BreakerRegistry> =
        BreakerRegistry.withBreakerFor
      const tag: Edition.Key<BreakerRegistry.BreakerRegistry, BreakerRegistry.BreakerRegistry> =
        BreakerRegistry.BreakerRegistry
      const program = Effect.gen(function* () {
        const registry = yield* tag
        const a: CircuitBreaker.CircuitBreaker = yield* registry.get("a")
        const names: ReadonlyArray<string> = yield* registry.names
        assert.deepStrictEqual(names, ["a"])
        assert.strictEqual(a.name, "a")
        return yield* Effect.succeed("ok").pipe(withBreakerFor("a"))
      })
      assert.strictEqual(yield* program.pipe(Effect.provide(layer({ maxBreakers: 10 }))), "ok")
      assert.strictEqual(BreakerStore.BreakerStore.key, "@circuitry/breaker/BreakerStore")
    })
  )
})
