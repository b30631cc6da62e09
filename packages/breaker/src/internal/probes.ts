/**
 * Half-open probes: the permits, held in an Effect `Semaphore` (a breaker makes its `Probes` on its
 * first probe: a closed breaker never pays for them), and, with a shared store, the fleet's probe lease (sharing.ts). A
 * probe holds both while it runs and gives both back however it ends.
 */
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Machine from "./machine.js"
import * as Sharing from "./sharing.js"

/** Every permit is taken (here, or by another member of the fleet): the call is rejected. @internal */
export const NO_PERMIT: unique symbol = Symbol("no permit")
/** The half-open episode ended between the decision and the permit: admit the call again. @internal */
export const READMIT: unique symbol = Symbol("readmit")

/** @internal */
export class Probes {
  private readonly semaphore: Effect.Semaphore
  /** Probes holding a permit now (for snapshots). */
  inFlight = 0

  constructor(
    private readonly permits: number,
    private readonly leaseMillis: number,
    private readonly link: Sharing.Link | undefined
  ) {
    this.semaphore = Effect.unsafeMakeSemaphore(permits)
  }

  /** Whether a permit is free now. Taking one and giving it back at once is the semaphore's only answer. */
  get isPermitFree(): Effect.Effect<boolean> {
    return Effect.map(this.semaphore.withPermitsIfAvailable(1)(Effect.void), Option.isSome)
  }

  /**
   * Runs `self` (made interruptible by `restore`) as a probe, holding a permit and the fleet's lease.
   * Call it uninterruptibly. `isCurrent` says whether the decision to probe still holds once the
   * permit is taken; `end` hears how the probe ended (INTERRUPTED when it never ran, or another
   * member of the fleet probes), once, before the permit is given back.
   */
  run<A, E, R>(
    restore: <AX, EX, RX>(effect: Effect.Effect<AX, EX, RX>) => Effect.Effect<AX, EX, RX>,
    self: Effect.Effect<A, E, R>,
    outcome: (exit: Exit.Exit<A, E>) => Machine.Outcome,
    isCurrent: () => boolean,
    end: (outcome: Machine.Outcome) => void,
    now: number
  ): Effect.Effect<A | typeof NO_PERMIT | typeof READMIT, E, R> {
    const finish = (o: Machine.Outcome) => {
      this.inFlight--
      end(o)
    }
    const run = Effect.onExit(restore(self), (exit) => Effect.sync(() => finish(outcome(exit))))
    const link = this.link
    const leased: Effect.Effect<A | typeof NO_PERMIT, E, R> =
      link === undefined
        ? run
        : restore(Sharing.leaseProbe(link, { permits: this.permits, leaseMillis: this.leaseMillis, now })).pipe(
            Effect.onInterrupt(() => Effect.sync(() => finish(Machine.INTERRUPTED))),
            Effect.flatMap((lease): Effect.Effect<A | typeof NO_PERMIT, E, R> => {
              switch (lease._tag) {
                case "Taken":
                  finish(Machine.INTERRUPTED) // another member probes: this one records nothing
                  return Effect.succeed(NO_PERMIT)
                case "Alone":
                  return run
                case "Leased":
                  return Effect.ensuring(run, lease.release)
              }
            })
          )
    return Effect.map(
      this.semaphore.withPermitsIfAvailable(1)(
        Effect.suspend((): Effect.Effect<A | typeof NO_PERMIT | typeof READMIT, E, R> => {
          if (!isCurrent()) return Effect.succeed(READMIT)
          this.inFlight++
          return leased
        })
      ),
      Option.getOrElse((): typeof NO_PERMIT => NO_PERMIT)
    )
  }
}
