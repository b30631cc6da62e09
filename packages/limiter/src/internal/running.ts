/**
 * Owns which calls each fiber holds a limiter slot for, and frees the slots a fiber still holds
 * when it ends. An interrupted fiber skips the calls' handlers (Effect does not run them while it
 * unwinds an interruption), so one observer per fiber frees them. One observer per call would cost
 * more than the rest of the call: Effect 3's `removeObserver` copies the fiber's list of observers
 * every time.
 *
 * The fiber is read through `#fiber` (fiber.effect3.ts / fiber.effect4.ts).
 */
import * as Fiber from "#fiber"
import type * as Clock from "effect/Clock"
import type { Outcome } from "./metrics.js"
import type { Partition } from "./partition.js"

/** What frees a slot: the limiter the call was admitted by. @internal */
export interface Slots {
  finish(p: Partition | undefined, clock: Clock.Clock, start: number, inflight: number, outcome: Outcome): void
}

/** An admitted call, as the fiber that runs it knows it: enough to free its slot. @internal */
export class Call {
  constructor(
    readonly slots: Slots,
    readonly partition: Partition | undefined,
    readonly clock: Clock.Clock,
    readonly start: number,
    readonly inflight: number
  ) {}
}

/** The calls a fiber has running through limiters, newest last (calls in one fiber nest, so they
 * mostly end newest first). @internal */
export class Running {
  private readonly calls: Array<Call> = []

  constructor(fiber: Fiber.Fiber) {
    Fiber.onEnd(fiber, () => {
      if (lastFiber === fiber) lastFiber = lastRunning = undefined
      const left = this.calls.splice(0)
      for (const c of left) c.slots.finish(c.partition, c.clock, c.start, c.inflight, "interrupted")
    })
  }

  add(call: Call): void {
    this.calls.push(call)
  }

  /** Whether `call` was still running: its handler frees the slot then, and only then. */
  remove(call: Call): boolean {
    const calls = this.calls
    const last = calls.length - 1
    if (last >= 0 && calls[last] === call) {
      calls.pop()
      return true
    }
    const i = calls.lastIndexOf(call)
    if (i < 0) return false
    calls.splice(i, 1)
    return true
  }
}

const runningByFiber = new WeakMap<Fiber.Fiber, Running>()
// Most calls come from the fiber that made the last one; forgotten when that fiber ends.
let lastFiber: Fiber.Fiber | undefined
let lastRunning: Running | undefined

/** The calls `fiber` holds, made on its first call. @internal */
export const runningOf = (fiber: Fiber.Fiber): Running => {
  if (fiber === lastFiber) return lastRunning!
  let running = runningByFiber.get(fiber)
  if (running === undefined) {
    running = new Running(fiber)
    runningByFiber.set(fiber, running)
  }
  lastFiber = fiber
  lastRunning = running
  return running
}
