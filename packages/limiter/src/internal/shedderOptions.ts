/** A shedder's options, validated once into `Resolved`. */
import { OptionRules } from "@circuitry/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as S from "../Shedder.js"
import { InvalidLimiterOptions } from "./errors.js"
import { decode, Fraction, named } from "./rules.js"

/** @internal */
export interface Resolved {
  readonly name: string
  readonly target: number
  readonly interval: number
  /** `undefined`: no loop input; `"node"`: the Node event loop; else the signal to read. */
  readonly loop: undefined | "node" | Effect.Effect<S.LoopSignal>
  readonly utilization: number
  readonly sampleEvery: number
}

/** The resolution of Node's loop-delay histogram: its timer fires this often. */
export const RESOLUTION_MILLIS = 10

const ShedderOptions = Schema.Struct({
  target: Schema.optional(OptionRules.PositiveMillis),
  interval: Schema.optional(OptionRules.PositiveMillis),
  sampleEvery: Schema.optional(OptionRules.PositiveMillis),
  utilization: Schema.optional(Fraction("a number with 0 < utilization <= 1", true)),
  loop: Schema.optional(
    OptionRules.Is(
      (u): u is NonNullable<S.Options["loop"]> => typeof u === "boolean" || Effect.isEffect(u),
      "a boolean or an Effect of a LoopSignal"
    )
  )
})

/** @internal */
export const resolve = (options: S.Options | undefined): Effect.Effect<Resolved, InvalidLimiterOptions> =>
  Effect.gen(function* () {
    const { at, name } = yield* named("shedder", options)
    const o = yield* decode(ShedderOptions, options, { suffix: at })
    const target = o.target ?? 50
    const interval = o.interval ?? 500
    const sampleEvery = o.sampleEvery ?? 20
    if (interval <= target) {
      return yield* new InvalidLimiterOptions({
        message: `interval (${interval} ms) must be longer than target (${target} ms)${at}`
      })
    }
    if (sampleEvery > interval) {
      return yield* new InvalidLimiterOptions({
        message: `sampleEvery (${sampleEvery} ms) must be at most interval (${interval} ms)${at}`
      })
    }
    const input = o.loop ?? true
    const loop = input === true ? "node" : input === false ? undefined : input
    return { name, target, interval, loop, utilization: o.utilization ?? 0.9, sampleEvery }
  })
