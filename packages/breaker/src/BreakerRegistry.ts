/**
 * Breakers by name: one per dependency, host or route, made on first use with shared defaults and
 * per-name overrides, and bounded in number.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import { dual, identity } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import type * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as BreakerStore from "./BreakerStore.js"
import type * as CircuitBreaker from "./CircuitBreaker.js"
import * as internal from "./internal/circuitBreaker.js"
import * as Ejection from "./internal/ejection.js"
import { InvalidBreakerOptions } from "./internal/errors.js"
import * as LiveConfig from "./internal/liveConfig.js"
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
  /**
   * A queue of the trips `maxOpen` refuses, one per spell (see `RegistryOptions.maxOpen`),
   * subscribed when this effect returns.
   */
  readonly cappedTrips: Effect.Effect<Queue.Dequeue<CappedTrip>, never, Scope.Scope>
}

/**
 * @since 0.1.0
 * @category tags
 */
export const BreakerRegistry: Context.Tag<BreakerRegistry, BreakerRegistry> = Context.GenericTag<BreakerRegistry>(
  "@circuitry/breaker/BreakerRegistry"
)

/**
 * A trip that `maxOpen` refused: the breaker's policy said open, and it stayed closed.
 *
 * @since 0.1.0
 * @category models
 */
export interface CappedTrip {
  readonly breaker: string
  /** When (epoch milliseconds, Effect Clock). */
  readonly at: number
  /** The registry's breakers open (Open or HalfOpen) then. */
  readonly open: number
  /** The most that may be open then (a fraction, applied to the breakers held then). */
  readonly maxOpen: number
  /** The breakers the registry held then. */
  readonly breakers: number
}

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
  /**
   * The ejection cap, as Envoy's `max_ejection_percent`: at most this many (a whole number >= 1)
   * or this share (`{ fraction }`, 0 < fraction <= 1, of the breakers held now, rounded down, at
   * least 1) of the registry's breakers open at once, so that a bad deploy of the caller (every call
   * failing, whichever upstream it goes to) cannot eject every upstream. Default: no cap.
   *
   * - Open means Open or HalfOpen. Isolated does not count: an operator isolating circuits should
   *   not switch off the automatic ejection of the rest.
   * - Past the cap, a closed breaker whose policy trips stays Closed (its calls go through) and keeps
   *   its window. The refusal is reported once per spell (until its policy stops tripping, or it
   *   moves): a `CappedTrip` on `cappedTrips`, the counter `circuitry_breaker_trips_capped_total`, a
   *   warning annotated with `breaker`; and `snapshot.capped` is `true` for as long as it lasts.
   * - When an open breaker closes (or is isolated, or dropped), the next call of a capped breaker
   *   whose policy still trips opens it.
   * - Only a breaker's own trip is capped: a verdict adopted from a shared store (the fleet decides:
   *   its quorum) and a failed half-open probe are not, and both count as open.
   */
  readonly maxOpen?: number | { readonly fraction: number } | undefined
  /**
   * Live configuration: each value is applied to the breakers held, in place. A value is taken over
   * the layer's options field by field (`defaults`, `overrides`, `maxBreakers`, `maxOpen`; what it
   * leaves out is the layer's) and replaces the value before it. A breaker keeps its state and its
   * window: 30 failures in a failure-rate window of 100 calls stay there under a new threshold (judged
   * at the next call); a smaller count window keeps the most recent calls that fit, a shorter time
   * window what is still inside it; a window of another kind starts empty. An open episode keeps its
   * `until`; the next one uses the new `openFor`. A value that breaks a rule is reported (a warning
   * with the `InvalidBreakerOptions`, and `circuitry_breaker_registry_configs_total{outcome="rejected"}`)
   * and ignored: the config before it stays. A stream that fails is reported; the last config stays.
   * `config` inside a value is ignored. See `configFromJson` for a config kept as JSON in a shared place.
   */
  readonly config?: Stream.Stream<RegistryOptions, unknown> | undefined
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

/** Breakers a live config moves in one synchronous step. */
const APPLY_SLICE = 1_000

/**
 * Lets timers and I/O run. `Effect.yieldNow` lets other fibers run but, with nothing else scheduled,
 * goes on in a microtask: a live config over 100,000 breakers held the event loop for 0.3-0.7 s.
 * A timer, not the Clock: virtual time (TestClock) must not stop it.
 */
const yieldToEventLoop: Effect.Effect<void> = Effect.async<void>((resume) => {
  const timer = setTimeout(() => resume(Effect.void), 0)
  return Effect.sync(() => clearTimeout(timer))
})

const isStream = (u: unknown): u is Stream.Stream<unknown, unknown> =>
  typeof u === "object" && u !== null && Stream.StreamTypeId in u

/**
 * Trips refused by a registry's `maxOpen`, a counter (one per spell; see `RegistryOptions.maxOpen`).
 * Not tagged by breaker: names are unbounded (a breaker per host); the warning and the
 * `CappedTrip` name it.
 *
 * @since 0.1.0
 * @category metrics
 */
export const tripsCapped: Metric.Metric.Counter<number> = Metric.counter("circuitry_breaker_trips_capped_total", {
  incremental: true,
  description: "Trips a breaker registry's maxOpen refused (the breaker stayed closed), once per spell"
})

/**
 * Values of a registry's live `config` stream, a counter tagged `outcome`: `applied` or `rejected`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const configsTotal: Metric.Metric.Counter<number> = LiveConfig.configsTotal

const rejectedConfigs = Metric.tagged(configsTotal, "outcome", "rejected")
const appliedConfigs = Metric.tagged(configsTotal, "outcome", "applied")

/**
 * Makes a registry in the current scope (its breakers, and its `config` stream's fiber, last as
 * long as it does). Every option is validated here, into `InvalidBreakerOptions`.
 *
 * @since 0.1.0
 * @category constructors
 * @example
 * ```ts
 * import { BreakerRegistry, Policy } from "@circuitry/breaker"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const registry = yield* BreakerRegistry.make({
 *     defaults: { policy: Policy.consecutiveFailures(5) },
 *     maxOpen: { fraction: 0.3 } // at most 30% of the hosts ejected at once
 *   })
 *   const breaker = yield* registry.get("10.0.0.7:8080")
 *   return (yield* breaker.snapshot).capped // true while the cap keeps it closed
 * }).pipe(Effect.scoped)
 * ```
 */
export const make = (options?: RegistryOptions): Effect.Effect<BreakerRegistry, InvalidBreakerOptions, Scope.Scope> =>
  Effect.gen(function* () {
    const base: Readonly<Record<string, unknown>> = Rules.isRecord(options) ? options : {}
    // Validate everything now, so that `get` cannot fail later.
    let config = yield* LiveConfig.resolve(options)

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

    const capped = yield* PubSub.unbounded<CappedTrip>()
    const reportCapped = (trip: CappedTrip): void => {
      Runtime.runSync(runtime)(
        Effect.logWarning(
          `circuit "${trip.breaker}": its policy trips, but ${trip.open} of ${trip.breakers} breakers are open (maxOpen ${trip.maxOpen}): it stays closed`
        ).pipe(Effect.annotateLogs({ breaker: trip.breaker }), Effect.zipRight(Metric.increment(tripsCapped)))
      )
      capped.unsafeOffer(trip)
    }
    const ejection = new Ejection.Ejection(config.maxOpen, () => entries.size, reportCapped)
    /** Only a registry with a cap gives its breakers a gate (an object per breaker). */
    const joinCap = (breaker: internal.Breaker) => {
      if (ejection.limit !== undefined) ejection.join(breaker)
    }

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
      ejection.leave(entry.breaker)
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
      while (entries.size >= config.maxBreakers) dropOne()
      const breaker = internal.makeLocal(LiveConfig.resolvedFor(config, name), runtime)
      const now = ++tick
      entries.set(name, { breaker, scope: undefined, used: now, placed: now })
      joinCap(breaker)
      return breaker
    }

    const create = (name: string) =>
      Effect.gen(function* () {
        const existing = entries.get(name)
        if (existing !== undefined) return existing.breaker
        while (entries.size >= config.maxBreakers) yield* evictOne
        const own = shared ? yield* Scope.fork(scope, ExecutionStrategy.sequential) : undefined
        const breaker = yield* internal.makeResolved(LiveConfig.resolvedFor(config, name)).pipe(
          Scope.extend(own ?? scope),
          Effect.provide(context),
          Effect.orDie // validated above
        )
        const now = ++tick
        entries.set(name, { breaker, scope: own, used: now, placed: now })
        joinCap(breaker)
        return breaker
      })

    /** Applies one value of the live config stream (or fails, changing nothing). */
    const apply = (value: unknown) =>
      Effect.gen(function* () {
        const next = yield* LiveConfig.resolve(LiveConfig.over(base, value))
        const now = yield* Clock.currentTimeMillis
        const before = config
        config = next
        ejection.limit = next.maxOpen
        for (const entry of entries.values()) joinCap(entry.breaker)
        // In slices, so that a registry of 100,000 breakers does not hold every caller up at once.
        // A breaker made meanwhile runs on `next` already; one dropped meanwhile is passed over.
        const held = Array.from(entries)
        for (let i = 0; i < held.length; i++) {
          if (i > 0 && i % APPLY_SLICE === 0) yield* yieldToEventLoop
          const [name, entry] = held[i]!
          if (entries.get(name) !== entry) continue
          LiveConfig.reconfigure(
            entry.breaker,
            LiveConfig.optionsOf(before, name),
            LiveConfig.optionsOf(next, name),
            runtime,
            now
          )
        }
        // A lower maxBreakers: down to it now.
        while (entries.size > next.maxBreakers) yield* evictOne
      })

    const follow = (stream: Stream.Stream<RegistryOptions, unknown>) =>
      Stream.runForEach(stream, (value) =>
        apply(value).pipe(
          Effect.matchCauseEffect({
            onSuccess: () => Metric.increment(appliedConfigs),
            onFailure: (cause) =>
              Effect.logWarning(
                "breaker registry: a config value was rejected; the config before it stays",
                cause
              ).pipe(Effect.zipRight(Metric.increment(rejectedConfigs)))
          }),
          // With a store, `create` waits on the store under the lock: a config is not applied meanwhile.
          shared ? lock.withPermits(1) : identity
        )
      ).pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.void
            : Effect.logWarning("breaker registry: the config stream failed; the last config stays", cause)
        )
      )
    const configStream = Rules.isRecord(options) ? options["config"] : undefined
    if (configStream !== undefined) {
      if (!isStream(configStream)) {
        return yield* new InvalidBreakerOptions({
          message: `config must be a Stream of registry options, got ${Rules.show(configStream)}`
        })
      }
      yield* Effect.forkIn(follow(configStream as Stream.Stream<RegistryOptions, unknown>), scope)
    }

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
      ),
      cappedTrips: PubSub.subscribe(capped)
    })
  })

/**
 * Reads a JSON document of registry options, as a live `config` kept as text would hold it.
 * Policies are written as data, by `_tag`: `{ "_tag": "ConsecutiveFailures", "threshold": 5 }`,
 * `{ "_tag": "FailureRate", "threshold": 0.5, "minimumCalls": 20, "window": { "_tag": "CountWindow",
 * "size": 100 } }` (a window is `Policy.countWindow`'s or `Policy.timeWindow`'s value; a duration is
 * a string such as `"30 seconds"` or milliseconds). `isFailure` and schedules cannot be written in
 * JSON. Fails only on text that is not JSON; what the document holds is checked when a registry
 * applies it.
 *
 * @since 0.1.0
 * @category config
 * @example
 * ```ts
 * import { BreakerRegistry } from "@circuitry/breaker"
 *
 * const options = BreakerRegistry.parseConfig(
 *   '{ "defaults": { "policy": { "_tag": "ConsecutiveFailures", "threshold": 3 } }, "maxOpen": { "fraction": 0.3 } }'
 * )
 * ```
 */
export const parseConfig: (text: string) => Either.Either<RegistryOptions, InvalidBreakerOptions> =
  LiveConfig.parse as (text: string) => Either.Either<RegistryOptions, InvalidBreakerOptions>

/**
 * A live `config` kept as JSON (see `parseConfig`) under one key that every member of a fleet
 * reads, so that one change reaches the fleet: `load` reads the key (`CacheStore.get(key)` of
 * `@circuitry/redis`, a SQL row, a file), at once and then every `every` (default 5 seconds), and
 * the document is emitted when it changed. A key that is gone emits `{}`: the layer's options
 * again. A document that is not JSON is reported and skipped; a read that fails is reported once
 * per outage and tried again at the next tick; the config before stays. Each member sees a change
 * within `every`. A bad `every` fails the stream with `InvalidBreakerOptions` (the registry reports it).
 *
 * @since 0.1.0
 * @category config
 * @example
 * ```ts
 * import { BreakerRegistry, Policy } from "@circuitry/breaker"
 * import { Effect, Option, Ref } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   // Here a Ref; in a fleet, a key every member reads (e.g. a Redis CacheStore's `get("breakers/config")`).
 *   const key = yield* Ref.make(Option.some('{ "maxOpen": { "fraction": 0.3 } }'))
 *   const registry = yield* BreakerRegistry.make({
 *     defaults: { policy: Policy.consecutiveFailures(5) },
 *     config: BreakerRegistry.watchConfig(Ref.get(key), { every: "10 seconds" })
 *   })
 *   return yield* registry.get("payments.example")
 * }).pipe(Effect.scoped)
 * ```
 */
export const watchConfig = <E, R>(
  load: Effect.Effect<Option.Option<string>, E, R>,
  options?: { readonly every?: Duration.DurationInput | undefined }
): Stream.Stream<RegistryOptions, InvalidBreakerOptions, R> =>
  Either.match(Rules.check("every", Rules.durationAboveZero, options?.every ?? "5 seconds"), {
    onLeft: (message) => Stream.fail(new InvalidBreakerOptions({ message: `watchConfig: ${message}` })),
    onRight: (millis) => LiveConfig.watch(load, millis) as Stream.Stream<RegistryOptions, never, R>
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
 *   maxBreakers: 10_000,
 *   maxOpen: { fraction: 0.3 }
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
