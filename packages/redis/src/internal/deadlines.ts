import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"

interface Entry {
  readonly deadline: number
  /** Dropped when the call settles: a finished call's closures must not wait for the sweeper. */
  expire: (() => void) | undefined
}

/**
 * Deadlines for calls that all have the same limit, kept by one fiber on the Effect Clock.
 *
 * `Effect.timeout` forks a race per call, which costs more than the Redis round trip itself. Since
 * every call here has the same limit, deadlines come in the order the calls start: one sweeper
 * sleeps until the oldest pending deadline and fails the calls that passed it.
 *
 * A call that settles drops its entry's closure at once, and each start trims the finished
 * entries at the head: without that, every call of the last `millis` (its fiber included) stays
 * reachable until the sweeper next wakes, which at high rates is most of the process's GC work.
 *
 * @internal
 */
export class Deadlines {
  private readonly pending: Array<Entry | undefined> = []
  private head = 0
  private idle = true

  private constructor(
    private readonly millis: number,
    private readonly now: () => number,
    private readonly wake: Queue.Queue<void>
  ) {}

  static make(millis: number): Effect.Effect<Deadlines, never, Scope.Scope> {
    return Effect.gen(function* () {
      const clock = yield* Effect.clock
      const wake = yield* Queue.sliding<void>(1)
      const deadlines = new Deadlines(millis, () => clock.unsafeCurrentTimeMillis(), wake)
      yield* Effect.forkScoped(deadlines.sweep())
      return deadlines
    })
  }

  /** Starts a call's deadline; `expire` runs if it passes first. Returns a cancel function. */
  start(expire: () => void): () => void {
    const entry: Entry = { deadline: this.now() + this.millis, expire }
    this.first()
    this.pending.push(entry)
    if (this.idle) {
      this.idle = false
      this.wake.unsafeOffer(undefined)
    }
    return () => {
      entry.expire = undefined
    }
  }

  /** The oldest entry still pending; drops the finished ones before it. */
  private first(): Entry | undefined {
    while (this.head < this.pending.length) {
      const entry = this.pending[this.head]!
      if (entry.expire !== undefined) {
        if (this.head > 1024 && this.head * 2 > this.pending.length) {
          this.pending.splice(0, this.head)
          this.head = 0
        }
        return entry
      }
      this.pending[this.head++] = undefined
    }
    this.pending.length = 0
    this.head = 0
    return undefined
  }

  private sweep(): Effect.Effect<never> {
    const step: Effect.Effect<void> = Effect.suspend(() => {
      const first = this.first()
      if (first === undefined) {
        this.idle = true
        return Queue.take(this.wake)
      }
      const wait = first.deadline - this.now()
      if (wait > 0) return Effect.sleep(Duration.millis(wait))
      const now = this.now()
      for (let entry = this.first(); entry !== undefined && entry.deadline <= now; entry = this.first()) {
        const expire = entry.expire!
        entry.expire = undefined
        this.pending[this.head++] = undefined
        expire()
      }
      return Effect.void
    })
    return Effect.forever(step)
  }
}
