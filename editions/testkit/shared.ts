/**
 * What the two testkit editions share (the same on both majors): types each edition re-exports, and
 * the logic of helpers whose only difference is a record each edition builds.
 */
import type * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

/** One log call as a test reads it: the level by Effect 4's names ("Warn", not Effect 3's "Warning"). */
export interface LogEntry {
  readonly messages: ReadonlyArray<unknown>
  readonly level: "All" | "Fatal" | "Error" | "Warn" | "Info" | "Debug" | "Trace" | "None"
  readonly annotations: Readonly<Record<string, unknown>>
  readonly cause: Cause.Cause<unknown>
}

/** One series of Effect's global metric registry: its name, its tags (attributes on 4) and its state. */
export interface MetricSeries {
  readonly name: string
  readonly attributes: Readonly<Record<string, string>>
  readonly state: unknown
}

/**
 * A Clock that runs on another (`recordingSleeps`) and keeps the wake-up times (epoch ms on that
 * Clock) of the sleeps started on it and not yet ended: what a test reads to know a timer it is
 * about to move the TestClock past is set, on both majors.
 */
export interface RecordedSleeps {
  /** The Clock to give the code under test (`withClock`, or around the construction that forks its fibers). */
  readonly clock: Clock.Clock
  /** The wake-up times of the sleeps started on `clock` and not yet ended (woken or interrupted). */
  readonly pending: Effect.Effect<ReadonlyArray<number>>
}

/**
 * Each edition's `recordingSleeps`: `over(base, sleep)` is the edition's Clock that reads `base`'s
 * time and sleeps with `sleep` (the Clock record differs between the majors, not this logic).
 */
export const recordingSleepsOver = (
  over: (base: Clock.Clock, sleep: Clock.Clock["sleep"]) => Clock.Clock
): Effect.Effect<RecordedSleeps> =>
  Effect.clockWith((base) =>
    Effect.sync(() => {
      const pending = new Set<{ readonly end: number }>()
      const clock = over(base, (duration) =>
        Effect.flatMap(base.currentTimeMillis, (now) => {
          const entry = { end: now + Duration.toMillis(duration) }
          pending.add(entry)
          return Effect.ensuring(
            base.sleep(duration),
            Effect.sync(() => pending.delete(entry))
          )
        })
      )
      return { clock, pending: Effect.sync(() => Array.from(pending, (entry) => entry.end).sort((a, b) => a - b)) }
    })
  )
