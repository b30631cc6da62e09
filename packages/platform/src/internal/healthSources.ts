/**
 * The breakers a health route shows: those of its registries (by default the `BreakerRegistry` in
 * the context) and those handed to it, values or tags, each once (a breaker handed and held by a
 * registry too is one breaker), read afresh on every request: a registry makes and drops breakers.
 */
import * as Edition from "@circuitry/core/Edition"
import type { BreakerRegistry, CircuitBreaker } from "@circuitry/breaker"
import * as Effect from "effect/Effect"
import { defaultRegistries } from "../HealthSources.js"

/** What a route is handed (its public types are in ../HealthRoute.ts). @internal */
export interface Sources {
  readonly breakers?: ReadonlyArray<unknown> | undefined
  readonly registries?: ReadonlyArray<unknown> | undefined
}

type Breaker = CircuitBreaker.CircuitBreaker<unknown>

/** Every breaker of the sources, registries' first (least recently used first), then those handed. @internal */
export type List<R> = Effect.Effect<ReadonlyArray<Breaker>, never, R>

/** @internal */
export const list = <R>(sources: Sources | undefined): List<R> => {
  const registries = sources?.registries ?? defaultRegistries
  const breakers = sources?.breakers ?? []
  return Effect.gen(function* () {
    const seen = new Set<Breaker>()
    for (const source of registries) {
      const registry = Edition.isKey(source)
        ? yield* source as Edition.Key<unknown, BreakerRegistry.BreakerRegistry<unknown>>
        : (source as BreakerRegistry.BreakerRegistry<unknown>)
      for (const breaker of yield* registry.breakers) seen.add(breaker)
    }
    for (const source of breakers) {
      seen.add(Edition.isKey(source) ? yield* source as Edition.Key<unknown, Breaker> : (source as Breaker))
    }
    return Array.from(seen)
  }) as List<R>
}
