import * as Predicate from "effect/Predicate"

/** @internal */
export const TypeId: unique symbol = Symbol.for("@circuitry/chaos/Report")

/** @internal */
export interface Figures {
  readonly calls: number
  readonly failures: number
  readonly p50: number
  readonly p99: number
  readonly counters: Readonly<Record<string, number>>
}

/** @internal */
export interface Second extends Figures {
  readonly second: number
}

/** @internal */
export interface Report {
  readonly [TypeId]: TypeId
  readonly seed: number
  readonly durationMillis: number
  readonly seconds: ReadonlyArray<Second>
  readonly total: Figures
}

/** @internal */
export type TypeId = typeof TypeId

/** @internal */
export const isReport = (u: unknown): u is Report => Predicate.hasProperty(u, TypeId)
