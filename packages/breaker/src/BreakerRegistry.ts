/**
 * Breakers by name: one per dependency, host or route, made on first use with shared defaults and
 * per-name overrides, and bounded in number.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import { dual } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as BreakerStore from "./BreakerStore.js"
import type * as CircuitBreaker from "./CircuitBreaker.js"
import * as internal from "./internal/circuitBreaker.js"
import { InvalidBreakerOptions } from "./internal/errors.js"
import * as Options from "./internal/options.js"
import * as Rules from "./internal/rules.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface BreakerRegistry {
  /** The breaker called `name`, made on first use: same name, same breaker. */
  readonly get: (name: string) => Effect.Effect<CircuitBreaker.CircuitBreaker>
  /** The names held now, least recently used first. */
  readonly names: Effect.Effect<ReadonlyArray<string>>
  /** The breakers held now, least recently used first. Does not count as use. */
  readonly breakers: Effect.Effect<ReadonlyArray<CircuitBreaker.CircuitBreaker>>
}

/**
 * @since 0.1.0
 * @category tags
 */
export const BreakerRegistry: Context.Tag<BreakerRegistry, BreakerRegistry> = Context.GenericTag<BreakerRegistry>(
  "@circuitry/breaker/BreakerRegistry"
)

/**
 * @since 0.1.0
 * @category models
 */
export interface RegistryOptions {
  /** Options of every breaker (their `name` is ignored: each breaker takes its own). */
  readonly defaults?: CircuitBreaker.Options | undefined
  /** Options for particular names, over the defaults. */
  readonly overrides?: Record<string, CircuitBreaker.Options> | undefined
  /**
   * The most breakers held at once. Past it, a closed breaker not used lately is dropped (second
   * chance: one used since it was last placed is passed over once), an open one only when none is
   * closed, with its metric series, so a breaker per host or per key cannot grow memory without
   * bound. Default: unbounded.
   */
  readonly maxBreakers?: number | undefined
}

/**
 * A held breaker. A `get` only stamps `used`, so a hit moves nothing; the map keeps entries in the
 * order they were placed, and eviction passes over (and places again, at the end) each entry used
 * since it was placed: a second chance, as in a CLOCK cache, in O(1) amortised per eviction.
 */
interface Entry {
  readonly breaker: internal.Breaker
  readonly scope: Scope.CloseableScope | undefined
  /** The tick of its last `get`. */
  used: number
  /** The tick at which it was put at the end of the map. */
  placed: number
}

const byUse = (a: Entry, b: Entry) => a.used - b.used

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (options?: RegistryOptions): Effect.Effect<BreakerRegistry, InvalidBreakerOptions, Scope.Scope> =>
  Effect.gen(function* () {
    const defaults = options?.defaults ?? {}
    const overrides = options?.overrides ?? {}
    const maxBreakers = options?.maxBreakers ?? Infinity
    if (maxBreakers !== Infinity) {
      const checked = Rules.check("maxBreakers", Rules.atLeastOne, maxBreakers)
      if (Either.isLeft(checked)) return yield* new InvalidBreakerOptions({ message: checked.left })
    }
    const optionsFor = (name: string): CircuitBreaker.Options => ({ ...defaults, ...overrides[name], name })
    // Validate everything now, so that `get` cannot fail later.
    const resolvedDefaults = yield* Options.validate(optionsFor("defaults"))
    const resolvedOverrides = new Map<string, Options.Resolved>()
    for (const name of Object.keys(overrides)) resolvedOverrides.set(name, yield* Options.validate(optionsFor(name)))
    const resolvedFor = (name: string) => Options.named(resolvedOverrides.get(name) ?? resolvedDefaults, name)
    /** The same, without the Schema check when the name is plainly valid (`get` makes breakers on the request path). */
    const resolvedLocal = (name: string): Options.Resolved => {
      const resolved = resolvedOverrides.get(name) ?? resolvedDefaults
      return name.length > 0 ? { ...resolved, name } : Either.getOrThrow(Options.named(resolved, name))
    }

    const scope = yield* Effect.scope
    // A breaker holds resources (fibers) only when it shares its state through a store.
    const shared = Option.isSome(yield* Effect.serviceOption(BreakerStore.BreakerStore))
    const context = yield* Effect.context<never>()
    const runtime = yield* Effect.runtime<never>()
    const entries = new Map<string, Entry>()
    const lock = yield* Effect.makeSemaphore(1)
    // The breakers' metric series go with the registry.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const entry of entries.values()) entry.breaker.release()
      })
    )

    let tick = 0

    /** The first closed entry not used since it was placed (an open one only when none is closed). */
    const victimName = (): string | undefined => {
      let open: string | undefined
      for (const [name, entry] of entries) {
        if (entry.used > entry.placed) {
          // Used since it was placed: a second chance, at the end (this loop meets it again).
          entries.delete(name)
          entry.placed = ++tick
          entries.set(name, entry)
          continue
        }
        if (entry.breaker.machine.tag === "Closed") return name
        open ??= name
      }
      return open
    }

    /** Drops one breaker; returns its scope to close, if it has one (a shared breaker's fibers). */
    const dropOne = (): Scope.CloseableScope | undefined => {
      const victim = victimName()
      if (victim === undefined) return undefined
      const entry = entries.get(victim)!
      entries.delete(victim)
      entry.breaker.release()
      return entry.scope
    }

    const evictOne = Effect.suspend(() => {
      const scope = dropOne()
      return scope === undefined ? Effect.void : Scope.close(scope, Exit.void)
    })

    /**
     * Without a store a breaker holds no resources and is made synchronously, so a miss needs no
     * lock (a synchronous step is atomic) and no fiber: this is the request path of a registry
     * keyed by host or tenant.
     */
    const createLocal = (name: string): internal.Breaker => {
      while (entries.size >= maxBreakers) dropOne()
      const breaker = internal.makeLocal(resolvedLocal(name), runtime)
      const now = ++tick
      entries.set(name, { breaker, scope: undefined, used: now, placed: now })
      return breaker
    }

    const create = (name: string) =>
      Effect.gen(function* () {
        const existing = entries.get(name)
        if (existing !== undefined) return existing.breaker
        while (entries.size >= maxBreakers) yield* evictOne
        const own = shared ? yield* Scope.fork(scope, ExecutionStrategy.sequential) : undefined
        const breaker = yield* Effect.flatMap(resolvedFor(name), internal.makeResolved).pipe(
          Scope.extend(own ?? scope),
          Effect.provide(context),
          Effect.orDie // validated above
        )
        const now = ++tick
        entries.set(name, { breaker, scope: own, used: now, placed: now })
        return breaker
      })

    return BreakerRegistry.of({
      get: (name) =>
        Effect.suspend(() => {
          const entry = entries.get(name)
          if (entry !== undefined) {
            entry.used = ++tick
            return Effect.succeed(entry.breaker)
          }
          return shared ? lock.withPermits(1)(create(name)) : Effect.succeed(createLocal(name))
        }),
      names: Effect.sync(() =>
        Array.from(entries.values())
          .sort(byUse)
          .map((entry) => entry.breaker.name)
      ),
      breakers: Effect.sync(() =>
        Array.from(entries.values())
          .sort(byUse)
          .map((entry) => entry.breaker)
      )
    })
  })

/**
 * @since 0.1.0
 * @category layers
 * @example
 * ```ts
 * import { BreakerRegistry, Policy } from "@circuitry/breaker"
 * import { Effect } from "effect"
 *
 * const RegistryLive = BreakerRegistry.layer({
 *   defaults: { policy: Policy.consecutiveFailures(5), openFor: "30 seconds" },
 *   overrides: { "payment-gateway": { openFor: "2 minutes" } },
 *   maxBreakers: 10_000
 * })
 *
 * const charge = Effect.succeed("ok").pipe(BreakerRegistry.withBreakerFor("payment-gateway"))
 * const main = charge.pipe(Effect.provide(RegistryLive))
 * ```
 */
export const layer = (options?: RegistryOptions): Layer.Layer<BreakerRegistry, InvalidBreakerOptions> =>
  Layer.scoped(BreakerRegistry, make(options))

/**
 * Runs an effect through the registry's breaker called `name`. Data-first and data-last.
 *
 * @since 0.1.0
 * @category combinators
 * @example
 * ```ts
 * import { BreakerRegistry } from "@circuitry/breaker"
 * import { Effect } from "effect"
 *
 * const dataLast = Effect.succeed("ok").pipe(BreakerRegistry.withBreakerFor("db"))
 * const dataFirst = BreakerRegistry.withBreakerFor(Effect.succeed("ok"), "db")
 * ```
 */
export const withBreakerFor: {
  (
    name: string
  ): <A, E, R>(
    self: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | CircuitBreaker.BreakerOpenError, R | BreakerRegistry>
  <A, E, R>(
    self: Effect.Effect<A, E, R>,
    name: string
  ): Effect.Effect<A, E | CircuitBreaker.BreakerOpenError, R | BreakerRegistry>
} = dual(
  2,
  <A, E, R>(
    self: Effect.Effect<A, E, R>,
    name: string
  ): Effect.Effect<A, E | CircuitBreaker.BreakerOpenError, R | BreakerRegistry> =>
    Effect.flatMap(BreakerRegistry, (registry) =>
      Effect.flatMap(registry.get(name), (breaker) => breaker.execute(self))
    )
)
