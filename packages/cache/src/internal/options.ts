/**
 * The options of the cache package, checked once with the shared rules of `OptionRules` into the
 * package's one options error, `InvalidCacheOptions`. The two rules the option rules do not state
 * (a capacity may be `Infinity`; a line's bounds need a cap) are checked after decoding, in the
 * same words (`"<option> must be <rule>, got <value>"`), so that no schema refinement of this
 * package differs between Effect majors.
 */
import { OptionRules } from "@circuitry/core"
import * as Edition from "@circuitry/core/Edition"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidCacheOptions } from "../CacheStore.js"

type Rules<A, I> = Parameters<typeof OptionRules.decode<A, I, InvalidCacheOptions>>[0]

const refuse = (owner: string, option: string, rule: string, input: unknown): InvalidCacheOptions =>
  new InvalidCacheOptions({ message: `${owner}: ${option} must be ${rule}, got ${OptionRules.show(input)}` })

/** Decodes `input` by the option rules; `owner` starts the message (`"MemoryStore: capacity must be ..."`). */
const decode = <A, I>(owner: string, schema: Rules<A, I>, input: unknown): Effect.Effect<A, InvalidCacheOptions> =>
  Effect.suspend(() =>
    Edition.fromResult(
      OptionRules.decode(schema, input, (message) => new InvalidCacheOptions({ message: `${owner}: ${message}` }))
    )
  )

/** The value of `option` in `input`, as given. */
const given = (input: unknown, option: string): unknown =>
  typeof input === "object" && input !== null ? (input as Record<string, unknown>)[option] : undefined

const MemoryOptions = Schema.Struct({ capacity: Schema.optional(Schema.Unknown) })

/** @internal */
export const decodeMemory = (owner: string, input: unknown): Effect.Effect<number, InvalidCacheOptions> =>
  Effect.flatMap(decode(owner, MemoryOptions, input), ({ capacity }) =>
    capacity === undefined
      ? Effect.succeed(Infinity)
      : capacity === Infinity || (typeof capacity === "number" && Number.isInteger(capacity) && capacity >= 1)
        ? Effect.succeed(capacity)
        : Effect.fail(refuse(owner, "capacity", "a whole number >= 1", capacity))
  )

const loadFields = {
  maxConcurrentLoads: Schema.optional(OptionRules.Whole(1)),
  maxQueuedLoads: Schema.optional(OptionRules.Whole(0)),
  maxLoadWait: Schema.optional(OptionRules.PositiveMillis)
}

interface Bounds {
  readonly maxConcurrentLoads?: number | undefined
  readonly maxQueuedLoads?: number | undefined
  readonly maxLoadWait?: number | undefined
}

/** The line's bounds belong to the cap: without one, nobody waits. */
const boundsNeedCap =
  (owner: string, input: unknown) =>
  <A extends Bounds>(o: A): Effect.Effect<A, InvalidCacheOptions> => {
    if (o.maxConcurrentLoads !== undefined || (o.maxQueuedLoads === undefined && o.maxLoadWait === undefined)) {
      return Effect.succeed(o)
    }
    const option = o.maxQueuedLoads !== undefined ? "maxQueuedLoads" : "maxLoadWait"
    const rule = "given only with maxConcurrentLoads (it bounds that cap's line)"
    return Effect.fail(refuse(owner, option, rule, given(input, option)))
  }

const LoadOptions = Schema.Struct(loadFields)

/** @internal */
export const decodeLoad = (owner: string, input: unknown) =>
  Effect.flatMap(decode(owner, LoadOptions, input), boundsNeedCap(owner, input))

const LayerOptions = Schema.Struct({
  ...loadFields,
  l2Writes: Schema.optional(OptionRules.OneOf("await", "background"))
})

/** @internal */
export const decodeLayer = (owner: string, input: unknown) =>
  Effect.flatMap(decode(owner, LayerOptions, input), boundsNeedCap(owner, input))

const LayeredOptions = Schema.Struct({
  l2Writes: Schema.optional(OptionRules.OneOf("await", "background")),
  fillTtl: Schema.optional(OptionRules.Millis)
})

/** @internal */
export const decodeLayered = (owner: string, input: unknown) => decode(owner, LayeredOptions, input)
