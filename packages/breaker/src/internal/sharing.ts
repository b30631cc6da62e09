/**
 * What a breaker owes a shared store, and the background fiber that delivers it. A call never waits
 * on this: the breaker writes into the outbox synchronously, and the writer sends it when it can.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as BreakerStore from "../BreakerStore.js"

/** How long the background writer waits before trying an unreachable store again. */
const STORE_RETRY = Duration.seconds(1)

/**
 * What the background writer still owes the shared store, in the order it must be sent: the latest
 * verdict, failures seen before a success, that success, failures since.
 */
export interface Outbox {
  verdict: BreakerStore.Verdict | undefined
  failuresBefore: number
  lastFailureBeforeAt: number
  success: boolean
  successAt: number
  failures: number
  lastFailureAt: number
  /** The last failure's time is owed, without a count (the failure opened the circuit). */
  timeOnly: boolean
  /** Failures reached the store since it last heard of a success. */
  dirty: boolean
  readonly signal: Queue.Queue<void>
}

/** The next thing the writer owes the store, and what to forget once the store has it. */
const nextStep = (
  shared: BreakerStore.SharedCircuit,
  outbox: Outbox
): readonly [Effect.Effect<void, BreakerStore.BreakerStoreError>, () => void] | undefined => {
  const verdict = outbox.verdict
  if (verdict !== undefined) {
    return [
      shared.save(verdict),
      () => {
        if (outbox.verdict === verdict) outbox.verdict = undefined
      }
    ]
  }
  const before = outbox.failuresBefore
  if (before > 0) {
    return [
      shared.recordFailures(before, outbox.lastFailureBeforeAt),
      () => {
        outbox.failuresBefore = Math.max(0, outbox.failuresBefore - before)
      }
    ]
  }
  if (outbox.success) {
    return [
      shared.recordSuccess(outbox.successAt),
      () => {
        outbox.success = false
      }
    ]
  }
  if (outbox.timeOnly) {
    return [
      shared.recordFailures(0, outbox.lastFailureAt),
      () => {
        outbox.timeOnly = false
      }
    ]
  }
  const failures = outbox.failures
  if (failures > 0) {
    return [
      shared.recordFailures(failures, outbox.lastFailureAt),
      () => {
        outbox.failures = Math.max(0, outbox.failures - failures)
        outbox.dirty = true
      }
    ]
  }
  return undefined
}

/**
 * Drains the outbox into the store in the background, one step at a time: a step is forgotten only
 * once the store has it, so nothing is lost and nothing is counted twice while the store is down.
 */
export const writer = (shared: BreakerStore.SharedCircuit, outbox: Outbox): Effect.Effect<never> => {
  const step = Effect.suspend(() => {
    const next = nextStep(shared, outbox)
    if (next === undefined) return Effect.succeed(false)
    const [send, forget] = next
    return send.pipe(
      Effect.timeout(Duration.seconds(5)),
      Effect.map(() => {
        forget()
        return true
      })
    )
  })
  const drain = Effect.repeat(step, { while: (more) => more })
  return Queue.take(outbox.signal).pipe(
    Effect.zipRight(drain.pipe(Effect.retry(Schedule.spaced(STORE_RETRY)), Effect.ignore)),
    Effect.forever
  )
}
