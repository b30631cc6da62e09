/**
 * The health route's server-sent events. A connection follows every breaker's `changes` (through
 * its own `Follower`) and takes a snapshot at once and then every `refreshSeconds` on the Effect
 * Clock; the JSON stream sends `health` and `transition` events, the view's stream sends the
 * re-rendered live part of the page (`view`) on each snapshot and each transition.
 */
import type { CircuitBreaker } from "@circuitry/breaker"
import * as Edition from "@circuitry/core/Edition"
import { perChunk } from "#effects"
import { HttpServerResponse, type App } from "#http"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import type { Health } from "../HealthRoute.js"
import * as Follow from "./healthFollow.js"
import type { List } from "./healthSources.js"

type Update =
  | { readonly _tag: "Tick" }
  | { readonly _tag: "Transition"; readonly breaker: string; readonly transition: CircuitBreaker.Transition }

/** One event in the text/event-stream format; every line of `data` gets its own `data:` field. */
const event = (name: string, data: string): string => `event: ${name}\ndata: ${data.split("\n").join("\ndata: ")}\n\n`

const updates = <R>(every: Duration.Duration, list: List<R>): Stream.Stream<Update, never, R> =>
  Edition.unwrapScoped(
    Effect.gen(function* () {
      // A burst of transitions is never a reason to hold memory without bound: keep the newest.
      const queue = yield* Queue.sliding<Update>(1024)
      const follower = yield* Follow.make(list, (breaker, transition) =>
        Queue.offer(queue, { _tag: "Transition", breaker: breaker.name, transition })
      )
      const ticks = Stream.mapEffect(Stream.tick(every), () => Effect.as(follower.sync, { _tag: "Tick" } as Update))
      return Stream.merge(ticks, Stream.fromQueue(queue))
    })
  )

const respond = <R>(stream: Stream.Stream<string, never, R>) =>
  Effect.map(Effect.context<R>(), (context) =>
    HttpServerResponse.stream(Stream.encodeText(Stream.provideContext(stream, context)), {
      contentType: "text/event-stream",
      headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
    })
  )

/** @internal */
export const json = <R>(
  every: Duration.Duration,
  list: List<R>,
  health: Effect.Effect<Health, never, R>
): App<never, R> =>
  respond(
    Stream.mapEffect(updates(every, list), (update) =>
      update._tag === "Tick"
        ? Effect.map(health, (h) => event("health", JSON.stringify(h)))
        : Effect.succeed(
            event(
              "transition",
              JSON.stringify({
                breaker: update.breaker,
                ...update.transition,
                at: new Date(update.transition.at).toISOString()
              })
            )
          )
    )
  )

/** @internal */
export const view = <R>(
  every: Duration.Duration,
  list: List<R>,
  health: Effect.Effect<Health, never, R>,
  render: (health: Health) => string
): App<never, R> =>
  // One render per chunk of updates, so that a burst of transitions is one re-render, not one each.
  respond(
    perChunk(
      updates(every, list),
      Effect.map(health, (h) => event("view", render(h)))
    )
  )
