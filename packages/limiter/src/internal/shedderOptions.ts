/** A shedder's options, validated once into `Resolved`. */
import { millis } from "@circuitry/core/OptionRules"
import * as Effect from "effect/Effect"
import type * as S from "../Shedder.js"
import { InvalidLimiterOptions } from "./errors.js"
import { isBetween } from "./validation.js"

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

const durationOf = (
  option: string,
  input: unknown,
  fallback: string,
  at: string
): Effect.Effect<number, InvalidLimiterOptions> => {
  const ms = millis(input ?? fallback)
  return ms !== undefined && ms > 0
    ? Effect.succeed(ms)
    : Effect.fail(
        new InvalidLimiterOptions({
          message: `${option} must be a finite duration > 0, got ${JSON.stringify(String(input))}${at}`
        })
      )
}

/** @internal */
export const resolve = (options: S.Options | undefined): Effect.Effect<Resolved, InvalidLimiterOptions> =>
  Effect.gen(function* () {
    const fail = (message: string) => Effect.fail(new InvalidLimiterOptions({ message }))
    if (options !== undefined && (typeof options !== "object" || options === null)) {
      return yield* fail(`options must be an object, got ${typeof options}`)
    }
    const o = options ?? {}
    const name = o.name ?? "default"
    if (typeof name !== "string" || name.length === 0) {
      return yield* fail(`name must be a non-empty string, got ${JSON.stringify(name)}`)
    }
    const at = ` (shedder "${name}")`
    const target = yield* durationOf("target", o.target, "50 millis", at)
    const interval = yield* durationOf("interval", o.interval, "500 millis", at)
    if (interval <= target)
      return yield* fail(`interval (${interval} ms) must be longer than target (${target} ms)${at}`)
    const sampleEvery = yield* durationOf("sampleEvery", o.sampleEvery, "20 millis", at)
    if (sampleEvery > interval) {
      return yield* fail(`sampleEvery (${sampleEvery} ms) must be at most interval (${interval} ms)${at}`)
    }
    const utilization = o.utilization ?? 0.9
    if (!isBetween(utilization, 0, 1, true)) {
      return yield* fail(`utilization must be a number with 0 < utilization <= 1, got ${utilization}${at}`)
    }
    const input = o.loop ?? true
    if (typeof input !== "boolean" && !Effect.isEffect(input)) {
      return yield* fail(`loop must be a boolean or an Effect of a LoopSignal, got ${typeof input}${at}`)
    }
    const loop = input === true ? "node" : input === false ? undefined : input
    return { name, target, interval, loop, utilization, sampleEvery }
  })
