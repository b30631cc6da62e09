import * as Edition from "@circuitry/core/Edition"
import * as MetricSeries from "@circuitry/core/MetricSeries"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import type * as Types from "effect/Types"
import * as Virtual from "#virtual"
import { InvalidChaosOptions } from "./errors.js"
import { show } from "@circuitry/core/OptionRules"
import * as options from "./options.js"
import * as Random from "./random.js"

/** @internal */
export const TypeId: unique symbol = Symbol.for("@circuitry/chaos/Fault")

/** @internal */
export type TypeId = typeof TypeId

/** What a fault does to a call it applies to. @internal */
export type Kind =
  | { readonly _tag: "Latency"; readonly millis: number }
  /** Log-normal: the median is `exp(mu)`; sigma is set so that the 99th percentile is the given one. */
  | { readonly _tag: "LatencyDistribution"; readonly mu: number; readonly sigma: number }
  | { readonly _tag: "Fail"; readonly rate: number; readonly error: () => unknown }
  | { readonly _tag: "Stall" }
  | { readonly _tag: "StallThenFail"; readonly error: () => unknown }

/** The public `Fault<E>`, seen from inside. @internal */
export interface Fault<out E> {
  readonly [TypeId]: { readonly _E: Types.Covariant<E> }
  readonly kind: Kind
  /** Scenario milliseconds [from, to) in which it applies; undefined: always. */
  readonly window: { readonly from: number; readonly to: number } | undefined
  /** Why the fault's options are invalid, naming the option; undefined when they are valid. */
  readonly problem: string | undefined
}

const variance = { _E: (_: never) => _ }

const make = <E>(kind: Kind, problem: string | undefined): Fault<E> => ({
  [TypeId]: variance,
  kind,
  window: undefined,
  problem
})

/** @internal */
export const isFault = (u: unknown): u is Fault<unknown> => Predicate.hasProperty(u, TypeId)

/** @internal */
export const latency = (
  input: Edition.DurationInput | { readonly p50: Edition.DurationInput; readonly p99: Edition.DurationInput }
): Fault<never> =>
  Predicate.isObject(input) && "p50" in input && "p99" in input
    ? Edition.Result.match(options.distribution(input), {
        onFailure: (problem) => make<never>({ _tag: "Latency", millis: 0 }, problem),
        // z(0.99) = 2.3263: the 99th percentile of a log-normal is exp(mu + 2.3263 sigma).
        onSuccess: ({ p50, p99 }) =>
          make<never>(
            { _tag: "LatencyDistribution", mu: Math.log(p50), sigma: Math.log(p99 / p50) / 2.3263478740408408 },
            undefined
          )
      })
    : Edition.Result.match(options.latency(input), {
        onFailure: (problem) => make<never>({ _tag: "Latency", millis: 0 }, problem),
        onSuccess: (millis) => make<never>({ _tag: "Latency", millis }, undefined)
      })

/** @internal */
export const fail = <E>(input: { readonly rate: number; readonly error: () => E }): Fault<E> =>
  make({ _tag: "Fail", rate: input?.rate, error: input?.error }, options.failProblem(input))

/** @internal */
export const stall: Fault<never> = make({ _tag: "Stall" }, undefined)

/** @internal */
export const stallThenFail = <E>(input: { readonly error: () => E }): Fault<E> =>
  make({ _tag: "StallThenFail", error: input?.error }, options.stallThenFailProblem(input))

/** @internal */
export const during = <E>(
  window: { readonly from: Edition.DurationInput; readonly to: Edition.DurationInput },
  fault: Fault<E>
): Fault<E> => {
  if (fault.problem !== undefined) return fault
  return Edition.Result.match(options.window(window), {
    onFailure: (problem): Fault<E> => ({ ...fault, problem }),
    // A window inside a window: the fault applies where both do.
    onSuccess: (outer): Fault<E> => {
      const inner = fault.window
      return {
        ...fault,
        window:
          inner === undefined ? outer : { from: Math.max(inner.from, outer.from), to: Math.min(inner.to, outer.to) }
      }
    }
  })
}

/** The first invalid fault's message, prefixed with where it was given. @internal */
export const problemOf = (faults: ReadonlyArray<unknown>, where: string): string | undefined => {
  for (const fault of faults) {
    if (!isFault(fault))
      return `${where}: ${show(fault)} is not a Fault (make one with Chaos.latency, fail, stall or during)`
    if (fault.problem !== undefined) return `${where}: ${fault.problem}`
  }
  return undefined
}

/**
 * Where scenario time starts, in Clock milliseconds. `Scenario.run` sets it to its start for every
 * fiber it runs; outside a scenario it is 0 (the start of a `TestClock`).
 *
 * @internal
 */
export const currentOrigin: Virtual.Local<number> = Virtual.local("@circuitry/chaos/currentOrigin", 0)

/** The generator faults draw from. `Scenario.run` gives each request its own. @internal */
export const currentRandom: Virtual.Local<Random.Random | undefined> = Virtual.local<Random.Random | undefined>(
  "@circuitry/chaos/currentRandom",
  undefined
)

/**
 * The generator of faults applied outside any scenario or seeded layer: seed 0, for the process
 * (shared by every copy of this module the process loads, as Effect 3's `globalValue` would keep
 * it; Effect 4 has no `globalValue`).
 */
const processRandom: Random.Random = ((globalThis as Record<symbol, Random.Random | undefined>)[
  Symbol.for("@circuitry/chaos/processRandom")
] ??= Random.make(0))

/** @internal */
export const faultsTotal: Edition.Counter = MetricSeries.counter({
  name: "circuitry_chaos_faults_total",
  description: "Faults that applied to a call, by kind: latency, fail, stall"
})

const applied = {
  latency: Edition.counterSeries(faultsTotal, { fault: "latency" }),
  fail: Edition.counterSeries(faultsTotal, { fault: "fail" }),
  stall: Edition.counterSeries(faultsTotal, { fault: "stall" })
}

/** A uniform draw in [0, 1) from the fiber's generator (the scenario request's). @internal */
export const random: Effect.Effect<number> = Virtual.withCurrent((fiber) =>
  Effect.succeed((Virtual.get(fiber, currentRandom) ?? processRandom)())
)

/**
 * Applies `faults` to `self`, in order: latencies add up and are waited before the call; the
 * first failure drawn or stall replaces the call (it never reaches the dependency). `random`, when
 * given, is the generator to draw from instead of the fiber's. Fails with `InvalidChaosOptions`
 * when a fault is invalid, checked once, when the combinator is applied.
 *
 * @internal
 */
export const inject = <A, E, R, F>(
  self: Effect.Effect<A, E, R>,
  faults: ReadonlyArray<Fault<F>>,
  random: Random.Random | undefined
): Effect.Effect<A, E | F | InvalidChaosOptions, R> => {
  const problem = problemOf(faults, "Chaos.inject")
  if (problem !== undefined) return Effect.fail(new InvalidChaosOptions({ message: problem }))
  return faults.length === 0 ? self : apply(self, faults, random)
}

/** `inject` for faults already checked (`Chaos.layer` checks them once, when it is built). @internal */
export const apply = <A, E, R, F>(
  self: Effect.Effect<A, E, R>,
  faults: ReadonlyArray<Fault<F>>,
  random: Random.Random | undefined
): Effect.Effect<A, E | F, R> =>
  Virtual.withCurrent<A, E | F, R>((fiber) => {
    const t = Virtual.now(fiber) - Virtual.get(fiber, currentOrigin)
    let delay = 0
    let outcome: Effect.Effect<never, F> | undefined
    for (const fault of faults) {
      const window = fault.window
      if (window !== undefined && (t < window.from || t >= window.to)) continue
      const kind = fault.kind
      const draw = () => (random ?? Virtual.get(fiber, currentRandom) ?? processRandom)()
      switch (kind._tag) {
        case "Latency":
          delay += kind.millis
          applied.latency(1)
          continue
        case "LatencyDistribution":
          delay += Math.exp(kind.mu + kind.sigma * Random.normal(draw))
          applied.latency(1)
          continue
        case "Fail":
          if (draw() < kind.rate) {
            outcome = Effect.fail(kind.error() as F)
            applied.fail(1)
          }
          break
        case "Stall":
          outcome = Effect.never
          applied.stall(1)
          break
        case "StallThenFail": {
          applied.stall(1)
          const error = kind.error
          // Stuck until the window ends, then dropped with the error (never, without a window).
          outcome =
            window === undefined
              ? Effect.never
              : Effect.andThen(
                  Effect.sleep(Math.max(0, window.to - t - delay)),
                  Effect.failSync(() => error() as F)
                )
          break
        }
      }
      if (outcome !== undefined) break
    }
    const call: Effect.Effect<A, E | F, R> = outcome ?? self
    return delay > 0 ? Effect.andThen(Effect.sleep(delay), call) : call
  })
