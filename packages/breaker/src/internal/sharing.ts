/**
 * A breaker's link to a shared store: joining the shared circuit, following the verdicts other
 * members make, and the fleet-wide probe lease. What the breaker owes the store goes through its
 * `Outbox` (outbox.ts), which this module makes and starts.
 *
 * The link is made before the breaker, so a breaker is built with it in place; `follow` starts the
 * fibers that need the breaker (adopting verdicts, draining the outbox) once it exists.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as BreakerStore from "../BreakerStore.js"
import { Outbox } from "./outbox.js"

/** How long a call (or `make`) may wait on the shared store before the breaker decides alone. */
const STORE_DEADLINE = Duration.millis(250)

/** @internal */
export interface Link {
  readonly circuit: BreakerStore.SharedCircuit
  readonly outbox: Outbox
  /** The verdict stored when the breaker joined, if the store answered in time. */
  readonly initial: Option.Option<BreakerStore.Verdict>
}

/**
 * Joins the shared circuit `name`. A store that cannot be joined leaves the breaker alone, with a
 * warning: `undefined`.
 *
 * @internal
 */
export const connect = (
  store: BreakerStore.BreakerStore["Type"],
  name: string
): Effect.Effect<Link | undefined, never, Scope.Scope> =>
  Effect.gen(function* () {
    const connected = yield* Effect.either(store.connect(name))
    if (Either.isLeft(connected)) {
      yield* Effect.logWarning(`circuit "${name}": shared store unavailable, keeping state locally`, connected.left)
      return undefined
    }
    const circuit = connected.right
    const initial = yield* circuit.load.pipe(Effect.timeout(STORE_DEADLINE), Effect.option)
    const origin = `${name}#${Math.random().toString(36).slice(2, 10)}`
    const outbox = new Outbox(circuit, origin, yield* Queue.sliding<void>(1))
    return { circuit, outbox, initial: Option.flatten(initial) }
  })

/**
 * Adopts the stored verdict, then every verdict another member saves, and starts the outbox's
 * drain, for as long as the scope lasts. `adopt` is given the verdict and the Clock's `now`.
 *
 * @internal
 */
export const follow = (
  link: Link,
  adopt: (verdict: BreakerStore.Verdict, now: number) => void
): Effect.Effect<void, never, Scope.Scope> => {
  const origin = link.outbox.origin
  const adoptOne = (verdict: BreakerStore.Verdict) =>
    Effect.clockWith((clock) =>
      Effect.sync(() => {
        if (verdict.origin !== origin) adopt(verdict, clock.unsafeCurrentTimeMillis())
      })
    )
  return Effect.gen(function* () {
    if (Option.isSome(link.initial)) yield* adoptOne(link.initial.value)
    yield* Stream.runForEach(link.circuit.verdicts, adoptOne).pipe(Effect.forkScoped)
    yield* link.outbox.drain.pipe(Effect.forkScoped)
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
 *
 * @internal
 */
export const leaseProbe = (
  link: Link,
  options: { readonly permits: number; readonly leaseMillis: number; readonly now: number }
): Effect.Effect<Lease> =>
  link.circuit.acquireProbe(options).pipe(
    Effect.timeout(STORE_DEADLINE),
    Effect.either,
    Effect.map((answer): Lease => {
      if (Either.isLeft(answer)) return alone
      if (Option.isNone(answer.right)) return taken
      const token = answer.right.value
      return {
        _tag: "Leased",
        release: Effect.asVoid(Effect.forkDaemon(Effect.ignore(link.circuit.releaseProbe(token))))
      }
    })
  )
