/**
 * Repair traffic: one mechanism, a per-fiber mark (a `FiberRef` on Effect 3, a `Context.Reference`
 * on 4: runtime.effect3.ts / runtime.effect4.ts).
 *
 * `repairing(self)` sets it while `self` runs, so everything inside is repair traffic, and a breaker
 * reads it when it admits a call. A breaker given `repairing(self)` directly (`withBreaker(repairing(x))`)
 * would read the mark before `repairing` sets it, so `repairing` keeps its inner effect, and the
 * breaker turns `withBreaker(repairing(x))` into `repairing(withBreaker(x))`: the mark is still
 * the only thing a decision reads.
 */
import * as Runtime from "#runtime"
import type * as Effect from "effect/Effect"

/** The mark: true on repair traffic. @internal */
export const repairTraffic = Runtime.repairTraffic

/** Whether the fiber runs repair traffic. @internal */
export const isRepair = Runtime.isRepair

/** Where an effect made by `repairing` keeps the effect it marks. */
const RepairOf: unique symbol = Symbol.for("@circuitry/breaker/repairing")

/** @internal */
export const repairing = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Object.assign(Runtime.markRepair(self), { [RepairOf]: self })

/** The effect that `repairing` marked, when `self` was made by `repairing`. @internal */
export const repairedEffect = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> | undefined =>
  (self as { readonly [RepairOf]?: Effect.Effect<A, E, R> })[RepairOf]
