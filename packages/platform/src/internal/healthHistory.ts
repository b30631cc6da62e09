/**
 * The health route's short memory: per breaker, a bounded ring of samples (state, window counts,
 * failure rate) taken every `every` on the Effect Clock, and a bounded ring of its transitions.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { BreakerHistory, Sample } from "../HealthRoute.js"
import * as Follow from "./healthFollow.js"
import type { List } from "./healthSources.js"

/** A fixed-capacity ring: pushing past capacity drops the oldest. */
class Ring<A> {
  private readonly items: Array<A> = []
  private start = 0
  constructor(readonly capacity: number) {}
  push(item: A): void {
    if (this.items.length < this.capacity) this.items.push(item)
    else {
      this.items[this.start] = item
      this.start = (this.start + 1) % this.capacity
    }
  }
  toArray(): Array<A> {
    return [...this.items.slice(this.start), ...this.items.slice(0, this.start)]
  }
}

type Transition = BreakerHistory["transitions"][number]

interface Entry {
  readonly samples: Ring<Sample>
  readonly transitions: Ring<{ readonly at: number; readonly transition: Transition }>
}

/** The history the route's options ask for (options.ts decodes them). @internal */
export interface Resolved {
  readonly samples: number
  readonly everyMillis: number
}

/** @internal */
export interface History {
  readonly of: (name: string) => BreakerHistory | undefined
}

const iso = (millis: number) => new Date(millis).toISOString()

/** @internal */
export const start = <R>(options: Resolved, list: List<R>): Effect.Effect<History, never, Scope.Scope | R> =>
  Effect.gen(function* () {
    const entries = new Map<string, Entry>()
    const entry = (name: string): Entry => {
      let found = entries.get(name)
      if (found === undefined) {
        found = { samples: new Ring(options.samples), transitions: new Ring(options.samples) }
        entries.set(name, found)
      }
      return found
    }
    const follower = yield* Follow.make(list, (breaker, t) =>
      Effect.sync(() =>
        entry(breaker.name).transitions.push({ at: t.at, transition: { from: t.from, to: t.to, at: iso(t.at) } })
      )
    )
    const sample = Effect.gen(function* () {
      const breakers = yield* follower.sync
      const now = yield* Clock.currentTimeMillis
      const names = new Set<string>()
      for (const breaker of breakers) {
        const { counts, state } = yield* breaker.snapshot
        names.add(breaker.name)
        entry(breaker.name).samples.push({
          at: iso(now),
          state: state._tag,
          calls: counts.calls,
          failures: counts.failures,
          failureRate: counts.calls === 0 ? null : counts.failures / counts.calls
        })
      }
      for (const name of entries.keys()) if (!names.has(name)) entries.delete(name) // dropped by its registry
    })
    // The first sample is taken now, so what `make` returns already knows the registry as it is.
    yield* sample
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(Duration.millis(options.everyMillis)), sample)))
    const span = options.samples * options.everyMillis
    return {
      of: (name) => {
        const found = entries.get(name)
        if (found === undefined) return undefined
        const samples = found.samples.toArray()
        // Transitions as old as the samples go back, and no older.
        const since = samples.length === 0 ? -Infinity : Date.parse(samples[samples.length - 1]!.at) - span
        return {
          samples,
          transitions: found.transitions
            .toArray()
            .filter((t) => t.at > since)
            .map((t) => t.transition)
        }
      }
    }
  })
