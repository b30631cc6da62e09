import { BreakerStore, CircuitBreaker } from "@circuitry/breaker"
import { result, Result } from "@circuitry/testkit"
import { Effect, Option, Ref } from "effect"

/** A dependency that counts how often it is really run, and answers as told. */
export const dependency = Effect.gen(function* () {
  const calls = yield* Ref.make(0)
  const mode = yield* Ref.make<"up" | "down">("up")
  const effect = Ref.update(calls, (n) => n + 1).pipe(
    Effect.andThen(Ref.get(mode)),
    Effect.flatMap((m) => (m === "up" ? Effect.succeed("ok" as const) : Effect.fail("down" as const)))
  )
  return {
    calls: Ref.get(calls),
    up: Ref.set(mode, "up"),
    down: Ref.set(mode, "down"),
    effect
  }
})

export const succeed = Effect.succeed("ok" as const)
export const fail = Effect.fail("boom" as const)

export const call = <A, E, R, TimeoutE>(
  breaker: CircuitBreaker.CircuitBreaker<TimeoutE>,
  effect: Effect.Effect<A, E, R>
) => result(CircuitBreaker.withBreaker(effect, breaker))

export const tagOf = (breaker: CircuitBreaker.CircuitBreaker<unknown>) => Effect.map(breaker.state, (s) => s._tag)

/** The error of a rejected call, or a failure of the test when it was not rejected. */
export const rejectedWith = <A, E>(outcome: Result<A, E>) => {
  const error = Option.getOrUndefined(Result.getFailure(outcome))
  if (!(error instanceof CircuitBreaker.BreakerOpenError)) {
    throw new Error(`expected a BreakerOpenError, got ${JSON.stringify(outcome)}`)
  }
  return error
}

/** Everything a subscription has received so far. */
export { drain } from "@circuitry/testkit"

/**
 * A store that offers only some of `store`'s capabilities (its verdict channel, and `keep`): a
 * backend that cannot do the rest.
 */
export const offering = (
  store: BreakerStore.BreakerStoreService,
  keep: ReadonlyArray<BreakerStore.Capability>
): BreakerStore.BreakerStoreService =>
  BreakerStore.BreakerStore.of({
    connect: (name) =>
      Effect.map(store.connect(name), (circuit) => ({
        verdict: circuit.verdict,
        ...(keep.includes("counts") ? { counts: circuit.counts } : {}),
        ...(keep.includes("probes") ? { probes: circuit.probes } : {}),
        ...(keep.includes("fleet") ? { fleet: circuit.fleet } : {})
      }))
  })
