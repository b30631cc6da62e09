/** The implementation behind ../HealthRoute.ts, where the public types and their documentation live. */
import * as Edition from "@circuitry/core/Edition"
import { BreakerStore } from "@circuitry/breaker"
import type { BreakerRegistry } from "@circuitry/breaker"
import { LimiterRegistry } from "@circuitry/limiter"
import { HttpServerResponse, jsonUnsafe, router as routerOf, type App, type Route, type Router } from "#http"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { BreakerHealth, Health, HtmlOptions, LimiterHealth, MakeOptions } from "../HealthRoute.js"
import * as Events from "./healthEvents.js"
import * as History from "./healthHistory.js"
import * as Operations from "./healthOperations.js"
import * as Options from "./options.js"
import * as Sources from "./healthSources.js"
import * as View from "./healthView.js"
import type { InvalidPlatformOptions } from "./errors.js"

const byName = <T extends { readonly name: string }>(a: T, b: T) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

/** Every limiter in the `LimiterRegistry`, if one is provided (so it adds no requirement). */
const limiterHealth: Effect.Effect<Option.Option<ReadonlyArray<LimiterHealth>>> = Effect.flatMap(
  Effect.serviceOption(LimiterRegistry.LimiterRegistry),
  Option.match({
    onNone: () => Effect.succeed(Option.none()),
    onSome: (registry) =>
      Effect.flatMap(registry.limiters, (limiters) =>
        Effect.map(
          Effect.forEach(limiters, (limiter) => limiter.snapshot),
          (snapshots) =>
            Option.some(
              snapshots
                .map(({ name, limit, inFlight, queued, rejected, partitions }) => ({
                  name,
                  limit,
                  inFlight,
                  queued,
                  rejected,
                  partitions
                }))
                .sort(byName)
            )
        )
      )
  })
)

const healthWith = <R>(list: Sources.List<R>, history: History.History | undefined): Effect.Effect<Health, never, R> =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const snapshots = yield* Effect.forEach(yield* list, (breaker) => breaker.snapshot)
    const breakers = snapshots
      .map((snapshot): BreakerHealth => {
        const past = history?.of(snapshot.name)
        return {
          name: snapshot.name,
          state: snapshot.state._tag,
          openUntil: snapshot.state._tag === "Open" ? new Date(snapshot.state.until).toISOString() : null,
          counts: snapshot.counts,
          probes: snapshot.probes,
          store: snapshot.store === undefined ? "local" : snapshot.store.connected ? "shared" : "unreachable",
          ...(snapshot.store === undefined ? {} : { verdict: snapshot.store.local === true ? "member" : "fleet" }),
          ...(past === undefined ? {} : { history: past })
        }
      })
      .sort(byName)
    const limiters = yield* limiterHealth
    const store = yield* Effect.serviceOption(BreakerStore.BreakerStore)
    return {
      at: new Date(now).toISOString(),
      open: breakers.filter((b) => b.state !== "Closed").length,
      breakers,
      ...(Option.isSome(limiters) ? { limiters: limiters.value } : {}),
      storeInContext: Option.isSome(store)
    }
  })

/** The route's own registry: the one in the context. */
const defaultList: Sources.List<BreakerRegistry.BreakerRegistry> = Sources.list(undefined)

/** @internal */
export const health: Effect.Effect<Health, never, BreakerRegistry.BreakerRegistry> = healthWith(defaultList, undefined)

/** @internal */
export const healthOf = (sources: Sources.Sources): Effect.Effect<Health, never, unknown> =>
  healthWith(Sources.list(sources), undefined)

const noStore = { "cache-control": "no-store" }

const jsonWith = <R>(list: Sources.List<R>, history: History.History | undefined): App<never, R> =>
  Effect.map(healthWith(list, history), (body) => jsonUnsafe(body, { headers: noStore }))

/** @internal */
export const json: App<never, BreakerRegistry.BreakerRegistry> = jsonWith(defaultList, undefined)

/** @internal */
export const renderHtml = View.renderHtml

const htmlWith = <R>(
  list: Sources.List<R>,
  history: History.History | undefined,
  options?: HtmlOptions
): App<never, R> =>
  Effect.map(healthWith(list, history), (body) =>
    HttpServerResponse.text(View.renderHtml(body, options), {
      contentType: "text/html; charset=utf-8",
      headers: noStore
    })
  )

/** @internal */
export const html = (options?: HtmlOptions): App<never, BreakerRegistry.BreakerRegistry> =>
  htmlWith(defaultList, undefined, options)

/** The options as the implementation reads them: what a route is handed is checked, not typed. */
type Given<R> = Omit<MakeOptions<R>, "breakers" | "registries"> & Sources.Sources

const build = <R>(
  options: Given<R> | undefined,
  list: Sources.List<unknown>,
  history: History.History | undefined
): Router<unknown> => {
  const path = options?.path ?? "/health/breakers"
  const every = Duration.seconds(Math.max(1, Math.round(options?.refreshSeconds ?? 5)))
  const read = healthWith(list, history)
  // Relative to the page at `${path}/view`, so that the route still works when mounted under a prefix.
  const viewOptions: HtmlOptions = { ...options, events: "view/events" }
  const routes: Array<Route<unknown>> = [
    { method: "GET", path, handler: jsonWith(list, history) },
    { method: "GET", path: `${path}/events`, handler: Events.json(every, list, read) },
    { method: "GET", path: `${path}/view`, handler: htmlWith(list, history, viewOptions) },
    {
      method: "GET",
      path: `${path}/view/events`,
      handler: Events.view(every, list, read, (h) => View.renderLive(h, viewOptions))
    }
  ]
  if (options?.authorize !== undefined) routes.push(...Operations.routes(path, options.authorize, list))
  // A router value on Effect 3, a layer of routes on Effect 4 (the #http pair says which).
  return routerOf(routes)
}

/** @internal */
export const router = <R>(options?: Given<R>): Router<unknown> => {
  // No error channel: a bad option is thrown where the route is built (make fails with it instead).
  Edition.Result.match(Options.decodeRoute(options), {
    onFailure: (error) => {
      throw error
    },
    onSuccess: () => undefined
  })
  return build(options, Sources.list(options), undefined)
}

/** @internal */
export const make = <R>(options?: Given<R>): Effect.Effect<Router<unknown>, InvalidPlatformOptions, unknown> =>
  Effect.gen(function* () {
    const resolved = yield* Edition.fromResult(Options.decodeHealth(options))
    const list = Sources.list(options)
    const history = yield* History.start(resolved, list)
    return build(options, list, history)
  })
