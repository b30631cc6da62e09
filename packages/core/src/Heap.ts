/**
 * A binary min-heap over an array, ordered by a `before` function: the one the circuitry packages
 * keep their timers in (retry's hedge timers, chaos's virtual clock). It holds no Effect services
 * and is not safe to share between fibers without a lock of the caller's.
 *
 * @since 0.2.0
 */

/**
 * A binary min-heap: `peek` and `pop` give the element no other is `before`. Elements that are
 * neither before the other come out in no set order; give `before` a tie-breaker (a sequence
 * number) when their order matters.
 *
 * @since 0.2.0
 * @category models
 * @example
 * ```ts
 * import { Heap } from "@circuitry/core"
 *
 * const timers = Heap.make<{ readonly at: number }>((a, b) => a.at < b.at)
 * timers.push({ at: 20 })
 * timers.push({ at: 10 })
 * console.log(timers.pop()?.at) // 10
 * ```
 */
export class Heap<A> {
  private readonly items: Array<A> = []

  constructor(private readonly before: (a: A, b: A) => boolean) {}

  /** How many elements it holds. */
  get size(): number {
    return this.items.length
  }

  /** The first element, left in place. */
  peek(): A | undefined {
    return this.items[0]
  }

  /** Adds an element: O(1) when it is not before the last one's parent (elements added in order). */
  push(item: A): void {
    const items = this.items
    // Moves the parents down into the hole and writes `item` once, rather than swapping at each level.
    let i = items.push(item) - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.before(item, items[parent]!)) break
      items[i] = items[parent]!
      i = parent
    }
    items[i] = item
  }

  /** Removes and returns the first element. */
  pop(): A | undefined {
    const items = this.items
    const top = items[0]
    const last = items.pop()!
    if (items.length === 0) return top
    let i = 0
    for (;;) {
      const left = 2 * i + 1
      if (left >= items.length) break
      const right = left + 1
      const child = right < items.length && this.before(items[right]!, items[left]!) ? right : left
      if (!this.before(items[child]!, last)) break
      items[i] = items[child]!
      i = child
    }
    items[i] = last
    return top
  }

  /**
   * Removes `item` if it is the last element of the array (a leaf: removing it keeps the order),
   * and says whether it did. A cancelled timer that was the last one added goes at once; any other
   * waits until it reaches the top.
   */
  removeIfLast(item: A): boolean {
    const items = this.items
    if (items.length === 0 || items[items.length - 1] !== item) return false
    items.pop()
    return true
  }

  /** Removes every element. */
  clear(): void {
    this.items.length = 0
  }
}

/**
 * An empty heap ordered by `before` (`before(a, b)`: `a` comes out first).
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Heap } from "@circuitry/core"
 *
 * const times = Heap.make<number>((a, b) => a < b)
 * ```
 */
export const make = <A>(before: (a: A, b: A) => boolean): Heap<A> => new Heap(before)
