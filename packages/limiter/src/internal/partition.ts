/**
 * Owns the partitions' guaranteed shares of a limiter's limit: what each is guaranteed at the
 * current limit, and whether a call may start given what the partitions in use hold back.
 */

/** A partition that has had no call for this long lends its share (it is not in use). */
const IDLE_MILLIS = 1000

/** @internal */
export class Partition {
  /** Slots guaranteed at the current limit. */
  guaranteed = 0
  busy = 0
  waiting = 0
  lastArrival = -Infinity
  constructor(
    readonly name: string,
    readonly share: number
  ) {}
}

/**
 * Whether a call in `p` may start with `running` of `limit` slots taken, past the limit check: past
 * its guaranteed slots, a partition may only borrow what the other partitions in use do not need
 * for their own guarantees. @internal
 */
export const canBorrow = (
  partitions: ReadonlyArray<Partition>,
  p: Partition | undefined,
  running: number,
  limit: number,
  now: number
): boolean => {
  if (p !== undefined && p.busy < p.guaranteed) return true
  let held = 0
  for (const q of partitions) {
    if (q !== p && q.busy < q.guaranteed && (q.busy > 0 || q.waiting > 0 || now - q.lastArrival < IDLE_MILLIS)) {
      held += q.guaranteed - q.busy
    }
  }
  return running + held < limit
}

/**
 * Each partition is guaranteed its share of the limit rounded up (as Netflix's partitions are):
 * at least its share. When the shares add up to 1 the roundings may overlap by a slot, which goes
 * to whichever partition asks first; the total never exceeds the limit. @internal
 */
export const shareOut = (partitions: ReadonlyArray<Partition>, limit: number): void => {
  for (const p of partitions) p.guaranteed = Math.ceil(limit * p.share)
}
