/**
 * The probe leases' suite (`BreakerStore.ProbeLeases`), for a backend that offers them: exactly one
 * holder per permit slot however many ask at once, only the holder releases, a lease is over at
 * `leaseMillis` by the times passed in, names are apart.
 */
import { assert } from "@circuitry/testkit"
import { Effect, Option } from "effect"
import { freshName, join, lease, offered, type SuiteIt } from "./support.js"

/** Joins `name`: its probe leases. */
const joinProbes = (name: string) => Effect.map(join(name), (circuit) => offered(circuit, "probes"))

export const probesSuite = (it: SuiteIt): void => {
  it.scoped("exactly one holder per slot, however many ask at once", () =>
    Effect.gen(function* () {
      const name = freshName()
      const members = yield* Effect.all(Array.from({ length: 4 }, () => joinProbes(name)))
      const asks = members.flatMap((m) => [m, m, m])
      const one = yield* Effect.forEach(asks, (m) => m.acquire({ ...lease, now: 1_000 }), {
        concurrency: "unbounded"
      })
      assert.strictEqual(one.filter(Option.isSome).length, 1)
      // more permits, more holders: exactly that many, each in a slot of its own
      const another = freshName()
      const other = yield* Effect.all(Array.from({ length: 4 }, () => joinProbes(another)))
      const three = yield* Effect.forEach(
        other.flatMap((m) => [m, m, m]),
        (m) => m.acquire({ ...lease, permits: 3, now: 1_000 }),
        { concurrency: "unbounded" }
      )
      const held = three.filter(Option.isSome).map((o) => o.value)
      assert.strictEqual(held.length, 3)
      assert.strictEqual(new Set(held).size, 3)
    })
  )

  it.scoped("a released lease can be taken again; only its holder releases it", () =>
    Effect.gen(function* () {
      const name = freshName()
      const a = yield* joinProbes(name)
      const b = yield* joinProbes(name)
      const held = Option.getOrThrow(yield* a.acquire({ ...lease, now: 1_000 }))
      // a lease string that is not the holder's, or not a lease at all, releases nothing
      yield* b.release(held.replace(/:.*/, ":not-the-token"))
      yield* b.release("nonsense")
      assert.isTrue(Option.isNone(yield* b.acquire({ ...lease, now: 1_001 })))
      yield* a.release(held)
      const next = yield* b.acquire({ ...lease, now: 1_002 })
      assert.isTrue(Option.isSome(next))
      assert.notStrictEqual(Option.getOrThrow(next), held)
      // releasing twice is harmless
      yield* a.release(held)
      assert.isTrue(Option.isNone(yield* a.acquire({ ...lease, now: 1_003 })))
    })
  )

  it.scoped("a lease is over at leaseMillis after it was taken, by the time passed in", () =>
    Effect.gen(function* () {
      const name = freshName()
      const a = yield* joinProbes(name)
      const b = yield* joinProbes(name)
      const first = Option.getOrThrow(yield* a.acquire({ ...lease, now: 0 }))
      assert.isTrue(Option.isNone(yield* b.acquire({ ...lease, now: 59_999 })))
      const second = Option.getOrThrow(yield* b.acquire({ ...lease, now: 60_000 }))
      // the first holder's late release does not free the lease that replaced its own
      yield* a.release(first)
      assert.isTrue(Option.isNone(yield* a.acquire({ ...lease, now: 60_001 })))
      yield* b.release(second)
      assert.isTrue(Option.isSome(yield* a.acquire({ ...lease, now: 60_002 })))
    })
  )

  it.scoped("leases of different names are apart", () =>
    Effect.gen(function* () {
      const a = yield* joinProbes(freshName())
      const b = yield* joinProbes(freshName())
      assert.isTrue(Option.isSome(yield* a.acquire({ ...lease, now: 1 })))
      assert.isTrue(Option.isSome(yield* b.acquire({ ...lease, now: 1 })))
    })
  )
}
