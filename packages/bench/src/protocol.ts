/**
 * What a child process reports to `main.ts`: one JSON line after a marker on its stdout.
 */
import type { Measured } from "./harness.js"

export const MARKER = "@@circuitry-bench@@"

export interface TimedGroup {
  readonly _tag: "Timed"
  readonly group: string
  /** The id of the row that other rows are compared with. */
  readonly floor: string
  readonly rows: ReadonlyArray<Measured>
  readonly notes: ReadonlyArray<string>
}

export interface MemoryRow {
  readonly id: string
  readonly label: string
  /** Median over the repeats of (heap used after - before) / breakers. */
  readonly bytesPerBreaker: number
  readonly samples: ReadonlyArray<number>
  readonly breakers: number
  /** Milliseconds to create them all (median). */
  readonly createMillis: number
}

export interface MemoryGroup {
  readonly _tag: "Memory"
  readonly group: string
  readonly rows: ReadonlyArray<MemoryRow>
  readonly notes: ReadonlyArray<string>
}

/** `major`: the Effect major the child loaded (@circuitry/core's edition), when it reported one. */
export type GroupResult = (TimedGroup | MemoryGroup) & { readonly major?: number }

/** Prints a result where the parent finds it. */
export const report = (result: GroupResult): void => {
  process.stdout.write(`\n${MARKER}${JSON.stringify(result)}\n`)
}

/** Finds a child's result in its stdout. */
export const parse = (stdout: string): GroupResult | undefined => {
  const line = stdout.split("\n").find((l) => l.startsWith(MARKER))
  return line === undefined ? undefined : (JSON.parse(line.slice(MARKER.length)) as GroupResult)
}

/** Scales call counts, so a smoke run (BENCH_SCALE=0.05) takes seconds. */
export const scaled = (n: number): number => {
  const scale = Number(process.env["BENCH_SCALE"] ?? "1")
  return Math.max(1, Math.round(n * (Number.isFinite(scale) && scale > 0 ? scale : 1)))
}
