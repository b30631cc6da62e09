/**
 * Types the two testkit editions share (the same on both majors): each edition re-exports them.
 */
import type * as Cause from "effect/Cause"

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
