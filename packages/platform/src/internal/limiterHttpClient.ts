import { type Limiter, LimiterRegistry } from "@circuitry/limiter"
import { HttpClient, isHttpClient } from "#http"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import type * as LHC from "../LimiterHttpClient.js"
import { originKey } from "./origin.js"

export { originKey }

const guardWith = <E, R>(
  client: HttpClient.HttpClient.With<E, R>,
  registry: LimiterRegistry.LimiterRegistry,
  options: LHC.Options | undefined
): HttpClient.HttpClient.With<E | Limiter.LimiterRejectedError, R> => {
  const keyOf = options?.key ?? originKey
  const partitionOf = options?.partition
  return HttpClient.transform(client, (effect, request) =>
    Effect.suspend(() => {
      const name = keyOf(request)
      // A URL that does not parse is the client's to refuse (RequestError "InvalidUrl").
      if (name === undefined) return effect
      const partition = partitionOf?.(request)
      return Effect.flatMap(registry.get(name), (limiter) =>
        limiter.execute(effect, partition === undefined ? undefined : { partition })
      )
    })
  )
}

/** @internal */
export const guard = dual(
  (args) => isHttpClient(args[0]),
  <E, R>(
    client: HttpClient.HttpClient.With<E, R>,
    registry: LimiterRegistry.LimiterRegistry,
    options?: LHC.Options
  ): HttpClient.HttpClient.With<E | Limiter.LimiterRejectedError, R> => guardWith(client, registry, options)
)

/** @internal */
export const make = (
  options?: LHC.Options
): Effect.Effect<LHC.LimiterHttpClient, never, HttpClient.HttpClient | LimiterRegistry.LimiterRegistry> =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const registry = yield* LimiterRegistry.LimiterRegistry
    return guardWith(client, registry, options)
  })
