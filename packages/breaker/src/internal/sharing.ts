/**
 * A breaker's link to a shared store: joining the shared circuit, following the verdicts other
 * members make (its `VerdictChannel`), and the fleet-wide probe lease (its `ProbeLeases`, when it
 * offers them). What the breaker owes the store goes through its `Outbox` (outbox.ts), which this
 * module makes and starts; a quorum (quorum.ts) talks to the store's `FleetMembership`.
 *
 * What a store does not offer, the breaker does without: no `probes`, and each instance limits its
 * own half-open probes; no `counts`, and its counts stay local; no `fleet`, and a breaker with
 * `sharing.quorum` is not made (`InvalidBreakerOptions`): without it a quorum could not be counted.
 *
 * The link is made before the breaker, so a breaker is built with it in place; `follow` starts the
 * fibers that need the breaker (adopting verdicts, draining the outbox) once it exists.
 */
import * as Edition from "@circuitry/core/Edition"
import * as Runtime from "#runtime"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as BreakerStore from "../BreakerStore.js"
import { InvalidBreakerOptions } from "./errors.js"
import * as LoopStall from "./loopStall.js"
import type * as Options from "./options.js"
import { Outbox } from "./outbox.js"
import { Quorum } from "./quorum.js"

/** How long a call (or `make`) may wait on the shared store before the breaker decides alone. */
const STORE_DEADLINE = Duration.millis(250)

/** `self` within STORE_DEADLINE of the loop's running clock: a stall of the process's own is not the store's silence. */
const storeWait = <A, E, R>(self: Effect.Effect<A, E, R>) => LoopStall.timeout(self, STORE_DEADLINE, "store_wait")

/** How long closing a breaker's scope may wait to hand its last verdict to the store. */
const FLUSH_DEADLINE = Duration.seconds(1)

/**
 * Whether the store answered the link's last request. The breaker learns of an outage when a
 * request fails or does not answer in time (on the loop's running clock: a stall of the process's
 * own is not the store's silence), and of the recovery when one is answered: each is logged once,
 * as a warning annotated with the breaker's name (and the store's, when it said), and each sets
 * the breaker's reachability gauge (`onChange`).
 *
 * @internal
 */
export class Health {
  connected = true
  onChange: ((connected: boolean) => void) | undefined = undefined
  constructor(readonly name: string) {}

  failed(error: unknown): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (!this.connected) return Effect.void
      this.connected = false
      this.onChange?.(false)
      const store = storeOf(error)
      return Effect.logWarning(
        `circuit "${this.name}": shared store${store === undefined ? "" : ` (${store})`} unreachable, deciding locally until it answers`,
        // as the cause: a second message would be logged as an object (`message=` twice)
        Cause.fail(error)
      ).pipe(Effect.annotateLogs(annotations(this.name, store)))
    })
  }

  get answered(): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (this.connected) return Effect.void
      this.connected = true
      this.onChange?.(true)
      return Effect.logWarning(`circuit "${this.name}": shared store answers again, sharing verdicts`).pipe(
        Effect.annotateLogs(annotations(this.name, undefined))
      )
    })
  }
}

const storeOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "store" in error && typeof error.store === "string"
    ? error.store
    : undefined

const annotations = (name: string, store: string | undefined): Record<string, string> =>
  store === undefined ? { breaker: name } : { breaker: name, store }

/**
 * A verdict another member made, on this breaker's clock: the store's durations (counted from the
 * moment it handed the verdict over) added to this breaker's `now` when it was received. This is
 * the one place a stored verdict meets a member's clock.
 *
 * @internal
 */
export interface Adopted {
  readonly state: BreakerStore.Verdict["state"]
  /** Open: when the circuit turns half-open, on this breaker's clock; otherwise 0. */
  readonly until: number
  /** When the verdict was made, on this breaker's clock. */
  readonly at: number
  readonly origin: string
  readonly by?: string | undefined
}

/** @internal */
export const onClock = (verdict: BreakerStore.Verdict, now: number): Adopted => ({
  state: verdict.state,
  until: verdict.state === "Open" ? now + Math.max(0, verdict.remainingMillis) : 0,
  at: now - Math.max(0, verdict.ageMillis),
  origin: verdict.origin,
  by: verdict.by
})

/** @internal */
export interface Link {
  readonly verdict: BreakerStore.VerdictChannel
  /** The store's fleet-wide probe leases; undefined when it offers none (probes are then limited per instance). */
  readonly probes: BreakerStore.ProbeLeases | undefined
  readonly outbox: Outbox
  readonly health: Health
  /**
   * The verdict stored when the breaker joined, on its clock: `None` when there was none,
   * `undefined` when the store did not answer in time (the load is then made again in the
   * background: `follow`).
   */
  readonly initial: Option.Option<Adopted> | undefined
  /** The breaker's scope: lease requests still in flight when it closes are interrupted with it. */
  readonly scope: Scope.Scope
  /**
   * The breaker's scope closed: the link follows, sends and leases nothing more, and the breaker
   * (still usable) decides locally, as a breaker without a store does.
   */
  closed: boolean
  /** With `sharing.quorum`: the fleet's verdict as this member knows it, and its heartbeat. */
  readonly quorum: Quorum | undefined
}

/** A link whose store offers probe leases. @internal */
export type LeasingLink = Link & { readonly probes: BreakerStore.ProbeLeases }

/**
 * Whether a probe now is the fleet's, and so takes the fleet's lease (when the store offers
 * leases). With a quorum, a member whose fleet is closed probes its own episode alone: the other
 * members are serving traffic.
 *
 * @internal
 */
export const probesForFleet = (link: Link): boolean =>
  !link.closed && (link.quorum === undefined || link.quorum.fleetOpen)

/**
 * Whether the breaker's state is its own verdict rather than the fleet's: with a quorum, a member
 * that opened alone (its fleet is closed).
 *
 * @internal
 */
export const isLocalVerdict = (link: Link, state: string): boolean => !probesForFleet(link) && state !== "Closed"

/**
 * What a snapshot says of the store: whether it answers (never, once the breaker's scope closed),
 * and (with a quorum) whether the state is the breaker's own. @internal
 */
export const storeView = (link: Link, state: string): { readonly connected: boolean; readonly local?: boolean } => {
  const connected = link.health.connected && !link.closed
  return link.quorum === undefined ? { connected } : { connected, local: isLocalVerdict(link, state) }
}

/**
 * The stored verdict, within STORE_DEADLINE. Disconnected: at the deadline the caller goes on
 * without waiting for the driver to let go.
 */
const load = (verdict: BreakerStore.VerdictChannel, health: Health): Effect.Effect<Option.Option<Adopted>, unknown> =>
  Edition.disconnect(verdict.load).pipe(
    storeWait,
    // On this breaker's clock as the store's answer arrives (its durations count from then).
    Effect.flatMap((loaded) =>
      Effect.clockWith((clock) =>
        Effect.succeed(Option.map(loaded, (verdict) => onClock(verdict, Edition.nowUnsafe(clock))))
      )
    ),
    Effect.tapError((error) => health.failed(error)),
    Effect.tap(() => health.answered)
  )

/** How often a first load that did not answer is made again: from 1 s, doubling, at most every 30 s. */
const RELOAD = Runtime.shorterOf(Schedule.exponential(Duration.seconds(1)), Schedule.spaced(Duration.seconds(30)))

/**
 * Joins the shared circuit `name`. A store that cannot be joined leaves the breaker alone, with a
 * warning: `undefined`. A quorum on a store that offers no fleet membership fails: the breaker
 * could never count it, and would silently open on one member's trip or never.
 *
 * @internal
 */
export const connect = (
  store: BreakerStore.BreakerStoreService,
  name: string,
  quorum?: Options.Quorum | undefined
): Effect.Effect<Link | undefined, InvalidBreakerOptions, Scope.Scope> =>
  Effect.gen(function* () {
    const connected = yield* Edition.result(store.connect(name))
    if (Edition.Result.isFailure(connected)) {
      yield* Effect.logWarning(
        `circuit "${name}": shared store unavailable, keeping state locally`,
        Cause.fail(Edition.Result.failureOf(connected))
      )
      return undefined
    }
    const circuit = Edition.Result.successOf(connected)
    if (quorum !== undefined && circuit.fleet === undefined) {
      return yield* new InvalidBreakerOptions({
        message: `sharing.quorum needs a BreakerStore that offers fleet membership (SharedCircuit.fleet: heartbeats and trips); the store in the context offers none (breaker "${name}")`
      })
    }
    const health = new Health(name)
    const initial = yield* Effect.option(load(circuit.verdict, health))
    const origin = `${name}#${Math.random().toString(36).slice(2, 10)}`
    const fleet = quorum === undefined ? undefined : new Quorum(quorum, circuit.fleet!, origin)
    const outbox = new Outbox(circuit.verdict, circuit.counts, origin, yield* Queue.sliding<void>(1), health, fleet)
    const link: Link = {
      verdict: circuit.verdict,
      probes: circuit.probes,
      outbox,
      health,
      initial: Option.getOrUndefined(initial),
      scope: yield* Effect.scope,
      closed: false,
      quorum: fleet
    }
    // Added first, so it runs last: the last verdict's flush (`follow`) still goes out.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        link.closed = true
      })
    )
    return link
  })

/**
 * Adopts the stored verdict, then every verdict another member saves, and starts the outbox's
 * drain, for as long as the scope lasts. `adopt` is given the verdict on the breaker's clock (as it
 * reads when the verdict arrives) and the Clock's `now`.
 * When the scope closes, a verdict not yet sent (a trip just before) is sent, waiting at most
 * FLUSH_DEADLINE: past it, or with the store down, it is lost (the store keeps the one before).
 *
 * @internal
 */
export const follow = (
  link: Link,
  adopt: (verdict: Adopted, now: number) => void
): Effect.Effect<void, never, Scope.Scope> => {
  const origin = link.outbox.origin
  const quorum = link.quorum
  const adoptAt = (adopted: Adopted, now: number): void => {
    quorum?.heard(adopted)
    if (adopted.origin !== origin) adopt(adopted, now)
  }
  /** A verdict already on this breaker's clock (a load's). */
  const adoptLoaded = (adopted: Adopted) =>
    Effect.clockWith((clock) => Effect.sync(() => adoptAt(adopted, Edition.nowUnsafe(clock))))
  /** A verdict as the store sent it: put on this breaker's clock as it arrives. */
  const adoptOne = (verdict: BreakerStore.Verdict) =>
    Effect.clockWith((clock) =>
      Effect.sync(() => {
        const now = Edition.nowUnsafe(clock)
        adoptAt(onClock(verdict, now), now)
      })
    )
  return Effect.gen(function* () {
    const initial = link.initial
    if (initial !== undefined && Option.isSome(initial)) yield* adoptLoaded(initial.value)
    // A first load the store did not answer (down, or a blackhole) is made again until it is
    // answered: a verdict stored meanwhile would otherwise wait for the next one published.
    if (initial === undefined) {
      yield* load(link.verdict, link.health).pipe(
        Effect.retry(RELOAD),
        Effect.flatMap(Option.match({ onNone: () => Effect.void, onSome: adoptLoaded })),
        Effect.ignore,
        Effect.delay(Duration.seconds(1)),
        Effect.forkScoped
      )
    }
    yield* Stream.runForEach(link.verdict.watch, adoptOne).pipe(Effect.forkScoped)
    yield* link.outbox.drain.pipe(Effect.forkScoped)
    if (quorum !== undefined) yield* quorum.heartbeat(link.health).pipe(Effect.forkScoped)
    // Added after the drain, so it runs before the drain is interrupted.
    yield* Effect.addFinalizer(() => link.outbox.flush(FLUSH_DEADLINE))
  })
}

/** What the fleet said to a probe: go ahead with a lease to give back, go ahead alone, or another member probes. */
export type Lease =
  | { readonly _tag: "Leased"; readonly release: Effect.Effect<void> }
  | { readonly _tag: "Alone" }
  | { readonly _tag: "Taken" }

const alone: Lease = { _tag: "Alone" }
const taken: Lease = { _tag: "Taken" }

/**
 * Asks the store for one of the fleet's `permits` probe leases. A store that does not answer in
 * time (or fails) leaves the decision to this instance alone. Releasing never holds the caller up.
 * Call it uninterruptibly: only the wait, made interruptible by `restore`, can be interrupted.
 *
 * The request runs on a fiber of its own, because the store makes the lease's token: a probe that
 * stops waiting (interrupted, or past the deadline) before the answer lands could not release it,
 * and the whole fleet would be refused until the lease ran out. Whoever is last, the waiter
 * leaving or the answer landing, gives the lease back.
 *
 * @internal
 */
export const leaseProbe = (
  link: LeasingLink,
  options: { readonly permits: number; readonly leaseMillis: number; readonly now: number },
  restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
): Effect.Effect<Lease> =>
  Effect.suspend(() => {
    const probes = link.probes
    // A release outlives the probe (and the breaker: the fleet should not wait for the lease to run
    // out), but never a store that does not answer (interruptible, so that the deadline holds).
    const release = (token: string): Effect.Effect<void> =>
      Effect.asVoid(Edition.forkDetach(Effect.interruptible(Effect.ignore(storeWait(probes.release(token))))))
    let abandoned = false
    let landed: string | undefined
    const request = probes.acquire(options).pipe(
      Effect.tap((answer) => {
        if (Option.isNone(answer)) return Effect.void
        if (abandoned) return release(answer.value)
        landed = answer.value
        return Effect.void
      }),
      // Past the lease's time, a token that lands has run out anyway.
      Effect.timeout(Duration.millis(options.leaseMillis)),
      Effect.interruptible
    )
    const abandon = Effect.suspend(() => {
      abandoned = true
      const token = landed
      landed = undefined
      return token === undefined ? Effect.void : release(token)
    })
    // In the breaker's scope: a request to a store that never answers ends when the breaker does.
    // Awaited, not joined: a request interrupted with that scope leaves this probe alone, and only
    // the caller's own interruption interrupts the caller.
    return Effect.flatMap(Effect.forkIn(request, link.scope), (fiber) =>
      Effect.flatMap(Effect.exit(restore(storeWait(Fiber.await(fiber)))), (waited) => {
        if (Exit.isFailure(waited)) {
          if (Edition.hasInterruptsOnly(waited.cause)) return Effect.andThen(abandon, Effect.interrupt)
          return abandon.pipe(Effect.andThen(link.health.failed(Cause.squash(waited.cause))), Effect.as(alone))
        }
        const exit = waited.value
        if (Exit.isFailure(exit)) {
          // interrupted with the breaker's scope (not the store's doing), or failed
          if (Edition.hasInterruptsOnly(exit.cause)) return Effect.as(abandon, alone)
          return abandon.pipe(Effect.andThen(link.health.failed(Cause.squash(exit.cause))), Effect.as(alone))
        }
        landed = undefined
        const answer = exit.value
        return Effect.as(link.health.answered, Option.isNone(answer) ? taken : leased(release(answer.value)))
      })
    )
  })

const leased = (release: Effect.Effect<void>): Lease => ({ _tag: "Leased", release })
