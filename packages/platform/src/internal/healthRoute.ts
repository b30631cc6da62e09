/** The implementation behind ../HealthRoute.ts, where the public types and their documentation live. */
import { BreakerRegistry, BreakerStore } from "@circuitry/breaker"
import type { CircuitBreaker } from "@circuitry/breaker"
import { LimiterRegistry } from "@circuitry/limiter"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { BreakerHealth, Health, HtmlOptions, LimiterHealth, MakeOptions, RouterOptions } from "../HealthRoute.js"
import * as Events from "./healthEvents.js"
import * as History from "./healthHistory.js"
import * as Operations from "./healthOperations.js"
import * as View from "./healthView.js"

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

const healthWith = (
  history: History.History | undefined
): Effect.Effect<Health, never, BreakerRegistry.BreakerRegistry> =>
  Effect.gen(function* () {
    const registry = yield* BreakerRegistry.BreakerRegistry
    const now = yield* Clock.currentTimeMillis
    const snapshots = yield* Effect.forEach(yield* registry.breakers, (breaker) => breaker.snapshot)
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

/** @internal */
export const health: Effect.Effect<Health, never, BreakerRegistry.BreakerRegistry> = healthWith(undefined)

const noStore = { "cache-control": "no-store" }

const jsonWith = (history: History.History | undefined): HttpApp.Default<never, BreakerRegistry.BreakerRegistry> =>
  Effect.map(healthWith(history), (body) => HttpServerResponse.unsafeJson(body, { headers: noStore }))

/** @internal */
export const json: HttpApp.Default<never, BreakerRegistry.BreakerRegistry> = jsonWith(undefined)

/** @internal */
export const renderHtml = View.renderHtml

const htmlWith = (
  history: History.History | undefined,
  options?: HtmlOptions
): HttpApp.Default<never, BreakerRegistry.BreakerRegistry> =>
  Effect.map(healthWith(history), (body) =>
    HttpServerResponse.text(View.renderHtml(body, options), {
      contentType: "text/html; charset=utf-8",
      headers: noStore
    })
  )

/** @internal */
export const html = (options?: HtmlOptions): HttpApp.Default<never, BreakerRegistry.BreakerRegistry> =>
  htmlWith(undefined, options)

const build = <R>(
  options: RouterOptions<R> | undefined,
  history: History.History | undefined
): HttpRouter.HttpRouter<never, BreakerRegistry.BreakerRegistry | R> => {
  const path = options?.path ?? "/health/breakers"
  const every = Duration.seconds(Math.max(1, Math.round(options?.refreshSeconds ?? 5)))
  const read = healthWith(history)
  // Relative to the page at `${path}/view`, so that the route still works when mounted under a prefix.
  const viewOptions: HtmlOptions = { ...options, events: "view/events" }
  const routes = HttpRouter.empty.pipe(
    HttpRouter.get(path, jsonWith(history)),
    HttpRouter.get(`${path}/events`, Events.json(every, read)),
    HttpRouter.get(`${path}/view`, htmlWith(history, viewOptions)),
    HttpRouter.get(
      `${path}/view/events`,
      Events.view(every, read, (h) => View.renderLive(h, viewOptions))
    )
  )
  return options?.authorize === undefined ? routes : routes.pipe(Operations.routes(path, options.authorize))
}

/** @internal */
export const router = <R = never>(
  options?: RouterOptions<R>
): HttpRouter.HttpRouter<never, BreakerRegistry.BreakerRegistry | R> => build(options, undefined)

/** @internal */
export const make = <R = never>(
  options?: MakeOptions<R>
): Effect.Effect<
  HttpRouter.HttpRouter<never, BreakerRegistry.BreakerRegistry | R>,
  CircuitBreaker.InvalidBreakerOptions,
  Scope.Scope | BreakerRegistry.BreakerRegistry
> =>
  Effect.gen(function* () {
    const resolved = yield* History.resolve(options)
    const history = yield* History.start(resolved)
    return build(options, history)
  })
