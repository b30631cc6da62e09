/**
 * The registry and the breaker's life cycle, each against a baseline in the same run:
 *
 * - `registry.get` on a hit (1000 names, visited in turn) against a plain `Map` lookup in the same
 *   Effect shape (`Effect.suspend` -> `Effect.succeed(map.get(name))`);
 * - making a breaker: `registry.get` on a miss in a registry bounded at 1000 (so each make also
 *   evicts one), and `CircuitBreaker.make` alone (in a scope of its own: the `scope` row is that
 *   scope alone); the same with a first call, whose extra cost is the first call's (its metric series);
 * - a transition: `isolate` then `reset` (two transitions per call), against a warm closed call.
 */
import { BreakerRegistry, CircuitBreaker, Policy } from "@circuitry/breaker"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import type { Case } from "../harness.js"
import { measure } from "../harness.js"
import type { TimedGroup } from "../protocol.js"
import { scaled } from "../protocol.js"

const NAMES = Array.from({ length: 1000 }, (_, i) => `host-${i}`)

const loop = (id: string, label: string, step: (i: number) => Effect.Effect<unknown, unknown>): Case => ({
  id,
  label,
  run: (n) =>
    Effect.runPromise(
      Effect.gen(function* () {
        for (let i = 0; i < n; i++) yield* step(i)
      })
    )
})

export const run = async (): Promise<TimedGroup> => {
  const scope = Effect.runSync(Scope.make())
  const defaults = { policy: Policy.consecutiveFailures(5) }
  const registry = Effect.runSync(BreakerRegistry.make({ defaults }).pipe(Effect.provideService(Scope.Scope, scope)))
  for (const name of NAMES) Effect.runSync(registry.get(name))
  const map = new Map(NAMES.map((name) => [name, Effect.runSync(registry.get(name))] as const))
  const bounded = Effect.runSync(
    BreakerRegistry.make({ defaults, maxBreakers: 1000 }).pipe(Effect.provideService(Scope.Scope, scope))
  )
  const warm = Effect.runSync(
    CircuitBreaker.make({ name: "warm", ...defaults }).pipe(Effect.provideService(Scope.Scope, scope))
  )
  const cycling = Effect.runSync(
    CircuitBreaker.make({ name: "cycling", ...defaults }).pipe(Effect.provideService(Scope.Scope, scope))
  )
  const work = Effect.succeed(1)
  let fresh = 0
  const rows = await measure(
    [
      loop("map-get", "a plain Map lookup (Effect.suspend -> Effect.succeed(map.get(name)))", (i) =>
        Effect.suspend(() => Effect.succeed(map.get(NAMES[i % 1000]!)))
      ),
      loop("registry-get", "registry.get, a hit (1000 names in turn)", (i) => registry.get(NAMES[i % 1000]!)),
      loop("registry-make", "registry.get, a miss in a registry bounded at 1000 (makes one, evicts one)", () =>
        bounded.get(`fresh-${fresh++}`)
      ),
      loop("registry-make-call", "the same, then a first call through it", () =>
        Effect.flatMap(bounded.get(`fresh-${fresh++}`), (b) => b.execute(work))
      ),
      loop("make", "CircuitBreaker.make (in a scope closed after the sample)", () =>
        Effect.scoped(CircuitBreaker.make({ name: "made", ...defaults }))
      ),
      loop("scope", "Effect.scoped(Effect.void): the scope alone, which the make row includes", () =>
        Effect.scoped(Effect.void)
      ),
      loop("closed-call", "a closed call through a warm breaker", () => warm.execute(work)),
      loop("transition", "isolate then reset: two transitions", () => Effect.andThen(cycling.isolate, cycling.reset))
    ],
    { calls: scaled(5_000), warmup: scaled(5_000), repeats: 11 }
  )
  return {
    _tag: "Timed",
    group: "registry",
    floor: "map-get",
    rows,
    notes: [
      "Many calls inside one Effect.gen loop. A transition costs half the `transition` row; a first call costs `registry-make-call` minus `registry-make` minus `closed-call`."
    ]
  }
}
