/**
 * Each group's time limit, sized to the machine as `pnpm bench` finds it (issue 24): a fixed CPU
 * workload is timed at the start, and every limit is its quiet-machine value scaled by how much
 * slower the workload ran than on a quiet machine, never below that value. On a machine shared
 * with other work a group takes several times its quiet duration, and a fixed limit killed it.
 * The timing and the scaling are test-support/calibrate.ts's, which the tests size their
 * timeouts with.
 */
import { timeoutFrom, timeSample } from "../../../test-support/calibrate.js"
import { median } from "./stats.js"

/** Iterations of the workload: about 50 ms of one core of the reference machine. */
const ITERATIONS = 30_000_000

/**
 * Timings of the workload; their median is the calibration. On a shared machine one timing can be
 * twice or half the next (the other work comes and goes), and the first one also compiles the loop.
 */
const SAMPLES = 9

/**
 * The calibration workload: integer arithmetic alone (a xorshift generator), no allocation, no
 * I/O, so its time is the CPU the process gets and how fast that CPU is. Returns its checksum,
 * so that the loop cannot be optimised away.
 */
export const workload = (iterations: number = ITERATIONS): number => {
  let x = 0x9e3779b9 | 0
  let sum = 0
  for (let i = 0; i < iterations; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    sum = (sum + (x & 0xffff)) | 0
  }
  return sum
}

/**
 * The workload's time on a quiet machine, in milliseconds: its CPU time (user + system) on the
 * reference machine (the 2-core Xeon of docs/benchmarks.md), which is its wall time when it has a
 * core to itself: 33-35 ms per 20 million iterations and 67 ms per 40 million, in twelve runs.
 */
export const QUIET_MILLIS = 50

/** The workload as timed in this run. */
export interface Calibration {
  /** Each timing's wall time, in milliseconds. */
  readonly samples: ReadonlyArray<number>
  /** Their median. */
  readonly millis: number
  readonly quietMillis: number
  /** `millis / quietMillis`: how much slower than on a quiet machine. */
  readonly ratio: number
}

/** The calibration from the workload's timings (milliseconds each). */
export const calibration = (samples: ReadonlyArray<number>, quietMillis: number = QUIET_MILLIS): Calibration => {
  const millis = median(samples)
  return { samples, millis, quietMillis, ratio: millis / quietMillis }
}

/** Times the workload `SAMPLES` times on this machine, now. */
export const calibrate = async (): Promise<Calibration> => {
  const samples: Array<number> = []
  for (let i = 0; i < SAMPLES; i++) samples.push(await timeSample(() => workload()))
  return calibration(samples)
}

/**
 * A group's time limit for this run: `quietLimitMillis` (its limit on a quiet machine, which
 * already allows many times the group's quiet duration, so no further margin) times the
 * calibration's ratio, and never below `quietLimitMillis`: a fast machine keeps the quiet limits.
 */
export const limitFor = (quietLimitMillis: number, c: Calibration): number =>
  timeoutFrom(c.millis, quietLimitMillis / c.quietMillis, { margin: 1, floorMillis: quietLimitMillis })

/** The limit of a kind of group, on a quiet machine and in this run. */
export interface Limit {
  readonly what: string
  readonly quietMillis: number
  readonly millis: number
}

/** Sizes each kind's limit for this run. */
export const limits = <K extends string>(
  kinds: Readonly<Record<K, { readonly what: string; readonly quietMillis: number }>>,
  c: Calibration
): Record<K, Limit> => {
  const sized = {} as Record<K, Limit>
  for (const kind of Object.keys(kinds) as Array<K>) {
    sized[kind] = { ...kinds[kind], millis: limitFor(kinds[kind].quietMillis, c) }
  }
  return sized
}

const ms = (n: number): string => `${Math.round(n).toLocaleString("en")} ms`
const s = (millis: number): string => `${Math.round(millis / 1000).toLocaleString("en")} s`

/** The calibration in words, for the terminal and the report. */
export const calibrationText = (c: Calibration): string =>
  `a fixed CPU workload took ${ms(c.millis)} (median of ${c.samples.map((n) => Math.round(n)).join(", ")} ms) against ${ms(c.quietMillis)} on a quiet machine: ${c.ratio.toFixed(2)}x`

/** The limits in words, for the terminal and the report. */
export const limitsText = (all: ReadonlyArray<Limit>): string =>
  all.map((l) => `${l.what} ${s(l.millis)} (${s(l.quietMillis)} on a quiet machine)`).join("; ")
