/**
 * Limiters by name: one per dependency, host, route or tenant, made on first use with shared
 * defaults and per-name overrides, and bounded in number.
 *
 * @since 0.1.0
 */
import * as Edition from "@circuitry/core/Edition"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { InvalidLimiterOptions } from "./internal/errors.js"
import * as registry from "./internal/registry.js"
import type * as Limiter from "./Limiter.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface LimiterRegistry {
  /** The limiter called `name`, made on first use: same name, same limiter. */
  readonly get: (name: string) => Effect.Effect<Limiter.Limiter>
  /** The names held now, least recently used first. */
  readonly names: Effect.Effect<ReadonlyArray<string>>
  /** The limiters held now, least recently used first. Does not count as use. */
  readonly limiters: Effect.Effect<ReadonlyArray<Limiter.Limiter>>
}

/**
 * @since 0.1.0
 * @category tags
 */
export const LimiterRegistry: Edition.Key<LimiterRegistry, LimiterRegistry> = Edition.key<LimiterRegistry>(
  "@circuitry/limiter/LimiterRegistry"
)

/**
 * @since 0.1.0
 * @category models
 */
export interface RegistryOptions {
  /** Options of every limiter (their `name` is ignored: each limiter takes its own). */
  readonly defaults?: Limiter.Options | undefined
  /** Options for particular names, over the defaults. */
  readonly overrides?: Record<string, Limiter.Options> | undefined
  /**
   * The most limiters held at once. Past it, the least recently used limiter with nothing in
   * flight is dropped (a busy one only when none is idle; its calls in flight finish normally), so
   * a limiter per host or per tenant cannot grow memory without bound: a dropped limiter's metric
   * series leave the metric registry with it (its calls still in flight record none). Default:
   * unbounded.
   */
  readonly maxLimiters?: number | undefined
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make: (options?: RegistryOptions) => Effect.Effect<LimiterRegistry, InvalidLimiterOptions, Scope.Scope> =
  registry.make

/**
 * The registry as a layer: of the `LimiterRegistry` tag, or (as `BreakerRegistry.layer`) of a tag of
 * the application's, for a second registry beside the default one.
 *
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { Limit, LimiterRegistry } from "@circuitry/limiter"
 * import { Effect } from "effect"
 *
 * const RegistryLive = LimiterRegistry.layer({
 *   defaults: { limit: Limit.gradient2({ min: 2, max: 100 }) },
 *   overrides: { "legacy-billing": { limit: Limit.fixed(4), queue: { size: 16, timeout: "500 millis" } } },
 *   maxLimiters: 10_000
 * })
 *
 * const invoice = Effect.succeed("ok").pipe(LimiterRegistry.withLimiterFor("legacy-billing"))
 * const main = invoice.pipe(Effect.provide(RegistryLive))
 * ```
 */
export const layer: {
  (options?: RegistryOptions): Layer.Layer<LimiterRegistry, InvalidLimiterOptions>
  <I>(tag: Edition.Key<I, LimiterRegistry>, options?: RegistryOptions): Layer.Layer<I, InvalidLimiterOptions>
} = ((tagOrOptions?: unknown, options?: RegistryOptions) =>
  Edition.isKey(tagOrOptions)
    ? Edition.layerScoped(tagOrOptions as Edition.Key<unknown, LimiterRegistry>, make(options))
    : Edition.layerScoped(LimiterRegistry, make(tagOrOptions as RegistryOptions | undefined))) as typeof layer

/**
 * Runs an effect through the registry's limiter called `name`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const withLimiterFor =
  (name: string, options?: Limiter.CallOptions) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | Limiter.LimiterRejectedError, R | LimiterRegistry> =>
    Effect.flatMap(Edition.service(LimiterRegistry), (registry) =>
      Effect.flatMap(registry.get(name), (limiter) => limiter.execute(self, options))
    )
