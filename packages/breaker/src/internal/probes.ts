/**
 * Half-open probes: the permits (`Runtime.Permits`: an Effect `Semaphore` on Effect 4, taken with
 * `takeIfAvailable`; a count on Effect 3, see runtime.effect3.ts), and, with a shared store that
 * offers probe leases (`ProbeLeases`), the fleet's probe lease (sharing.ts). A store without them
 * leaves the permits per instance: each member probes on its own. A probe holds both while it runs and gives
 * both back however it ends, or when it runs past its timeout, whichever comes first.
 *
 * A member the fleet refused the lease (another member probes) does not ask again in that episode
 * for a short while (REFUSED_BACK_OFF_MILLIS): asked on every call, the store would pay a round trip per
 * call until the member hears the prober's verdict.
 */
import * as Edition from "@circuitry/core/Edition"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Runtime from "#runtime"
import * as Machine from "./machine.js"
import * as Sharing from "./sharing.js"

/** Every permit is taken (here, or by another member of the fleet): the call is rejected. @internal */
export const NO_PERMIT: unique symbol = Symbol("no permit")
/** The half-open episode ended between the decision and the permit: admit the call again. @internal */
export const READMIT: unique symbol = Symbol("readmit")

/** How long a lease waits, at most, for the probe's verdict to reach the store before it goes back. */
const VERDICT_BEFORE_RELEASE_MILLIS = 1_000
const VERDICT_BEFORE_RELEASE = Duration.millis(VERDICT_BEFORE_RELEASE_MILLIS)

/**
 * A lease is asked for the probe's timeout and this much more (the wait for the verdict, and a
 * second for the release to reach the store), never more than `probeLease`: a live holder has
 * given it back by then, so a release that is lost (a holder gone, a store that never answered it)
 * costs the fleet at most that long without a probe.
 */
const LEASE_MARGIN_MILLIS = VERDICT_BEFORE_RELEASE_MILLIS + 1_000

/**
 * How long a member refused the fleet's lease rejects its half-open calls before it asks again
 * (at most the lease's own time): short, so that a lease given back without a verdict (an
 * interrupted probe) or run out (a prober that died) is taken up again promptly.
 */
const REFUSED_BACK_OFF_MILLIS = 250

/** @internal */
export class Probes {
  /** Probes holding a permit now (snapshots and `isPermitFree` read it: a semaphore has no read of its free permits). */
  inFlight = 0
  private readonly semaphore: Runtime.Permits
  /** The half-open episode (the machine's generation) in which the fleet last refused this member the lease. */
  private refusedIn = -1
  /** Until when (this breaker's clock) that refusal stands: no lease is asked for before then. */
  private refusedUntil = 0

  constructor(
    private permits: number,
    private leaseMillis: number,
    private readonly link: Sharing.Link | undefined
  ) {
    this.semaphore = Runtime.permits(permits)
  }

  /** A registry's live config: permits taken stay taken (fewer permits: no new probe until enough have ended). */
  reconfigure(permits: number, leaseMillis: number): void {
    this.permits = permits
    this.leaseMillis = leaseMillis
    Runtime.resizePermits(this.semaphore, permits)
  }

  /** Whether a probe of episode `generation` could start now: a permit is free, and the fleet did not just refuse the lease. */
  isPermitFree(generation: number, now: number): Effect.Effect<boolean> {
    return Effect.sync(() => this.inFlight < this.permits && this.retryAfter(generation, now) === 0)
  }

  /**
   * Milliseconds until this member asks the fleet for the lease again in episode `generation`
   * (0: it asks on the next call). A new episode forgets the refusal.
   */
  retryAfter(generation: number, now: number): number {
    if (generation !== this.refusedIn || this.fleetLink === undefined) return 0
    return Math.max(0, this.refusedUntil - now)
  }

  /**
   * The link when a probe now takes the fleet's lease: a store that offers leases, and (with a
   * quorum) an episode of the fleet's (a member whose fleet is closed probes alone).
   */
  private get fleetLink(): Sharing.LeasingLink | undefined {
    const link = this.link
    if (link === undefined || link.probes === undefined || !Sharing.probesForFleet(link)) return undefined
    return link as Sharing.LeasingLink
  }

  /** How long the fleet's lease is asked for, for a probe that times out after `timeoutMillis`. */
  leaseFor(timeoutMillis: number): number {
    return Math.min(this.leaseMillis, timeoutMillis + LEASE_MARGIN_MILLIS)
  }

  /** The fleet refused this member the lease in episode `generation`, at `now`. */
  private refused(generation: number, now: number): void {
    this.refusedIn = generation
    this.refusedUntil = now + Math.min(this.leaseMillis, REFUSED_BACK_OFF_MILLIS)
  }

  /**
   * Gives the fleet's lease back once the probe's verdict (a reopening, a close) is in the store:
   * given back before, it would let a member that has not heard the verdict yet probe the same
   * episode again. In the background: the caller does not wait for the store.
   */
  private giveBack(release: Effect.Effect<void> | undefined): Effect.Effect<void> {
    const link = this.link
    if (release === undefined || link === undefined) return Effect.void
    // Interruptible: forked from the probe's uninterruptible region, the wait's deadline could not
    // interrupt it, and the lease would wait for the verdict however long the store takes.
    return Effect.asVoid(
      Edition.forkDetach(Effect.interruptible(Effect.andThen(link.outbox.verdictSent(VERDICT_BEFORE_RELEASE), release)))
    )
  }

  /**
   * Runs `self` (made interruptible by `restore`) as a probe, holding a permit and the fleet's lease.
   * Call it uninterruptibly. `isCurrent` says whether the decision to probe still holds once the
   * permit is taken (`generation`: the episode it was made in); `end` hears how the probe ended
   * (INTERRUPTED when it never ran, or another member of the fleet probes), once, before the
   * permit is given back.
   *
   * A probe still running `timeoutMillis` after it took its permit ends as a FAILURE there and
   * then (its permit and lease go back); the call itself goes on, and its late outcome is ignored.
   */
  run<A, E, R>(
    restore: <AX, EX, RX>(effect: Effect.Effect<AX, EX, RX>) => Effect.Effect<AX, EX, RX>,
    self: Effect.Effect<A, E, R>,
    outcome: (exit: Exit.Exit<A, E>) => Machine.Outcome,
    isCurrent: () => boolean,
    end: (outcome: Machine.Outcome) => void,
    generation: number,
    now: number,
    timeoutMillis: number
  ): Effect.Effect<A | typeof NO_PERMIT | typeof READMIT, E, R> {
    const semaphore = this.semaphore
    return Effect.flatMap(
      Runtime.takePermit(semaphore),
      (taken): Effect.Effect<A | typeof NO_PERMIT | typeof READMIT, E, R> => {
        if (!taken) return Effect.succeed(NO_PERMIT)
        if (!isCurrent()) return Effect.as(Runtime.releasePermit(semaphore), READMIT)
        // With a quorum, a member's own episode (its fleet closed) probes without the fleet's lease.
        const link = this.fleetLink
        // Refused the lease in this episode a moment ago: another member probes.
        if (this.retryAfter(generation, now) > 0) return Effect.as(Runtime.releasePermit(semaphore), NO_PERMIT)
        this.inFlight++
        let done = false
        /** The fleet's lease, once it is held. */
        let release: Effect.Effect<void> | undefined
        let timer: Edition.Fiber<void, never> | undefined
        const finish = (o: Machine.Outcome): Effect.Effect<void> =>
          Effect.suspend(() => {
            if (done) return Effect.void
            done = true
            this.inFlight--
            end(o)
            const stop = timer === undefined ? Effect.void : Effect.asVoid(Edition.forkDetach(Fiber.interrupt(timer)))
            return Effect.andThen(Runtime.releasePermit(semaphore), Effect.andThen(this.giveBack(release), stop))
          })
        const expire = Effect.suspend(() => {
          timer = undefined
          return finish(Machine.FAILURE)
        })
        const run = Effect.onExit(restore(self), (exit) => finish(outcome(exit)))
        const leased: Effect.Effect<A | typeof NO_PERMIT | typeof READMIT, E, R> =
          link === undefined
            ? run
            : Sharing.leaseProbe(
                link,
                { permits: this.permits, leaseMillis: this.leaseFor(timeoutMillis), now },
                restore
              ).pipe(
                Effect.onInterrupt(() => finish(Machine.INTERRUPTED)),
                Effect.flatMap((lease): Effect.Effect<A | typeof NO_PERMIT | typeof READMIT, E, R> => {
                  if (lease._tag === "Taken") {
                    // another member probes: this one records nothing, and waits before it asks again
                    return Effect.clockWith((clock) => {
                      this.refused(generation, Edition.nowUnsafe(clock))
                      return Effect.as(finish(Machine.INTERRUPTED), NO_PERMIT)
                    })
                  }
                  if (lease._tag === "Leased") release = lease.release
                  // The probe ran out of time waiting for its lease: the circuit reopened.
                  if (done) return Effect.as(this.giveBack(release), READMIT)
                  // The episode ended while the lease was asked for (the fleet reopened or closed, a late
                  // answer under load): a probe now would be a second one to the dependency.
                  if (!isCurrent()) return Effect.as(finish(Machine.INTERRUPTED), READMIT)
                  return run
                })
              )
        const startTimer = Effect.map(
          Edition.forkDetach(Effect.interruptible(Effect.andThen(Effect.sleep(timeoutMillis), expire))),
          (fiber) => {
            timer = fiber
          }
        )
        return Effect.andThen(startTimer, leased)
      }
    )
  }
}
