/**
 * Repair traffic: one mechanism, a `FiberRef` that marks the fiber.
 *
 * `repairing(self)` sets it while `self` runs, so everything inside is repair traffic, and a breaker
 * reads it when it admits a call. A breaker given `repairing(self)` directly (`withBreaker(repairing(x))`)
 * would read the FiberRef before `repairing` sets it, so `repairing` keeps its inner effect, and the
 * breaker turns `withBreaker(repairing(x))` into `repairing(withBreaker(x))`: the FiberRef is still
 * the only thing a decision reads.
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"

/** @internal */
export const repairTraffic: FiberRef.FiberRef<boolean> = FiberRef.unsafeMake(false)

/** Where an effect made by `repairing` keeps the effect it marks. */
const RepairOf: unique symbol = Symbol.for("@circuitry/breaker/repairing")

/** @internal */
export const repairing = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Object.assign(Effect.locally(self, repairTraffic, true), { [RepairOf]: self })

/** The effect that `repairing` marked, when `self` was made by `repairing`. @internal */
export const repairedEffect = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> | undefined =>
  (self as { readonly [RepairOf]?: Effect.Effect<A, E, R> })[RepairOf]
