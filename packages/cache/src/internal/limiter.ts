import { OptionRules } from "@circuitry/core"
import * as Edition from "@circuitry/core/Edition"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/**
 * A `getOrLoad` turned away by the load cap: its line was full (`maxQueuedLoads`) or it waited
 * longer than `maxLoadWait` for its turn.
 *
 * @internal
 */
export class LoadRejected extends Schema.TaggedError<LoadRejected>()("LoadRejected", {
  key: Schema.String,
  // One of two strings, by the option rules (`Schema.Literal` takes one literal on Effect 4).
  reason: OptionRules.OneOf("queue-full", "wait-exceeded"),
  message: Schema.String
}) {}

/** @internal */
export interface Bounds {
  /** How many may wait in line; more are rejected at once. Unbounded when absent. */
  readonly maxQueued?: number | undefined
  /** How long one may wait in line, on the Effect Clock. Unbounded when absent. */
  readonly maxWaitMillis?: number | undefined
}

/**
 * At most `max` effects at once; the others wait in line (first come, first served), at most
 * `maxQueued` of them and each at most `maxWaitMillis`. A release hands its permit to the first
 * in line, waking that one fiber only. (Effect's Semaphore wakes every waiter on each release and
 * lets them race for the permit: with a thousand waiters that is a million wake-ups.)
 *
 * @internal
 */
export class Limiter {
  private running = 0
  /** A Set keeps insertion order: the line. Each entry hands the permit to its fiber. */
  private readonly line = new Set<() => void>()

  constructor(
    readonly max: number,
    private readonly bounds: Bounds = {}
  ) {}

  private release(): void {
    const next = this.line.values().next()
    if (next.done) {
      this.running--
    } else {
      this.line.delete(next.value)
      next.value() // the permit passes on: `running` is unchanged
    }
  }

  /** True when a permit was taken; false when the line is full. */
  private readonly acquire: Effect.Effect<boolean> = Edition.callback<boolean, never>((resume) => {
    if (this.running < this.max) {
      this.running++
      resume(Effect.succeed(true))
      return
    }
    if (this.bounds.maxQueued !== undefined && this.line.size >= this.bounds.maxQueued) {
      resume(Effect.succeed(false))
      return
    }
    let handed = false
    const hand = () => {
      handed = true
      resume(Effect.succeed(true))
    }
    this.line.add(hand)
    return Effect.sync(() => {
      // Interrupted in line (or past its wait): leave it. Interrupted just as the permit arrived: pass it on.
      if (handed) this.release()
      else this.line.delete(hand)
    })
  })

  private readonly bounded: (key: string) => Effect.Effect<void, LoadRejected> = (key) => {
    const wait = this.bounds.maxWaitMillis
    const taken =
      wait === undefined
        ? Effect.map(this.acquire, (ok) => (ok ? ("taken" as const) : ("queue-full" as const)))
        : Effect.map(Effect.timeout(this.acquire, Duration.millis(wait)).pipe(Effect.option), (o) =>
            o._tag === "None" ? ("wait-exceeded" as const) : o.value ? ("taken" as const) : ("queue-full" as const)
          )
    return Effect.flatMap(taken, (outcome) =>
      outcome === "taken"
        ? Effect.void
        : Effect.fail(
            new LoadRejected({
              key,
              reason: outcome,
              message:
                outcome === "queue-full"
                  ? `load of "${key}" rejected: ${this.bounds.maxQueued} loads already wait for one of ${this.max} slots (maxQueuedLoads)`
                  : `load of "${key}" rejected: no slot of ${this.max} free within ${wait} ms (maxLoadWait)`
            })
          )
    )
  }

  /** Runs `self` with a permit; `key` names the load in a rejection. */
  readonly withPermit = <A, E, R>(self: Effect.Effect<A, E, R>, key = ""): Effect.Effect<A, E | LoadRejected, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.andThen(
        restore(this.bounded(key)),
        Effect.ensuring(
          restore(self),
          Effect.sync(() => this.release())
        )
      )
    )
}
