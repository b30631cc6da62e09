// The CommonJS side of the node16 check: `require` resolves to dist/cjs and its .d.ts files.
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { Cache, MemoryStore } from "@circuitry/cache"
import { Effect } from "effect"

const program = Effect.scoped(
  Effect.gen(function* () {
    const breaker = yield* CircuitBreaker.make({ name: "cjs", policy: Policy.consecutiveFailures(2) })
    const store = Cache.guard(yield* MemoryStore.make(), breaker)
    return yield* store.set("k", "v")
  })
)

const stored: Effect.Effect.Success<typeof program> = true

export = [program, stored]
