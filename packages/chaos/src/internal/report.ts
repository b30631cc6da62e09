import * as Predicate from "effect/Predicate"
import type { Report } from "../Scenario.js"

/** @internal */
export const TypeId: unique symbol = Symbol.for("@circuitry/chaos/Report")

/** @internal */
export const isReport = (u: unknown): u is Report => Predicate.hasProperty(u, TypeId)
