/**
 * Owns a limiter's queue of callers waiting for a slot: who waits, in arrival order, and the one
 * way out of it each waiter takes (granted a slot, or cancelled: interrupted or timed out).
 */
import * as Effect from "effect/Effect"
import type { Partition } from "./partition.js"

/** @internal */
export const WAITING = 0
/** @internal */
export const GRANTED = 1
/** @internal */
export const CANCELLED = 2

/** @internal */
export interface Waiter {
  readonly partition: Partition | undefined
  state: typeof WAITING | typeof GRANTED | typeof CANCELLED
  /** In flight when the slot was granted (itself included). */
  inflight: number
  resume: ((effect: Effect.Effect<void>) => void) | undefined
}

/** What grants a waiter its slot: the limiter whose queue it is. @internal */
export interface Admission {
  /** Whether a slot is free under the limit. */
  hasRoom(): boolean
  /** Whether a call in `p` may start now (a free slot, and its partition's guarantee allowing). */
  canAdmit(p: Partition | undefined, now: number): boolean
  /** Takes a slot; the calls in flight with it. */
  acquire(p: Partition | undefined): number
}

/** @internal */
export class Waiters {
  private readonly queue: Array<Waiter> = []

  get length(): number {
    return this.queue.length
  }

  /** A new waiter, last in the queue. */
  add(partition: Partition | undefined): Waiter {
    const w: Waiter = { partition, state: WAITING, inflight: 0, resume: undefined }
    this.queue.push(w)
    if (partition !== undefined) partition.waiting++
    return w
  }

  /** Hands free slots to waiters, first come first served among those that may start. */
  grant(admission: Admission, now: number): void {
    const queue = this.queue
    for (let i = 0; i < queue.length && admission.hasRoom();) {
      const w = queue[i]!
      if (!admission.canAdmit(w.partition, now)) {
        i++
        continue
      }
      queue.splice(i, 1)
      if (w.partition !== undefined) w.partition.waiting--
      w.state = GRANTED
      w.inflight = admission.acquire(w.partition)
      w.resume?.(Effect.void)
    }
  }

  /** Takes a waiter that is still waiting out of the queue. */
  cancel(w: Waiter): void {
    if (w.state !== WAITING) return
    w.state = CANCELLED
    const i = this.queue.indexOf(w)
    if (i >= 0) this.queue.splice(i, 1)
    if (w.partition !== undefined) w.partition.waiting--
  }
}
