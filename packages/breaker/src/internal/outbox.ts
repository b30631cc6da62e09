/**
 * What a breaker owes its shared store, and the one owner of it: the breaker puts verdicts,
 * failures and successes in synchronously (a call never waits on the store), and `drain`, the
 * background fiber, sends them in order when the store answers. Nothing else reads or writes it.
 * Verdicts go at once (the store's `VerdictChannel`); counts go in batches, throttled
 * (COUNTS_EVERY_MILLIS), to the store's `SharedCounts`: a store without it is owed no counts, and
 * failures and successes are then kept to the breaker itself.
 */
import * as Edition from "@circuitry/core/Edition"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as BreakerStore from "../BreakerStore.js"
import * as LoopStall from "./loopStall.js"
import type { Quorum } from "./quorum.js"
import type { Health } from "./sharing.js"

/** How long the background writer waits before trying an unreachable store again. */
const STORE_RETRY = Duration.seconds(1)

/** How long one send may take (of the loop's running clock) before it counts as failed (and is tried again). */
const SEND_DEADLINE = Duration.seconds(5)

/**
 * Counts (failures and successes) are for dashboards, and a fleet in a brownout must not cost the
 * store a command per failure: they go in batches, COUNTS_BURST batches at once and then one every
 * COUNTS_EVERY_MILLIS (a token bucket), so that a few failures are still reported as they happen.
 * A batch is what is owed then, at most BATCH_STEPS sends: failures before a success, the success,
 * a trip's time, failures since.
 */
const COUNTS_EVERY_MILLIS = 1_000
const COUNTS_BURST = 5
const BATCH_STEPS = 4

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
  /** With a quorum: the member's latest trip, not yet reported, and whether its episode goes on. */
  private pendingTrip:
    { readonly at: number; readonly until: number; readonly by: string | undefined; current: boolean } | undefined =
    undefined
  /** The last verdict was saved as the fleet's (with a quorum, a trip may be reported instead). */
  private lastSaved = true
  /** Batches of counts that may go now (the token bucket), as of `creditAt` (Clock milliseconds). */
  private credit = COUNTS_BURST
  private creditAt: number | undefined = undefined
  /** Wakes a drain waiting to send counts: a verdict does not wait for them. */
  private readonly urgent = Effect.runSync(Queue.sliding<void>(1))
  /** Done once the verdict owed (or a newer one that replaced it) is in the store. */
  private verdictStored: Deferred.Deferred<void> | undefined = undefined

  constructor(
    private readonly verdicts: BreakerStore.VerdictChannel,
    /** The store's shared counts, if it offers them: without, no count is owed (they stay local). */
    private readonly counts: BreakerStore.SharedCounts | undefined,
    /** Who makes this breaker's verdicts, so that it can ignore their echo. */
    readonly origin: string,
    private readonly signal: Queue.Queue<void>,
    /** Hears whether each send was answered, to log an outage and its end once. */
    private readonly health: Health,
    /** With `sharing.quorum`: decides which of this instance's verdicts are the fleet's (quorum.ts). */
    private readonly quorum: Quorum | undefined
  ) {}

  /**
   * This instance's verdict, made at `at` (its clock; HalfOpen is derived, never stored), and who
   * asked for it. Saved as the fleet's, a verdict makes pending counts moot. With a quorum, an Open
   * while the fleet is closed is reported as a trip instead, and a Closed while the fleet is closed
   * stays the instance's own.
   */
  verdict(state: "Closed" | "Open" | "Isolated", until: number, at: number, by?: string): void {
    // Whatever happens to it, an episode that ends cannot open the fleet any more.
    if (state !== "Open" && this.pendingTrip !== undefined) this.pendingTrip.current = false
    const route = this.quorum === undefined ? "save" : this.quorum.route(state, at)
    this.lastSaved = route === "save"
    if (route === "local") return
    if (route === "trip") {
      // Only the latest trip matters: the store keeps one per member.
      this.pendingTrip = { at, until, by, current: true }
      Edition.offerUnsafe(this.signal, undefined)
      Edition.offerUnsafe(this.urgent, undefined)
      return
    }
    this.save(state, until, at, by)
  }

  private save(state: "Closed" | "Open" | "Isolated", until: number, at: number, by: string | undefined): void {
    this.pendingVerdict = { state, until: state === "Open" ? until : 0, at, by }
    this.verdictStored ??= Edition.deferredUnsafe<void>()
    // A transition starts the store's count again.
    this.failuresBefore = 0
    this.pendingSuccess = false
    this.failures = 0
    this.dirty = false
    Edition.offerUnsafe(this.signal, undefined)
    Edition.offerUnsafe(this.urgent, undefined)
  }

  /** A failure at `at`; `tripped`: it opened the circuit (after its verdict was put in). */
  failure(at: number, tripped: boolean): void {
    if (this.counts === undefined) return
    if (tripped && this.lastSaved) {
      // The verdict starts the store's count again, but the time of the last failure is still worth keeping.
      this.timeOnly = true
    } else {
      this.failures++
    }
    this.lastFailureAt = at
    Edition.offerUnsafe(this.signal, undefined)
  }

  /** A success at `at`. Only the first success after failures tells the store anything: the count starts again. */
  success(at: number): void {
    if (this.counts === undefined) return
    if (this.failures === 0 && !this.dirty) return
    if (this.failures > 0) {
      this.failuresBefore += this.failures
      this.lastFailureBeforeAt = this.lastFailureAt
      this.failures = 0
    }
    this.dirty = false
    this.pendingSuccess = true
    this.successAt = at
    Edition.offerUnsafe(this.signal, undefined)
  }

  /** `verdict` is in the store: forgotten, unless a newer one replaced it meanwhile. */
  private stored(verdict: Pending): void {
    if (this.pendingVerdict !== verdict) return
    this.pendingVerdict = undefined
    const done = this.verdictStored
    this.verdictStored = undefined
    if (done !== undefined) Edition.completeUnsafe(done, Exit.void)
  }

  /**
   * Waits until the verdict owed now is in the store, at most `deadline` (a store that does not
   * answer is not waited for). For what must follow the verdict: a probe's lease goes back after it.
   */
  verdictSent(deadline: Edition.DurationInput): Effect.Effect<void> {
    return Effect.suspend(() => {
      const done = this.verdictStored
      return done === undefined ? Effect.void : Effect.ignore(Effect.timeout(Deferred.await(done), deadline))
    })
  }

  /**
   * The next thing owed, as sent at `now` (this breaker's clock), what to forget once the store
   * has it, and whether it is a verdict.
   */
  private next(
    now: number
  ): readonly [Effect.Effect<void, BreakerStore.BreakerStoreError>, () => void, verdict?: true] | undefined {
    const verdict = this.pendingVerdict
    if (verdict !== undefined) {
      return [this.verdicts.save(toSend(verdict, this.origin, now)), () => this.stored(verdict), true]
    }
    const trip = this.pendingTrip
    if (trip !== undefined && this.quorum !== undefined) {
      const quorum = this.quorum
      return [
        Effect.map(quorum.report(trip.at), (reachedAt) => {
          // The quorum is reached in this member's episode: it becomes the fleet's, for every member.
          if (reachedAt === undefined || !trip.current || quorum.fleetOpen) return
          quorum.opened(reachedAt)
          this.save("Open", trip.until, reachedAt, trip.by)
        }),
        () => {
          if (this.pendingTrip === trip) this.pendingTrip = undefined
        },
        // A trip is as urgent as a verdict: it may open the fleet.
        true
      ]
    }
    const counts = this.counts
    if (counts === undefined) return undefined
    const before = this.failuresBefore
    if (before > 0) {
      return [
        counts.recordFailures(before, this.lastFailureBeforeAt),
        () => {
          this.failuresBefore = Math.max(0, this.failuresBefore - before)
        }
      ]
    }
    if (this.pendingSuccess) {
      return [
        counts.recordSuccess(this.successAt),
        () => {
          this.pendingSuccess = false
        }
      ]
    }
    if (this.timeOnly) {
      return [
        counts.recordFailures(0, this.lastFailureAt),
        () => {
          this.timeOnly = false
        }
      ]
    }
    const failures = this.failures
    if (failures > 0) {
      return [
        counts.recordFailures(failures, this.lastFailureAt),
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
   * the store is down (it is tried again every STORE_RETRY). A verdict goes at once; counts wait
   * for their batch when the bucket is empty (a verdict owed meanwhile goes without waiting).
   */
  get drain(): Effect.Effect<never> {
    const send = ([effect, forget]: NonNullable<ReturnType<Outbox["next"]>>) =>
      LoopStall.timeout(effect, SEND_DEADLINE, "store_wait").pipe(
        Effect.tapError((error) => this.health.failed(error)),
        Effect.tap(() => this.health.answered),
        Effect.map(() => {
          forget()
          return true
        })
      )
    // The clock is read at each attempt: a retried verdict goes out as old as it is.
    const batch = Effect.suspend(() => {
      let steps = 0
      const step = Effect.clockWith((clock) => {
        const next = this.next(Edition.nowUnsafe(clock))
        if (next === undefined || steps++ >= BATCH_STEPS) return Effect.succeed(false)
        return send(next)
      })
      this.credit -= 1
      return Effect.repeat(step, { while: (more) => more })
    })
    const step = Effect.clockWith((clock) => {
      const now = Edition.nowUnsafe(clock)
      const next = this.next(now)
      if (next === undefined) return Effect.succeed(false)
      if (next[2] === true) return send(next)
      this.credit = Math.min(COUNTS_BURST, this.credit + (now - (this.creditAt ?? now)) / COUNTS_EVERY_MILLIS)
      this.creditAt = now
      const wait = Math.ceil((1 - this.credit) * COUNTS_EVERY_MILLIS)
      if (wait <= 0) return Effect.as(batch, true)
      return Effect.as(Effect.race(Effect.sleep(Duration.millis(wait)), Queue.take(this.urgent)), true)
    })
    const drainAll = Effect.repeat(step, { while: (more) => more })
    return Queue.take(this.signal).pipe(
      Effect.andThen(drainAll.pipe(Effect.retry(Schedule.spaced(STORE_RETRY)), Effect.ignore)),
      Effect.forever
    )
  }

  /**
   * Sends the verdict still owed, if any, and the trip still owed (with a quorum: it is counted, but
   * a member that leaves opens no fleet), waiting at most `deadline` in all (when the breaker's
   * scope closes: the drain is about to stop). Counts still owed are left: sent twice, they would
   * count twice (a trip sent twice counts once).
   */
  flush(deadline: Edition.DurationInput): Effect.Effect<void> {
    return Effect.clockWith((clock) => {
      const verdict = this.pendingVerdict
      const trip = this.quorum === undefined ? undefined : this.pendingTrip
      if (verdict === undefined && trip === undefined) return Effect.void
      const send = Effect.andThen(
        verdict === undefined
          ? Effect.void
          : this.verdicts.save(toSend(verdict, this.origin, Edition.nowUnsafe(clock))),
        trip === undefined ? Effect.void : Effect.asVoid(this.quorum!.record(trip.at))
      )
      // Disconnected: a store that does not answer is given up at the deadline, not when it lets go.
      // Interruptible: this runs in a finalizer, where the deadline could not interrupt the wait.
      return LoopStall.timeout(Effect.interruptible(Edition.disconnect(send)), deadline, "store_wait").pipe(
        Effect.tap(() =>
          Effect.sync(() => {
            if (verdict !== undefined) this.stored(verdict)
            if (this.pendingTrip === trip) this.pendingTrip = undefined
          })
        ),
        Effect.tapError((error) => this.health.failed(error)),
        Effect.ignore
      )
    })
  }
}
