import * as Edition from "@circuitry/core/Edition"
import * as Heap from "@circuitry/core/Heap"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"

/** What a timer calls when it is due. @internal */
export interface Owner {
  readonly onTimer: () => void
}

/** @internal */
export interface Timer {
  readonly at: number
  /** Cleared on cancel, so that a cancelled entry waiting in the heap holds nothing alive. */
  owner: Owner | undefined
}

/**
 * The hedge timers of one `Hedging`, kept by one fiber on the Effect Clock.
 *
 * A timer per call would be a fiber per call (`Effect.sleep` in a fork, or `Effect.timeout`'s
 * race), which costs more than a fast call itself. Here a call adds an entry to a min-heap by
 * due time and cancels it by clearing its owner; one sweeper sleeps until the earliest entry and
 * runs the due ones. With a fixed delay entries arrive in due order, so adding one is O(1); a
 * cancelled entry is dropped at once when it is the last one (a leaf: calls one after another),
 * otherwise when it reaches the top.
 *
 * @internal
 */
export class Timers {
  private readonly heap = Heap.make<Timer>((a, b) => a.at < b.at)
  /** When the sweeper wakes next; infinite while it waits for work. */
  private target = Number.POSITIVE_INFINITY
  /** The scope is closed and the sweeper gone: no timer will fire. */
  private closed = false

  private constructor(
    private readonly now: () => number,
    private readonly wake: Queue.Queue<void>
  ) {}

  static make: Effect.Effect<Timers, never, Scope.Scope> = Effect.gen(function* () {
    const clock = yield* Effect.clockWith(Effect.succeed)
    const wake = yield* Queue.sliding<void>(1)
    const timers = new Timers(() => Edition.nowUnsafe(clock), wake)
    yield* Effect.forkScoped(Effect.forever(timers.sweep()))
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        timers.closed = true
        timers.heap.clear()
      })
    )
    return timers
  })

  /**
   * Calls `owner.onTimer` (synchronously, in the sweeper) once the Clock reaches `at`, unless
   * cancelled first. Undefined once the scope is closed: nothing would fire it.
   */
  schedule(at: number, owner: Owner): Timer | undefined {
    if (this.closed) return undefined
    const timer: Timer = { at, owner }
    this.heap.push(timer)
    if (at < this.target) {
      this.target = at
      Edition.offerUnsafe(this.wake, undefined)
    }
    return timer
  }

  cancel(timer: Timer): void {
    timer.owner = undefined
    this.heap.removeIfLast(timer)
  }

  private sweep(): Effect.Effect<void> {
    return Effect.suspend(() => {
      const now = this.now()
      for (let top = this.heap.peek(); top !== undefined; top = this.heap.peek()) {
        if (top.owner !== undefined && top.at > now) break
        this.heap.pop()
        top.owner?.onTimer()
      }
      const next = this.heap.peek()
      if (next === undefined) {
        this.target = Number.POSITIVE_INFINITY
        return Queue.take(this.wake)
      }
      this.target = next.at
      // An earlier entry added meanwhile wakes the sweeper before its sleep is over.
      return Effect.race(Effect.sleep(Duration.millis(this.target - now)), Queue.take(this.wake))
    })
  }
}
