import * as Effect from "effect/Effect"

/**
 * At most `max` effects at once; the others wait in line (first come, first served). A release
 * hands its permit to the first in line, waking that one fiber only. (Effect's Semaphore wakes
 * every waiter on each release and lets them race for the permit: with a thousand waiters that is
 * a million wake-ups.)
 *
 * @internal
 */
export class Limiter {
  private running = 0
  /** A Set keeps insertion order: the line. Each entry hands the permit to its fiber. */
  private readonly line = new Set<() => void>()

  constructor(readonly max: number) {}

  private release(): void {
    const next = this.line.values().next()
    if (next.done) {
      this.running--
    } else {
      this.line.delete(next.value)
      next.value() // the permit passes on: `running` is unchanged
    }
  }

  private readonly acquire: Effect.Effect<void> = Effect.async<void>((resume) => {
    if (this.running < this.max) {
      this.running++
      resume(Effect.void)
      return
    }
    let handed = false
    const hand = () => {
      handed = true
      resume(Effect.void)
    }
    this.line.add(hand)
    return Effect.sync(() => {
      // Interrupted in line: leave it. Interrupted just as the permit arrived: pass it on.
      if (handed) this.release()
      else this.line.delete(hand)
    })
  })

  readonly withPermit = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.zipRight(
        restore(this.acquire),
        Effect.ensuring(
          restore(self),
          Effect.sync(() => this.release())
        )
      )
    )
}
