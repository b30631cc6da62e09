/**
 * `CircuitBreaker.make` remembers the last options it resolved (internal/lastOptions.ts): the
 * same options under another name are not resolved again, and nothing it remembers ever lets a
 * bad option through.
 */
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { assert, describe, it } from "@circuitry/testkit"
import { Effect } from "effect"
import { call, fail, tagOf } from "./utils.js"

const messageOf = (options: unknown) =>
  CircuitBreaker.make(options as CircuitBreaker.Options).pipe(
    Effect.flip,
    Effect.map((error) => error.message)
  )

/** How many failures open a breaker made with these options. */
const failuresToOpen = (options: CircuitBreaker.Options) =>
  Effect.gen(function* () {
    const breaker = yield* CircuitBreaker.make(options)
    for (let n = 1; n <= 10; n++) {
      yield* call(breaker, fail)
      if ((yield* tagOf(breaker)) === "Open") return n
    }
    return Infinity
  })

describe("make remembers the last options it resolved", () => {
  it.scoped("the same options under other names make breakers of those names and that policy", () =>
    Effect.gen(function* () {
      const policy = Policy.consecutiveFailures(2)
      const a = yield* CircuitBreaker.make({ name: "tenant-a", policy, openFor: "5 seconds" })
      const b = yield* CircuitBreaker.make({ name: "tenant-b", policy, openFor: "5 seconds" })
      assert.strictEqual(a.name, "tenant-a")
      assert.strictEqual(b.name, "tenant-b")
      assert.strictEqual(yield* failuresToOpen({ name: "tenant-c", policy, openFor: "5 seconds" }), 2)
      const open = yield* CircuitBreaker.make({ name: "tenant-d", policy, openFor: "5 seconds" })
      yield* call(open, fail)
      yield* call(open, fail)
      const state = yield* open.state
      assert.strictEqual(state._tag === "Open" ? state.until : -1, 5000)
    })
  )

  it.scoped("other values are resolved again", () =>
    Effect.gen(function* () {
      assert.strictEqual(yield* failuresToOpen({ name: "p1", policy: Policy.consecutiveFailures(1) }), 1)
      assert.strictEqual(yield* failuresToOpen({ name: "p3", policy: Policy.consecutiveFailures(3) }), 3)
      const halfOpen = { permits: 2 }
      yield* CircuitBreaker.make({ name: "h1", halfOpen })
      assert.strictEqual(
        yield* messageOf({ name: "h2", halfOpen: { permits: 0 } }),
        'halfOpen.permits must be a whole number >= 1, got 0 (breaker "h2")'
      )
    })
  )

  it.scoped("options changed in place after a make are checked again", () =>
    Effect.gen(function* () {
      const options: { name: string; openFor: unknown; halfOpen: { permits: number } } = {
        name: "mutable",
        openFor: "1 second",
        halfOpen: { permits: 1 }
      }
      yield* CircuitBreaker.make(options as CircuitBreaker.Options)
      options.halfOpen.permits = 0
      assert.strictEqual(
        yield* messageOf(options),
        'halfOpen.permits must be a whole number >= 1, got 0 (breaker "mutable")'
      )
      options.halfOpen.permits = 1
      yield* CircuitBreaker.make(options as CircuitBreaker.Options)
      options.openFor = -1
      assert.strictEqual(
        yield* messageOf(options),
        'openFor must be a finite duration >= 0 or a Schedule, got -1 (breaker "mutable")'
      )
    })
  )

  it.scoped("the name is always checked", () =>
    Effect.gen(function* () {
      const policy = Policy.consecutiveFailures(2)
      yield* CircuitBreaker.make({ name: "named", policy })
      assert.strictEqual(yield* messageOf({ name: "", policy }), 'name must be a non-empty string, got ""')
      assert.strictEqual(yield* messageOf({ name: 7, policy }), "name must be a non-empty string, got 7")
      const unnamed = yield* CircuitBreaker.make({ name: undefined, policy } as unknown as CircuitBreaker.Options)
      assert.strictEqual(unnamed.name, "default")
    })
  )
})
