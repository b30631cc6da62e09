/**
 * The limiter registry: limiters by name, made on first use from options validated once, at most
 * `maxLimiters` held (least recently used, idle first, dropped with their metric series).
 */
import * as Edition from "@circuitry/core/Edition"
import * as MetricSeries from "@circuitry/core/MetricSeries"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as Limiter from "../Limiter.js"
import type { LimiterRegistry, RegistryOptions } from "../LimiterRegistry.js"
import { InvalidLimiterOptions } from "./errors.js"
import * as internal from "./limiter.js"
import { AnObject, decode } from "./rules.js"

const Options = Schema.Struct({
  defaults: Schema.optional(AnObject<Limiter.Options>("an object of limiter options")),
  overrides: Schema.optional(AnObject<Record<string, Limiter.Options>>("an object of limiter options by name")),
  maxLimiters: Schema.optional(
    Edition.refine(Schema.Number, (n) => n === Infinity || (Number.isInteger(n) && n >= 1), "a whole number >= 1")
  )
})

/** @internal */
export const make = (options?: RegistryOptions): Effect.Effect<LimiterRegistry, InvalidLimiterOptions, Scope.Scope> =>
  Effect.gen(function* () {
    const o = yield* decode(Options, options)
    const defaults = o.defaults ?? {}
    const overrides = o.overrides ?? {}
    const maxLimiters = o.maxLimiters ?? Infinity
    const optionsFor = (name: string): Limiter.Options => ({ ...defaults, ...overrides[name], name })
    // Validate everything now, so that `get` cannot fail later.
    const resolvedDefaults = yield* internal.resolve(optionsFor("defaults"))
    const resolvedOverrides = new Map<string, internal.Resolved>()
    for (const name of Object.keys(overrides)) resolvedOverrides.set(name, yield* internal.resolve(optionsFor(name)))
    const entries = new Map<string, Limiter.Limiter>()
    // Series go to the metric registry of the fiber that makes the registry; they leave it with
    // their limiter, and every one still held leaves when the registry's scope closes.
    const metrics = yield* MetricSeries.currentRegistry
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
