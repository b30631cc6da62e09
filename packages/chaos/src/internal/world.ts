/**
 * Virtual time for a scenario: a Clock whose sleeps wait on a timer heap, and a Scheduler whose
 * tasks wait in a queue, both driven by `World.step` and `World.settle` (`Virtual.runner` makes
 * the Clock and Scheduler objects of each major from them). Running every fiber of a scenario on them
 * makes time jump straight to the next thing due once every fiber is waiting, which is what lets a
 * ten-minute scenario run in seconds. (`TestClock.adjust` does the same jump but waits for real
 * timers between sleeps, a few milliseconds each: too slow for thousands of requests a second.)
 *
 * @internal
 */
import * as Edition from "@circuitry/core/Edition"
import * as Heap from "@circuitry/core/Heap"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Virtual from "#virtual"

interface Timer {
  readonly at: number
  readonly seq: number
  run: (() => void) | undefined
}

/** Timers by (at, seq): equal times fire in the order they were set. */
class Timers {
  private readonly heap = Heap.make<Timer>((a, b) => a.at < b.at || (a.at === b.at && a.seq < b.seq))
  private seq = 0

  add(at: number, run: () => void): Timer {
    const timer: Timer = { at, seq: this.seq++, run }
    this.heap.push(timer)
    return timer
  }

  /** The earliest live timer's time, dropping cancelled ones on the way. */
  peek(): number | undefined {
    while (this.heap.size > 0 && this.heap.peek()!.run === undefined) this.heap.pop()
    return this.heap.peek()?.at
  }

  pop(): Timer | undefined {
    return this.heap.pop()
  }
}

/**
 * What the fibers of a world read and wait on: its time, its sleeps, and the queue their tasks wait
 * in. `Virtual.runner` makes each major's `Clock` and `Scheduler` objects of it.
 *
 * @internal
 */
export interface Clockwork {
  /** Clock milliseconds now. */
  readonly now: number
  readonly nanos: () => bigint
  /** The members of a `Clock` that both majors name alike. */
  readonly effects: {
    readonly currentTimeMillis: Effect.Effect<number>
    readonly currentTimeNanos: Effect.Effect<bigint>
    readonly sleep: (duration: Duration.Duration) => Effect.Effect<void>
  }
  readonly schedule: (task: () => void) => void
  /** Runs every task waiting, and those they schedule, until none is left. */
  readonly flush: () => void
}

/** Starts fibers in a world, with the context of the fiber that made it (`Virtual.runner`). @internal */
export interface Runner<R> {
  /** Runs `effect` in a fiber of its own, on the world's scheduler and clock, `setting` its local. */
  readonly fork: (effect: Effect.Effect<unknown, unknown, R>, setting: Virtual.Setting) => Virtual.RequestFiber
  /** A counter's count, as the caller's fiber would read it. */
  readonly read: (counter: Virtual.Counter) => number
}

/**
 * The clock and the task queue of a scenario's fibers.
 *
 * @internal
 */
export class World implements Clockwork {
  /** Clock milliseconds now. */
  now: number
  private readonly timers = new Timers()
  private tasks: Array<() => void> = []
  readonly nanos = (): bigint => BigInt(Math.round(this.now * 1_000_000))

  constructor(start: number) {
    this.now = start
  }

  readonly effects = {
    currentTimeMillis: Effect.sync(() => this.now),
    currentTimeNanos: Effect.sync(this.nanos),
    sleep: (duration: Duration.Duration): Effect.Effect<void> =>
      Edition.callback<void, never>((resume) => {
        // Whole milliseconds, as a TestClock has: code that reads the Clock expects them.
        const millis = Math.ceil(Duration.toMillis(duration))
        const timer = this.at(this.now + (millis > 0 ? millis : 0), () => resume(Effect.void))
        return Effect.sync(() => {
          timer.run = undefined
        })
      })
  }

  /** Queues a fiber's task: tasks run in the order they were scheduled, when the world says so. */
  readonly schedule = (task: () => void): void => {
    this.tasks.push(task)
  }

  /** Runs every task, including those the tasks schedule, until none is left. */
  readonly flush = (): void => {
    while (this.tasks.length > 0) {
      const tasks = this.tasks
      this.tasks = []
      for (let i = 0; i < tasks.length; i++) tasks[i]!()
    }
  }

  /** Runs `f` at Clock millisecond `at` (now, at the earliest), after what is already due then. */
  at(at: number, f: () => void): { run: (() => void) | undefined } {
    return this.timers.add(Math.max(at, this.now), f)
  }

  /** When the next timer is due, if any. */
  next(): number | undefined {
    return this.timers.peek()
  }

  /** Lets every fiber run until it waits. */
  settle(): void {
    this.flush()
  }

  /** Moves to the next timer's time and runs every timer due then, and what they wake. */
  step(): void {
    const at = this.timers.peek()
    if (at === undefined) return
    this.now = at
    while (this.timers.peek() === at) {
      const timer = this.timers.pop()!
      const run = timer.run
      timer.run = undefined
      run?.()
      this.flush()
    }
  }
}
