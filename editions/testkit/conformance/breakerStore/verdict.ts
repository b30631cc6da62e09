/**
 * The verdict channel's suite (`BreakerStore.VerdictChannel`), which every backend runs: load and
 * save, the ordering of verdicts by when they were made, delivery to every member, and (for a
 * backend that can be spoiled) stored state it cannot read.
 */
import { assert, describe, result, Result } from "@circuitry/testkit"
import { Effect, Option } from "effect"
import {
  assertAged,
  assertAllAged,
  collect,
  Corruptions,
  eventually,
  freshName,
  join,
  listen,
  pass,
  type SuiteIt,
  verdict
} from "./support.js"

export const verdictSuite = (it: SuiteIt, corruptible: boolean): void => {
  if (corruptible) {
    it.scoped("unreadable stored state is treated as Closed and replaced by the next verdict", () =>
      Effect.gen(function* () {
        const corruptions = yield* Corruptions
        assert.isAbove(corruptions.length, 0)
        for (const [kind, spoil] of corruptions) {
          const name = freshName()
          const a = (yield* join(name)).verdict
          const b = (yield* join(name)).verdict
          const told = yield* collect(b)
          yield* spoil(name)
          // Unreadable: an error (the breaker then starts Closed) or a Closed verdict, never Open.
          const loaded = yield* result(a.load)
          assert.isTrue(
            Option.match(Result.getSuccess(loaded), {
              onNone: () => true, // an error
              onSome: (verdict) => Option.isNone(verdict) || verdict.value.state === "Closed"
            }),
            `${kind}: loaded ${JSON.stringify(loaded)}`
          )
          // The next verdict replaces it, for every member, and is shared again.
          const open = verdict("Open", `fixed-${kind}`)
          yield* a.save(open)
          assertAged(yield* a.load, open)
          assertAged(yield* b.load, open)
          yield* eventually(() => told.some((v) => v.state === "Open" && v.origin === open.origin))
          // ...and the ordering of verdicts holds from then on.
          yield* b.save(verdict("Closed", "late", { ageMillis: 60_000 }))
          assertAged(yield* a.load, open)
        }
      })
    )
  }

  describe("load and save", () => {
    it.scoped("a circuit never saved loads as None", () =>
      Effect.gen(function* () {
        const circuit = (yield* join(freshName())).verdict
        assert.isTrue(Option.isNone(yield* circuit.load))
      })
    )

    it.scoped("a saved verdict is what load returns, for every member", () =>
      Effect.gen(function* () {
        const name = freshName()
        const a = (yield* join(name)).verdict
        const b = (yield* join(name)).verdict
        const open = verdict("Open")
        yield* a.save(open)
        assertAged(yield* a.load, open)
        assertAged(yield* b.load, open)
        // a member that joins later loads it too
        const late = (yield* join(name)).verdict
        assertAged(yield* late.load, open)
        // every stored state round-trips, and who asked for it; a verdict without `by` has none
        for (const v of [
          verdict("Isolated", "b", { by: "ops@example" }),
          verdict("Closed", "b", { by: "someone else" }),
          verdict("Open", "b", { remainingMillis: 250_000 }),
          verdict("Closed", "b")
        ]) {
          yield* b.save(v)
          assertAged(yield* a.load, v)
        }
      })
    )

    it.scoped("a verdict is dated and aged by the store's clock, never by the saver's", () =>
      Effect.gen(function* () {
        const a = (yield* join(freshName())).verdict
        // made 3 s ago by the saver's clock, 20 s left: the store keeps both as durations from its now
        const open = verdict("Open", "a", { ageMillis: 3_000, remainingMillis: 20_000 })
        yield* a.save(open)
        const first = Option.getOrThrow(yield* a.load)
        assertAged(Option.some(first), open)
        // the store's clock moves on: the open time left shrinks and the verdict grows older by as much
        yield* pass(300)
        assertAged(yield* a.load, first, 300)
        // an open time that is over is none left, not a negative one
        yield* a.save(verdict("Open", "a", { remainingMillis: 100 }))
        yield* pass(300)
        assert.strictEqual(Option.getOrThrow(yield* a.load).remainingMillis, 0)
      })
    )

    it.scoped("a verdict made before the stored one (a late retry) does not replace it", () =>
      Effect.gen(function* () {
        const circuit = (yield* join(freshName())).verdict
        const newer = verdict("Open", "newer")
        yield* circuit.save(newer)
        // sent now, but made 5 s ago: it waited in an outbox while the newer one was made
        yield* circuit.save(verdict("Closed", "late", { ageMillis: 5_000 }))
        assertAged(yield* circuit.load, newer)
        // a verdict made after it is stored, whoever made it
        const after = verdict("Closed", "after")
        yield* circuit.save(after)
        assertAged(yield* circuit.load, after)
      })
    )

    it.scoped("circuits are apart by name", () =>
      Effect.gen(function* () {
        const a = (yield* join(freshName())).verdict
        const b = (yield* join(freshName())).verdict
        yield* a.save(verdict("Open"))
        assert.isTrue(Option.isNone(yield* b.load))
      })
    )
  })

  describe("watch", () => {
    it.scoped("every member, the saver included, is told each saved verdict", () =>
      Effect.gen(function* () {
        const name = freshName()
        const a = (yield* join(name)).verdict
        const b = (yield* join(name)).verdict
        const other = (yield* join(freshName())).verdict
        const toA = yield* collect(a)
        const toB = yield* collect(b)
        const toOther = yield* collect(other)
        const first = verdict("Open", "a")
        const second = verdict("Closed", "b", { by: "ops" })
        yield* a.save(first)
        yield* eventually(() => toB.length === 1 && toA.length === 1)
        yield* b.save(second)
        yield* eventually(() => toB.length === 2 && toA.length === 2)
        assertAllAged(toA, [first, second])
        assertAllAged(toB, [first, second])
        // another name hears nothing of it
        assert.deepStrictEqual(toOther, [])
      })
    )

    it.scoped("members that leave do not stop the others being told, nor a later member", () =>
      Effect.gen(function* () {
        const name = freshName()
        const stays = (yield* join(name)).verdict
        yield* Effect.scoped(join(name)) // joins and leaves
        const told = yield* listen(stays, 1)
        const v = verdict("Isolated")
        yield* stays.save(v)
        assertAllAged(yield* told, [v])
        // every member of a name leaves; one that joins afterwards is told again
        const gone = freshName()
        yield* Effect.scoped(join(gone))
        const again = (yield* join(gone)).verdict
        const toAgain = yield* listen(again, 1)
        yield* again.save(verdict("Closed"))
        assertAllAged(yield* toAgain, [verdict("Closed")])
      })
    )
  })
}
