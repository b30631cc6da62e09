/**
 * What a health route shows: the breakers of the registries it is given (by default the
 * `BreakerRegistry` in its context) and the breakers handed to it, values or tags; and what reading
 * them needs from the context. `HealthRoute.router`, `make` and `healthOf` take them.
 *
 * @since 0.2.0
 */
import * as Edition from "@circuitry/core/Edition"
import { BreakerRegistry, type CircuitBreaker } from "@circuitry/breaker"

/**
 * A breaker handed to the route: a value, or a tag whose breaker the route reads from its context
 * (any breaker, with or without a `timeout`).
 *
 * @since 0.2.0
 * @category sources
 */
export type BreakerSource =
  | CircuitBreaker.CircuitBreaker<unknown>
  // A tag's service type is invariant: any tag whose service is a breaker, with or without a timeout.
  | (Edition.Key<any, any> & { readonly Service: CircuitBreaker.CircuitBreaker<unknown> })

/**
 * A registry whose breakers the route lists: a value, or a tag read from the route's context (a
 * registry with timeouts lives under a tag of the application's).
 *
 * @since 0.2.0
 * @category sources
 */
export type RegistrySource =
  | BreakerRegistry.BreakerRegistry<unknown>
  | (Edition.Key<any, any> & { readonly Service: BreakerRegistry.BreakerRegistry<unknown> })

/**
 * Breakers handed to a route.
 *
 * @since 0.2.0
 * @category sources
 */
export type Breakers = ReadonlyArray<BreakerSource>

/**
 * Registries given to a route.
 *
 * @since 0.2.0
 * @category sources
 */
export type Registries = ReadonlyArray<RegistrySource>

/**
 * The registries a route lists when it is given none: the `BreakerRegistry` in its context.
 *
 * @since 0.2.0
 * @category sources
 */
export type DefaultRegistries = readonly [Edition.Key<BreakerRegistry.BreakerRegistry, BreakerRegistry.BreakerRegistry>]

/**
 * What reading the sources needs from the context: the service of each tag among them.
 *
 * @since 0.2.0
 * @category sources
 */
export type SourceContext<S> = S extends Edition.Key<infer I, any> ? I : never

/**
 * The breakers a route shows: every breaker of `registries` (default: the `BreakerRegistry` in the
 * context; `[]` for none) and every breaker in `breakers`, each once, sorted by name, read afresh
 * on every request. A breaker made with `CircuitBreaker.make` or `layer`, which no registry holds
 * (one with a `timeout`, say), is shown only when it is handed here.
 *
 * @since 0.2.0
 * @category sources
 */
export interface Sources<B extends Breakers = [], G extends Registries = DefaultRegistries> {
  /** Breakers the route shows beside its registries', values or tags. Default none. */
  readonly breakers?: B | undefined
  /** Registries whose breakers the route shows, values or tags. Default `[BreakerRegistry.BreakerRegistry]`. */
  readonly registries?: G | undefined
}

/**
 * The registries a route shows when it is given no `registries`: the `BreakerRegistry` in its
 * context. Pass it beside others to keep it (`registries: [...HealthSources.defaultRegistries, Other]`).
 *
 * @since 0.2.0
 * @category sources
 * @example
 * ```ts
 * import { HealthRoute, HealthSources } from "@circuitry/platform"
 *
 * const route = HealthRoute.router({ registries: HealthSources.defaultRegistries })
 * ```
 */
export const defaultRegistries: DefaultRegistries = [BreakerRegistry.BreakerRegistry]
