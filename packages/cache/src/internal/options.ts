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

const loadFields = {
  maxConcurrentLoads: Schema.optional(OptionRules.Whole(1)),
  maxQueuedLoads: Schema.optional(OptionRules.Whole(0)),
  maxLoadWait: Schema.optional(OptionRules.PositiveMillis)
}

/** The line's bounds belong to the cap: without one, nobody waits. */
const boundsNeedCap = (o: {
  readonly maxConcurrentLoads?: number | undefined
  readonly maxQueuedLoads?: number | undefined
  readonly maxLoadWait?: number | undefined
}) =>
  o.maxConcurrentLoads !== undefined || (o.maxQueuedLoads === undefined && o.maxLoadWait === undefined)
    ? true
    : {
        path: [o.maxQueuedLoads !== undefined ? "maxQueuedLoads" : "maxLoadWait"],
        message: "given only with maxConcurrentLoads (it bounds that cap's line)"
      }

/** @internal */
export const LoadOptions = Schema.Struct(loadFields).pipe(Schema.filter(boundsNeedCap))

/** @internal */
export const LayerOptions = Schema.Struct({
  ...loadFields,
  l2Writes: Schema.optional(OptionRules.OneOf("await", "background"))
}).pipe(Schema.filter(boundsNeedCap))

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
