/**
 * The shared counts' suite (`BreakerStore.SharedCounts`), for a backend that offers them: failures
 * add up over members and never get lost, a success or a verdict starts the count again, the last
 * failure time never moves back.
 */
import { assert } from "@circuitry/testkit"
import { Effect, Option } from "effect"
import { freshName, join, offered, type SuiteIt, verdict } from "./support.js"

const zero = { consecutiveFailures: 0, lastFailureAt: undefined }

/** Joins `name`: its verdict channel and its shared counts. */
const joinCounts = (name: string) =>
  Effect.map(join(name), (circuit) => ({ verdict: circuit.verdict, counts: offered(circuit, "counts") }))

export const countsSuite = (it: SuiteIt): void => {
  it.scoped("a circuit never counted reads zero counts", () =>
    Effect.gen(function* () {
      const { counts } = yield* joinCounts(freshName())
      assert.deepStrictEqual(yield* counts.read, zero)
    })
  )

  it.scoped("failures add up over members, never losing one, and a success starts again", () =>
    Effect.gen(function* () {
      const name = freshName()
      const a = (yield* joinCounts(name)).counts
      const b = (yield* joinCounts(name)).counts
      yield* Effect.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).recordFailures(1, 1_000 + i)),
        { concurrency: "unbounded", discard: true }
      )
      yield* a.recordFailures(5, 900)
      assert.deepStrictEqual(yield* b.read, { consecutiveFailures: 25, lastFailureAt: 1_019 })
      yield* b.recordSuccess(2_000)
      // a success starts the count again; when the last failure happened is still known
      assert.deepStrictEqual(yield* a.read, { consecutiveFailures: 0, lastFailureAt: 1_019 })
    })
  )

  it.scoped("recordFailures(0, at) records the time of the last failure only", () =>
    Effect.gen(function* () {
      const circuit = yield* joinCounts(freshName())
      const counts = circuit.counts
      yield* counts.recordFailures(0, 1_500)
      assert.deepStrictEqual(yield* counts.read, { consecutiveFailures: 0, lastFailureAt: 1_500 })
      yield* counts.recordFailures(2, 1_600)
      yield* counts.recordFailures(0, 1_700)
      assert.deepStrictEqual(yield* counts.read, { consecutiveFailures: 2, lastFailureAt: 1_700 })
      // an earlier time never moves the last failure back
      yield* counts.recordFailures(0, 1_000)
      assert.strictEqual((yield* counts.read).lastFailureAt, 1_700)
      // counts alone are no verdict
      assert.isTrue(Option.isNone(yield* circuit.verdict.load))
    })
  )

  it.scoped("saving a verdict starts the count again", () =>
    Effect.gen(function* () {
      const circuit = yield* joinCounts(freshName())
      yield* circuit.counts.recordFailures(4, 1_000)
      yield* circuit.verdict.save(verdict("Open"))
      assert.deepStrictEqual(yield* circuit.counts.read, { consecutiveFailures: 0, lastFailureAt: 1_000 })
    })
  )

  it.scoped("a verdict made before the stored one (a late retry) does not start the count again", () =>
    Effect.gen(function* () {
      const circuit = yield* joinCounts(freshName())
      yield* circuit.verdict.save(verdict("Open", "newer"))
      yield* circuit.counts.recordFailures(2, 5_100)
      // sent now, but made 5 s ago: it waited in an outbox while the newer one was made
      yield* circuit.verdict.save(verdict("Closed", "late", { ageMillis: 5_000 }))
      // the stale save changed nothing: the count it would have started again is still there
      assert.strictEqual((yield* circuit.counts.read).consecutiveFailures, 2)
    })
  )

  it.scoped("counts of circuits are apart by name", () =>
    Effect.gen(function* () {
      const a = yield* joinCounts(freshName())
      const b = yield* joinCounts(freshName())
      yield* a.verdict.save(verdict("Open"))
      yield* a.counts.recordFailures(3, 1_000)
      assert.deepStrictEqual(yield* b.counts.read, zero)
    })
  )
}
