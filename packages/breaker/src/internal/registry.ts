/**
 * The registry behind ../BreakerRegistry.ts: breakers by name, made on first use from options
 * resolved once, bounded in number (second-chance eviction), capped in how many are open
 * (ejection.ts), and moved in place by a live config (liveConfig.ts).
 */
import * as Edition from "@circuitry/core/Edition"
import * as MetricSeries from "@circuitry/core/MetricSeries"
import * as Runtime from "#runtime"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { identity } from "effect/Function"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as BR from "../BreakerRegistry.js"
import * as BreakerStore from "../BreakerStore.js"
import * as internal from "./circuitBreaker.js"
import * as Ejection from "./ejection.js"
import { InvalidBreakerOptions } from "./errors.js"
import * as LiveConfig from "./liveConfig.js"
import * as Rules from "./rules.js"

/** A registry, whatever its breakers' timeout type. @internal */
export type Registry = BR.BreakerRegistry<unknown>
type CappedTrip = BR.CappedTrip

/**
 * A held breaker. A `get` only stamps `used`, so a hit moves nothing; the map keeps entries in the
 * order they were placed, and eviction passes over (and places again, at the end) each entry used
 * since it was placed: a second chance, as in a CLOCK cache, in O(1) amortised per eviction.
 */
interface Entry {
  readonly breaker: internal.Breaker
  readonly scope: Edition.Closeable | undefined
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
const yieldToEventLoop: Effect.Effect<void> = Edition.callback<void, never>((resume) => {
  const timer = setTimeout(() => resume(Effect.void), 0)
  return Effect.sync(() => clearTimeout(timer))
})

const isStream = (u: unknown): u is Stream.Stream<unknown, unknown> => Runtime.isStream(u)

/** @internal */
export const tripsCapped = MetricSeries.counter({
  name: "circuitry_breaker_trips_capped_total",
  description: "Trips a breaker registry's maxOpen refused (the breaker stayed closed), once per spell"
})
const countTripCapped = Edition.counterSeries(tripsCapped, {})

const rejectedConfigs = Edition.counterSeries(LiveConfig.configsTotal, { outcome: "rejected" })
const appliedConfigs = Edition.counterSeries(LiveConfig.configsTotal, { outcome: "applied" })

/** @internal */
export const make = (
  options?: BR.TimeoutRegistryOptions
): Effect.Effect<Registry, InvalidBreakerOptions, Scope.Scope> =>
  Effect.gen(function* () {
    const base: Readonly<Record<string, unknown>> = Rules.isRecord(options) ? options : {}
    // What the registry's type says, decided once: a live config cannot add BreakerTimeoutError to it.
    const timeouts = LiveConfig.carriesTimeout(options)
    // Validate everything now, so that `get` cannot fail later.
    let config = yield* LiveConfig.resolve(options, timeouts)

    const scope = yield* Effect.scope
    // A breaker holds resources (fibers) only when it shares its state through a store.
    const shared = Option.isSome(yield* Effect.serviceOption(BreakerStore.BreakerStore))
    const context = yield* Effect.context<never>()
    const runner = yield* Runtime.runner
    const entries = new Map<string, Entry>()
    const lock = yield* Edition.makeSemaphore(1)
    // The breakers' metric series go with the registry.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const entry of entries.values()) entry.breaker.release()
      })
    )

    const capped = yield* PubSub.unbounded<CappedTrip>()
    const reportCapped = (trip: CappedTrip): void => {
      Runtime.runSync(
        runner,
        Effect.logWarning(
          `circuit "${trip.breaker}": its policy trips, but ${trip.open} of ${trip.breakers} breakers are open (maxOpen ${trip.maxOpen}): it stays closed`
        ).pipe(Effect.annotateLogs({ breaker: trip.breaker }))
      )
      countTripCapped(1)
      Edition.publishUnsafe(capped, trip)
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
    const dropOne = (): Edition.Closeable | undefined => {
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
      const breaker = internal.makeLocal(LiveConfig.resolvedFor(config, name), runner)
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
        const own = shared ? yield* Edition.forkScope(scope) : undefined
        const breaker = yield* internal.makeResolved(LiveConfig.resolvedFor(config, name)).pipe(
          Edition.inScope(own ?? scope),
          Effect.provide(context),
          // Validated above. The one failure left is a `sharing.quorum` on a store that offers no
          // fleet membership (sharing.ts): a defect here, since `get` cannot fail, that names it.
          Effect.orDie
        )
        const now = ++tick
        entries.set(name, { breaker, scope: own, used: now, placed: now })
        joinCap(breaker)
        return breaker
      })

    /** Applies one value of the live config stream (or fails, changing nothing). */
    const apply = (value: unknown) =>
      Effect.gen(function* () {
        const next = yield* LiveConfig.resolve(LiveConfig.over(base, value), timeouts)
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
            runner,
            now
          )
        }
        // A lower maxBreakers: down to it now.
        while (entries.size > next.maxBreakers) yield* evictOne
      })

    const follow = (stream: Stream.Stream<unknown, unknown>) =>
      Stream.runForEach(stream, (value) =>
        apply(value).pipe(
          Effect.matchCauseEffect({
            onSuccess: () => Effect.sync(() => appliedConfigs(1)),
            onFailure: (cause) =>
              Effect.logWarning(
                "breaker registry: a config value was rejected; the config before it stays",
                cause
              ).pipe(Effect.andThen(Effect.sync(() => rejectedConfigs(1))))
          }),
          // With a store, `create` waits on the store under the lock: a config is not applied meanwhile.
          shared ? lock.withPermits(1) : identity
        )
      ).pipe((self) =>
        Edition.catchCause(self, (cause) =>
          Edition.hasInterruptsOnly(cause)
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
      yield* Effect.forkIn(follow(configStream as Stream.Stream<unknown, unknown>), scope)
    }

    return {
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
    } satisfies Registry
  })
