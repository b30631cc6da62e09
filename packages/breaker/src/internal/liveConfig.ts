/**
 * A registry's options, resolved (validated once, into `InvalidBreakerOptions`), and the live
 * config: a stream of options applied to the breakers the registry holds, in place.
 *
 * - Each value on the stream is taken over the layer's options, field by field (`defaults`,
 *   `overrides`, `maxBreakers`, `maxOpen`): a field it gives replaces the layer's, a field it leaves
 *   out (or gives as `undefined`) is the layer's. A value replaces the value before it; values do
 *   not accumulate. `config` in a value is ignored.
 * - A value that breaks a rule is reported (a warning with the typed error, and the
 *   `circuitry_breaker_registry_configs_total{outcome="rejected"}` counter) and ignored: the
 *   config before it stays. A stream that fails or dies is reported once; the last config stays.
 * - A breaker keeps its state and its window (tracker.ts `adopt`): a failure-rate window of 100
 *   calls with 30 failures holds them under a new threshold; a smaller count window keeps the most
 *   recent calls that fit, a shorter time window the buckets still inside it. A window of another
 *   kind (count to time, consecutive failures to a failure rate) starts empty. A new threshold is
 *   judged at the next call (no call, no verdict: as the policy does everywhere).
 * - An open episode keeps its `until`; the next one waits by the new `openFor`. A schedule that
 *   did not change keeps its place; a new one starts from its first delay.
 * - A `timeout` is taken only by a registry made with one (`carriesTimeout`): the registry's type
 *   says whether its calls may fail with `BreakerTimeoutError`, and a config cannot change a type.
 *   A config kept as JSON is read and checked in jsonConfig.ts.
 */
import * as Edition from "@circuitry/core/Edition"
import * as MetricSeries from "@circuitry/core/MetricSeries"
import type * as Runtime from "#runtime"
import * as Effect from "effect/Effect"
import type * as CB from "../CircuitBreaker.js"
import type { Breaker } from "./breaker.js"
import * as Ejection from "./ejection.js"
import { InvalidBreakerOptions } from "./errors.js"
import * as Options from "./options.js"
import * as Rules from "./rules.js"

/** What the registry runs on. @internal */
export interface Resolved {
  readonly defaults: Options.Resolved
  readonly overrides: ReadonlyMap<string, Options.Resolved>
  readonly maxBreakers: number
  readonly maxOpen: Ejection.Limit | undefined
}

/** The fields a value of the config stream may set. @internal */
export const FIELDS = ["defaults", "overrides", "maxBreakers", "maxOpen"] as const

/** @internal */
export const configsTotal = MetricSeries.counter({
  name: "circuitry_breaker_registry_configs_total",
  description: "Values of a breaker registry's live config stream, by outcome: applied, rejected"
})

/** A config value taken over the layer's options (see the module's comment). @internal */
export const over = (base: Readonly<Record<string, unknown>>, next: unknown): unknown => {
  if (!Rules.isRecord(next)) return next // not options at all: `resolve` says so
  const merged: Record<string, unknown> = {}
  for (const field of FIELDS) {
    const value = next[field] !== undefined ? next[field] : base[field]
    if (value !== undefined) merged[field] = value
  }
  return merged
}

const fail = (message: string) => new InvalidBreakerOptions({ message })

/**
 * Checks a registry's options, every breaker option included (so that `get` cannot fail later).
 * Nothing is trusted: a live config may come from JSON. `timeouts`: whether the registry's type
 * has `BreakerTimeoutError` (see `carriesTimeout`); without it a `timeout` is refused.
 *
 * @internal
 */
export const resolve = (input: unknown, timeouts: boolean): Effect.Effect<Resolved, InvalidBreakerOptions> =>
  Effect.gen(function* () {
    if (input !== undefined && !Rules.isRecord(input)) {
      return yield* fail(`registry options must be an object, got ${Rules.show(input)}`)
    }
    const o: Readonly<Record<string, unknown>> = input ?? {}
    const defaults = o["defaults"] ?? {}
    if (!Rules.isRecord(defaults)) {
      return yield* fail(`defaults must be breaker options (an object), got ${Rules.show(defaults)}`)
    }
    const overrides = o["overrides"] ?? {}
    if (!Rules.isRecord(overrides)) {
      return yield* fail(`overrides must be an object of breaker options by name, got ${Rules.show(overrides)}`)
    }
    const maxBreakers = o["maxBreakers"] ?? Infinity
    if (maxBreakers !== Infinity)
      yield* Edition.fromResult(
        Edition.Result.mapError(Rules.check("maxBreakers", Rules.atLeastOne, maxBreakers), fail)
      )
    const maxOpen = yield* Edition.fromResult(Edition.Result.mapError(Ejection.resolveLimit(o["maxOpen"]), fail))
    const resolvedDefaults = yield* Options.validate({ ...defaults, name: "defaults" } as CB.TimeoutOptions, timeouts)
    const resolvedOverrides = new Map<string, Options.Resolved>()
    for (const [name, override] of Object.entries(overrides)) {
      if (!Rules.isRecord(override)) {
        return yield* fail(`overrides["${name}"] must be breaker options (an object), got ${Rules.show(override)}`)
      }
      resolvedOverrides.set(
        name,
        yield* Options.validate({ ...defaults, ...override, name } as CB.TimeoutOptions, timeouts)
      )
    }
    return { defaults: resolvedDefaults, overrides: resolvedOverrides, maxBreakers: maxBreakers as number, maxOpen }
  })

/**
 * Whether a registry made with these options is typed `BreakerRegistry<BreakerTimeoutError>`: its
 * defaults or one of its overrides carry a timeout, as the overloads of `make` and `layer` read
 * them. Decided once, when it is made: a live config may then set, change or lift timeouts per name.
 *
 * @internal
 */
export const carriesTimeout = (options: unknown): boolean => {
  if (!Rules.isRecord(options)) return false
  const has = (o: unknown) => Rules.isRecord(o) && o["timeout"] !== undefined
  const overrides = options["overrides"]
  return has(options["defaults"]) || (Rules.isRecord(overrides) && Object.values(overrides).some(has))
}

/** The options of the breaker called `name` under `config`, but for the name (a live config compares them). @internal */
export const optionsOf = (config: Resolved, name: string): Options.Resolved =>
  config.overrides.get(name) ?? config.defaults

/** The options of the breaker called `name`, under `config`. @internal */
export const resolvedFor = (config: Resolved, name: string): Options.Resolved => {
  const resolved = optionsOf(config, name)
  // A name the registry was asked for is checked on the first `get`; the rest of the options are checked.
  return name.length > 0 ? { ...resolved, name } : Edition.Result.getOrThrow(Options.named(resolved, name))
}

const sameOpenFor = (a: Options.Resolved["openFor"], b: Options.Resolved["openFor"]): boolean =>
  a._tag === "Fixed" ? b._tag === "Fixed" && a.millis === b.millis : b._tag === "Schedule" && a.schedule === b.schedule

/** Whether a breaker made with `a` runs exactly as one made with `b` (then a live config leaves it alone). */
const sameRun = (a: Options.Resolved, b: Options.Resolved): boolean =>
  a.policy === b.policy &&
  sameOpenFor(a.openFor, b.openFor) &&
  a.permits === b.permits &&
  a.successesToClose === b.successesToClose &&
  a.probeLeaseMillis === b.probeLeaseMillis &&
  a.probeTimeoutMillis === b.probeTimeoutMillis &&
  a.timeoutMillis === b.timeoutMillis &&
  a.isFailure === b.isFailure

/**
 * Moves a live breaker from the options it was made with (`before`) to `after`, keeping its state
 * and window (its name is its own: theirs is not read). Returns whether it changed anything.
 *
 * @internal
 */
export const reconfigure = (
  breaker: Breaker,
  before: Options.Resolved,
  after: Options.Resolved,
  runner: Runtime.Runner,
  now: number
): boolean => {
  if (sameRun(before, after)) return false
  // Checked when the config was resolved (`validate`), so it gives a first delay.
  const delays = sameOpenFor(before.openFor, after.openFor)
    ? undefined
    : Edition.Result.getOrThrow(Options.openDelays(after, runner))
  breaker.reconfigure(after, delays, now)
  return true
}
