/**
 * What a breaker owes its shared store, and the one owner of it: the breaker puts verdicts,
 * failures and successes in synchronously (a call never waits on the store), and `drain`, the
 * background fiber, sends them in order when the store answers. Nothing else reads or writes it.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as BreakerStore from "../BreakerStore.js"
import type { Health } from "./sharing.js"

/** How long the background writer waits before trying an unreachable store again. */
const STORE_RETRY = Duration.seconds(1)

/** How long one send may take before it counts as failed (and is tried again). */
const SEND_DEADLINE = Duration.seconds(5)

/** A verdict of this breaker's, on its own clock, until it is sent. */
interface Pending {
  readonly state: BreakerStore.Verdict["state"]
  readonly until: number
  readonly at: number
  readonly by: string | undefined
}

/**
 * The verdict as it is sent at `now` (this breaker's clock): durations only, so the store dates it
 * on its own clock. A verdict sent late (the store was down) is that much older, so the store does
 * not let it replace one made after it.
 */
const toSend = (pending: Pending, origin: string, now: number): BreakerStore.Verdict => {
  const verdict = {
    state: pending.state,
    remainingMillis: pending.state === "Open" ? Math.max(0, pending.until - now) : 0,
    ageMillis: Math.max(0, now - pending.at),
    origin
  }
  return pending.by === undefined ? verdict : { ...verdict, by: pending.by }
}

/** @internal */
export class Outbox {
  // What the store is still owed, in the order it must be sent: the latest verdict, failures seen
  // before a success, that success, failures since.
  private pendingVerdict: Pending | undefined = undefined
  private failuresBefore = 0
  private lastFailureBeforeAt = 0
  private pendingSuccess = false
  private successAt = 0
  private failures = 0
  private lastFailureAt = 0
  /** The last failure's time is owed, without a count (the failure opened the circuit). */
  private timeOnly = false
  /** Failures reached the store since it last heard of a success. */
  private dirty = false

  constructor(
    private readonly circuit: BreakerStore.SharedCircuit,
    /** Who makes this breaker's verdicts, so that it can ignore their echo. */
    readonly origin: string,
    private readonly signal: Queue.Queue<void>,
    /** Hears whether each send was answered, to log an outage and its end once. */
    private readonly health: Health
  ) {}

  /**
   * This instance's verdict, made at `at` (its clock; HalfOpen is derived, never stored), and who
   * asked for it. A verdict makes pending counts moot.
   */
  verdict(state: "Closed" | "Open" | "Isolated", until: number, at: number, by?: string): void {
    this.pendingVerdict = { state, until: state === "Open" ? until : 0, at, by }
    // A transition starts the store's count again.
    this.failuresBefore = 0
    this.pendingSuccess = false
    this.failures = 0
    this.dirty = false
    this.signal.unsafeOffer(undefined)
  }

  /** A failure at `at`; `tripped`: it opened the circuit (after its verdict was put in). */
  failure(at: number, tripped: boolean): void {
    if (tripped) {
      // The verdict starts the store's count again, but the time of the last failure is still worth keeping.
      this.timeOnly = true
    } else {
      this.failures++
    }
    this.lastFailureAt = at
    this.signal.unsafeOffer(undefined)
  }

  /** A success at `at`. Only the first success after failures tells the store anything: the count starts again. */
  success(at: number): void {
    if (this.failures === 0 && !this.dirty) return
    if (this.failures > 0) {
      this.failuresBefore += this.failures
      this.lastFailureBeforeAt = this.lastFailureAt
      this.failures = 0
    }
    this.dirty = false
    this.pendingSuccess = true
    this.successAt = at
    this.signal.unsafeOffer(undefined)
  }

  /** The next thing owed, as sent at `now`, and what to forget once the store has it. */
  private next(now: number): readonly [Effect.Effect<void, BreakerStore.BreakerStoreError>, () => void] | undefined {
    const circuit = this.circuit
    const verdict = this.pendingVerdict
    if (verdict !== undefined) {
      return [
        circuit.save(toSend(verdict, this.origin, now)),
        () => {
          if (this.pendingVerdict === verdict) this.pendingVerdict = undefined
        }
      ]
    }
    const before = this.failuresBefore
    if (before > 0) {
      return [
        circuit.recordFailures(before, this.lastFailureBeforeAt),
        () => {
          this.failuresBefore = Math.max(0, this.failuresBefore - before)
        }
      ]
    }
    if (this.pendingSuccess) {
      return [
        circuit.recordSuccess(this.successAt),
        () => {
          this.pendingSuccess = false
        }
      ]
    }
    if (this.timeOnly) {
      return [
        circuit.recordFailures(0, this.lastFailureAt),
        () => {
          this.timeOnly = false
        }
      ]
    }
    const failures = this.failures
    if (failures > 0) {
      return [
        circuit.recordFailures(failures, this.lastFailureAt),
        () => {
          this.failures = Math.max(0, this.failures - failures)
          this.dirty = true
        }
      ]
    }
    return undefined
  }

  /**
   * Sends what is owed in the background, one step at a time, whenever something is put in: a step
   * is forgotten only once the store has it, so nothing is lost and nothing is counted twice while
   * the store is down (it is tried again every STORE_RETRY).
   */
  get drain(): Effect.Effect<never> {
    // The clock is read at each attempt: a retried verdict goes out as old as it is.
    const step = Effect.clockWith((clock) => {
      const next = this.next(clock.unsafeCurrentTimeMillis())
      if (next === undefined) return Effect.succeed(false)
      const [send, forget] = next
      return send.pipe(
        Effect.timeout(SEND_DEADLINE),
        Effect.tapBoth({ onFailure: (error) => this.health.failed(error), onSuccess: () => this.health.answered }),
        Effect.map(() => {
          forget()
          return true
        })
      )
    })
    const drainAll = Effect.repeat(step, { while: (more) => more })
    return Queue.take(this.signal).pipe(
      Effect.zipRight(drainAll.pipe(Effect.retry(Schedule.spaced(STORE_RETRY)), Effect.ignore)),
      Effect.forever
    )
  }

  /**
   * Sends the verdict still owed, if any, waiting at most `deadline` (when the breaker's scope
   * closes: the drain is about to stop). Counts still owed are left: sent twice, they would count twice.
   */
  flush(deadline: Duration.DurationInput): Effect.Effect<void> {
    return Effect.clockWith((clock) => {
      const verdict = this.pendingVerdict
      if (verdict === undefined) return Effect.void
      const sent = toSend(verdict, this.origin, clock.unsafeCurrentTimeMillis())
      // Disconnected: a store that does not answer is given up at the deadline, not when it lets go.
      // Interruptible: this runs in a finalizer, where the deadline could not interrupt the wait.
      return Effect.interruptible(Effect.disconnect(this.circuit.save(sent))).pipe(
        Effect.timeout(deadline),
        Effect.tap(() => {
          if (this.pendingVerdict === verdict) this.pendingVerdict = undefined
        }),
        Effect.tapError((error) => this.health.failed(error)),
        Effect.ignore
      )
    })
  }
}
