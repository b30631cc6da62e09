import * as Edition from "@circuitry/core/Edition"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { InvalidChaosOptions } from "./errors.js"
import { apply, type Fault, problemOf } from "./fault.js"
import * as Rules from "./options.js"
import * as Random from "./random.js"

/** @internal */
export const wrap = <S>(
  service: S,
  faults: object,
  options: { readonly seed?: number | undefined } | undefined,
  where: string
): Effect.Effect<S, InvalidChaosOptions> =>
  Effect.suspend(() => {
    const checked = Rules.layerSeed(options, where)
    if (Edition.Result.isFailure(checked)) return Effect.fail(Edition.Result.failureOf(checked))
    const seed = Edition.Result.successOf(checked)
    if (typeof service !== "object" || service === null) {
      return Effect.fail(
        new InvalidChaosOptions({ message: `${where}: the service must be an object of methods and effects` })
      )
    }
    // The layer's own generator when seeded; otherwise each call draws from its fiber's (the scenario's).
    const random = seed === undefined ? undefined : Random.make(seed)
    const original = service as Record<string, unknown>
    // A copy that keeps the prototype (class-based services keep their methods and getters).
    const copy: Record<string, unknown> = Object.assign(Object.create(Object.getPrototypeOf(service)), service)
    for (const [key, given] of Object.entries(faults) as Array<[string, unknown]>) {
      if (given === undefined) continue
      const list: ReadonlyArray<unknown> = Array.isArray(given) ? given : [given]
      const problem = problemOf(list, `${where}.${key}`)
      if (problem !== undefined) return Effect.fail(new InvalidChaosOptions({ message: problem }))
      const member = original[key]
      if (Effect.isEffect(member)) {
        copy[key] = apply(member, list as ReadonlyArray<Fault<unknown>>, random)
      } else if (typeof member === "function") {
        copy[key] = (...args: Array<unknown>) => {
          const result: unknown = member.apply(service, args)
          return Effect.isEffect(result) ? apply(result, list as ReadonlyArray<Fault<unknown>>, random) : result
        }
      } else {
        return Effect.fail(
          new InvalidChaosOptions({
            message: `${where}.${key}: the service has no method or effect named "${key}" to inject faults into`
          })
        )
      }
    }
    return Effect.succeed(copy as S)
  })

/** @internal */
export const layer = <I, S>(
  tag: Edition.Key<I, S>,
  faults: object,
  options: { readonly seed?: number | undefined } | undefined
): Layer.Layer<I, InvalidChaosOptions, I> =>
  Layer.effect(
    tag,
    Effect.flatMap(Edition.service(tag), (service) => wrap(service, faults, options, `Chaos.layer(${tag.key})`))
  )
