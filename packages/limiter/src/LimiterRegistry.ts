/**
 * Limiters by name: one per dependency, host, route or tenant, made on first use with shared
 * defaults and per-name overrides, and bounded in number.
 *
 * @since 0.1.0
 */
import * as Edition from "@circuitry/core/Edition"
import { show } from "@circuitry/core/OptionRules"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { InvalidLimiterOptions } from "./internal/errors.js"
import * as internal from "./internal/limiter.js"
import * as Series from "./internal/series.js"
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
export const make = (options?: RegistryOptions): Effect.Effect<LimiterRegistry, InvalidLimiterOptions, Scope.Scope> =>
  Effect.gen(function* () {
    const defaults = options?.defaults ?? {}
    const overrides = options?.overrides ?? {}
    const maxLimiters = options?.maxLimiters ?? Infinity
    if (maxLimiters !== Infinity && !(Number.isInteger(maxLimiters) && maxLimiters >= 1)) {
      return yield* new InvalidLimiterOptions({
        message: `maxLimiters must be a whole number >= 1, got ${show(maxLimiters)}`
      })
    }
    const optionsFor = (name: string): Limiter.Options => ({ ...defaults, ...overrides[name], name })
    // Validate everything now, so that `get` cannot fail later.
    const resolvedDefaults = yield* internal.resolve(optionsFor("defaults"))
    const resolvedOverrides = new Map<string, internal.Resolved>()
    for (const name of Object.keys(overrides)) resolvedOverrides.set(name, yield* internal.resolve(optionsFor(name)))
    const entries = new Map<string, Limiter.Limiter>()
    // Series go to the metric registry of the fiber that makes the registry; they leave it with
    // their limiter, and every one still held leaves when the registry's scope closes.
    const metrics = yield* Series.currentRegistry
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const limiter of entries.values()) internal.release(limiter)
      })
    )

    const evictOne = () => {
      let victim: string | undefined
      for (const [name, limiter] of entries) {
        if (internal.isIdle(limiter)) {
          victim = name
          break
        }
      }
      victim ??= entries.keys().next().value
      if (victim === undefined) return
      internal.release(entries.get(victim)!)
      entries.delete(victim)
    }

    // Making a limiter is synchronous, so two first uses of a name cannot both make one.
    const create = (name: string): Limiter.Limiter => {
      while (entries.size >= maxLimiters) evictOne()
      const resolved = resolvedOverrides.get(name) ?? { ...resolvedDefaults, name }
      const limiter = internal.unsafeMake(resolved, metrics)
      entries.set(name, limiter)
      return limiter
    }

    const registry: LimiterRegistry = {
      get: (name) =>
        Effect.sync(() => {
          const limiter = entries.get(name)
          if (limiter === undefined) return create(name)
          // Most recently used goes last.
          entries.delete(name)
          entries.set(name, limiter)
          return limiter
        }),
      names: Effect.sync(() => Array.from(entries.keys())),
      limiters: Effect.sync(() => Array.from(entries.values()))
    }
    return registry
  })

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
