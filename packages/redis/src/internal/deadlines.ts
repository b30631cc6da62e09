import { LoopStall } from "@circuitry/breaker"
import * as Edition from "@circuitry/core/Edition"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"

/**
 * The loop's running clock: the Effect Clock minus the time the event loop lost to stalls
 * (`LoopStall`). A deadline or a silence measured on it does not blame Redis for a stall of the
 * process's own, whose reply is waiting in the socket; it is the Clock when nothing stalled.
 *
 * @internal
 */
export interface RunningClock {
  /** The Effect Clock's time. */
  readonly clock: () => number
  /** The running clock's time at the Clock's `at`. */
  readonly at: (at: number) => number
  readonly now: () => number
}

/** @internal */
export const runningClock: Effect.Effect<RunningClock> = Effect.gen(function* () {
  const effectClock = yield* Effect.clockWith(Effect.succeed)
  const stall = LoopStall.onClock(yield* LoopStall.LoopStall, effectClock)
  const clock = () => Edition.nowUnsafe(effectClock)
  const at = (t: number) => t - stall.lostBefore(t)
  return { clock, at, now: () => at(clock()) }
})

const countExtended = Edition.counterSeries(LoopStall.deadlineExtensions, { deadline: "redis_deadline" })

interface Entry {
  /** On the running clock. */
  readonly deadline: number
  /** On the Clock: past it, the entry is only still pending because of a stall. */
  readonly clockDeadline: number
  /** Dropped when the call settles: a finished call's closures must not wait for the sweeper. */
  expire: (() => void) | undefined
}

/**
 * Deadlines for calls that all have the same limit, kept by one fiber on the loop's running clock
 * (`runningClock`): a call whose deadline the loop spent stalled is carried on for the time lost.
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
  /** The last entry counted as carried on (each is counted once). */
  private counted: Entry | undefined = undefined

  private constructor(
    private readonly millis: number,
    private readonly running: RunningClock,
    private readonly wake: Queue.Queue<void>
  ) {}

  static make(millis: number): Effect.Effect<Deadlines, never, Scope.Scope> {
    return Effect.gen(function* () {
      const clock = yield* runningClock
      const wake = yield* Queue.sliding<void>(1)
      const deadlines = new Deadlines(millis, clock, wake)
      yield* Effect.forkScoped(deadlines.sweep())
      return deadlines
    })
  }

  /** Starts a call's deadline; `expire` runs if it passes first. Returns a cancel function. */
  start(expire: () => void): () => void {
    const now = this.running.clock()
    const entry: Entry = { deadline: this.running.at(now) + this.millis, clockDeadline: now + this.millis, expire }
    this.first()
    this.pending.push(entry)
    if (this.idle) {
      this.idle = false
      Edition.offerUnsafe(this.wake, undefined)
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
      const wait = first.deadline - this.running.now()
      if (wait > 0) {
        if (this.counted !== first && this.running.clock() >= first.clockDeadline) {
          this.counted = first
          countExtended(1)
        }
        return Effect.sleep(Duration.millis(wait))
      }
      const now = this.running.now()
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
