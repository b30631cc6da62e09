/**
 * Virtual time for a scenario: a Clock whose sleeps wait on a timer heap, and a Scheduler whose
 * tasks wait in a queue, both driven by `World.advance`. Running every fiber of a scenario on them
 * makes time jump straight to the next thing due once every fiber is waiting, which is what lets a
 * ten-minute scenario run in seconds. (`TestClock.adjust` does the same jump but waits for real
 * timers between sleeps, a few milliseconds each: too slow for thousands of requests a second.)
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import type * as Scheduler from "effect/Scheduler"

interface Timer {
  readonly at: number
  readonly seq: number
  run: (() => void) | undefined
}

/** A binary min-heap of timers by (at, seq): equal times fire in the order they were set. */
class Timers {
  private readonly heap: Array<Timer> = []
  private seq = 0

  get size(): number {
    return this.heap.length
  }

  add(at: number, run: () => void): Timer {
    const timer: Timer = { at, seq: this.seq++, run }
    const heap = this.heap
    heap.push(timer)
    let i = heap.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!before(heap[i]!, heap[parent]!)) break
      ;[heap[i], heap[parent]] = [heap[parent]!, heap[i]!]
      i = parent
    }
    return timer
  }

  /** The earliest live timer's time, dropping cancelled ones on the way. */
  peek(): number | undefined {
    while (this.heap.length > 0 && this.heap[0]!.run === undefined) this.pop()
    return this.heap[0]?.at
  }

  pop(): Timer | undefined {
    const heap = this.heap
    const top = heap[0]
    const last = heap.pop()
    if (top === undefined || last === undefined || heap.length === 0) return top
    heap[0] = last
    let i = 0
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let m = i
      if (l < heap.length && before(heap[l]!, heap[m]!)) m = l
      if (r < heap.length && before(heap[r]!, heap[m]!)) m = r
      if (m === i) break
      ;[heap[i], heap[m]] = [heap[m]!, heap[i]!]
      i = m
    }
    return top
  }
}

const before = (a: Timer, b: Timer): boolean => a.at < b.at || (a.at === b.at && a.seq < b.seq)

/** Runs tasks in the order they were scheduled, when the world says so. */
class QueueScheduler implements Scheduler.Scheduler {
  private tasks: Array<Scheduler.Task> = []

  scheduleTask(task: Scheduler.Task): void {
    this.tasks.push(task)
  }

  // A fiber runs until it waits: nothing else can happen at the same virtual instant anyway.
  shouldYield(_fiber: Fiber.RuntimeFiber<unknown, unknown>): number | false {
    return false
  }

  /** Runs every task, including those the tasks schedule, until none is left. */
  flush(): void {
    while (this.tasks.length > 0) {
      const tasks = this.tasks
      this.tasks = []
      for (let i = 0; i < tasks.length; i++) tasks[i]!()
    }
  }
}

/** @internal */
export class World {
  /** Clock milliseconds now. */
  now: number
  readonly scheduler = new QueueScheduler()
  readonly clock: Clock.Clock
  private readonly timers = new Timers()

  constructor(start: number) {
    this.now = start
    const world = this
    this.clock = {
      [Clock.ClockTypeId]: Clock.ClockTypeId,
      unsafeCurrentTimeMillis: () => world.now,
      currentTimeMillis: Effect.sync(() => world.now),
      unsafeCurrentTimeNanos: () => BigInt(Math.round(world.now * 1_000_000)),
      currentTimeNanos: Effect.sync(() => BigInt(Math.round(world.now * 1_000_000))),
      sleep: (duration: Duration.Duration) =>
        Effect.async<void>((resume) => {
          // Whole milliseconds, as a TestClock has: code that reads the Clock expects them.
          const millis = Math.ceil(Duration.toMillis(duration))
          const timer = world.at(world.now + (millis > 0 ? millis : 0), () => resume(Effect.void))
          return Effect.sync(() => {
            timer.run = undefined
          })
        })
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
    this.scheduler.flush()
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
      this.scheduler.flush()
    }
  }
}
