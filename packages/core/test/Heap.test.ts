/**
 * The heap against a model (a sorted array): random pushes, pops and removals of the last element,
 * on whichever major this run is. Ties are broken by a sequence number, so the order out is exact.
 */
import { Heap } from "@circuitry/core"
import { assert, describe, it } from "@circuitry/testkit"
import * as fc from "fast-check"

interface Item {
  readonly at: number
  readonly seq: number
}

const before = (a: Item, b: Item): boolean => a.at < b.at || (a.at === b.at && a.seq < b.seq)

type Step =
  | { readonly _tag: "push"; readonly at: number }
  | { readonly _tag: "pop" }
  | { readonly _tag: "removeLastPushed" }
  | { readonly _tag: "removeOther"; readonly index: number }

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ _tag: fc.constant("push" as const), at: fc.integer({ min: 0, max: 20 }) }) },
  { weight: 3, arbitrary: fc.constant({ _tag: "pop" as const }) },
  { weight: 1, arbitrary: fc.constant({ _tag: "removeLastPushed" as const }) },
  {
    weight: 1,
    arbitrary: fc.record({ _tag: fc.constant("removeOther" as const), index: fc.nat({ max: 50 }) })
  }
)

describe("Heap", () => {
  it("pops in `before` order whatever the pushes, pops and removals (a sorted model)", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 300 }), (steps) => {
        const heap = Heap.make(before)
        let model: Array<Item> = []
        let seq = 0
        let lastPushed: Item | undefined
        for (const s of steps) {
          switch (s._tag) {
            case "push": {
              const item = { at: s.at, seq: seq++ }
              heap.push(item)
              model.push(item)
              model.sort((a, b) => (before(a, b) ? -1 : 1))
              lastPushed = item
              break
            }
            case "pop": {
              assert.strictEqual(heap.pop(), model.shift())
              break
            }
            case "removeLastPushed":
            case "removeOther": {
              const target = s._tag === "removeLastPushed" ? lastPushed : model[s.index % Math.max(model.length, 1)]
              if (target === undefined) break
              // Removed only when it is the array's last element; the model cannot see the array, so it
              // follows what the heap says, and the pops after it check that nothing else went.
              if (heap.removeIfLast(target)) model = model.filter((item) => item !== target)
              break
            }
          }
          assert.strictEqual(heap.size, model.length)
          assert.strictEqual(heap.peek(), model[0])
        }
        const rest: Array<Item> = []
        for (let item = heap.pop(); item !== undefined; item = heap.pop()) rest.push(item)
        assert.deepStrictEqual(rest, model)
      })
    )
  })

  it("items pushed in order stay in order, and the last one pushed is the last element", () => {
    const heap = Heap.make<number>((a, b) => a < b)
    for (const n of [1, 2, 3, 4, 5]) heap.push(n)
    assert.isFalse(heap.removeIfLast(4))
    assert.isTrue(heap.removeIfLast(5))
    assert.isFalse(heap.removeIfLast(5))
    assert.strictEqual(heap.size, 4)
    heap.clear()
    assert.strictEqual(heap.size, 0)
    assert.isUndefined(heap.pop())
    assert.isUndefined(heap.peek())
    assert.isFalse(heap.removeIfLast(1))
  })
})
