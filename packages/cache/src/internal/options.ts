/**
 * The options of the cache package, checked once with the shared rules of `OptionRules` (Effect
 * Schema) into the package's one options error, `InvalidCacheOptions`.
 */
import { OptionRules } from "@circuitry/breaker"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidCacheOptions } from "../CacheStore.js"

const Capacity = Schema.Number.pipe(
  Schema.filter((n) => n === Infinity || (Number.isInteger(n) && n >= 1), {
    message: () => ({ message: "a whole number >= 1", override: true })
  })
)

/** @internal */
export const MemoryOptions = Schema.Struct({ capacity: Schema.optional(Capacity) })

/** @internal */
export const LoadOptions = Schema.Struct({ maxConcurrentLoads: Schema.optional(OptionRules.Whole(1)) })

/** @internal */
export const LayerOptions = Schema.Struct({
  maxConcurrentLoads: Schema.optional(OptionRules.Whole(1)),
  l2Writes: Schema.optional(OptionRules.OneOf("await", "background"))
})

/** @internal */
export const LayeredOptions = Schema.Struct({
  l2Writes: Schema.optional(OptionRules.OneOf("await", "background")),
  fillTtl: Schema.optional(OptionRules.Millis)
})

/**
 * Decodes `input`; `owner` starts the message (`"MemoryStore: capacity must be ..."`).
 *
 * @internal
 */
export const decode = <A, I>(
  owner: string,
  schema: Schema.Schema<A, I>,
  input: unknown
): Effect.Effect<A, InvalidCacheOptions> =>
  Effect.suspend(() =>
    OptionRules.decode(schema, input, (message) => new InvalidCacheOptions({ message: `${owner}: ${message}` }))
  )
