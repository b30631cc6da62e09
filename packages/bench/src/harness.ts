/**
 * The measuring loop shared by every timed group.
 *
 * Cases run round-robin (each repeat visits every case, starting from a different one), so that
 * load from other work on the machine falls on all of them alike; each figure is the median of
 * the repeats. Time is the process's CPU time (user + system), so that waiting for a core while
 * other work runs is not counted; wall time is kept beside it.
 *
 * No forced garbage collection between samples: a full `gc()` makes the next sample several times
 * slower (the young generation and the inline caches start cold again), which would penalise
 * whichever row runs right after it.
 */
import { median, spread } from "./stats.js"

/** One row of a group: `run(n)` makes `n` calls and resolves when they are done. */
export interface Case {
  readonly id: string
  readonly label: string
  readonly run: (n: number) => Promise<void>
}

/** What a child process reports for one case. */
export interface Measured {
  readonly id: string
  readonly label: string
  /**
   * Median CPU nanoseconds per call over the repeats: the process's user + system time, so that
   * time spent waiting for a core while other work runs on the machine is not counted.
   */
  readonly nsPerCall: number
  /** Median wall-clock nanoseconds per call. */
  readonly wallNsPerCall: number
  /** Noise of the CPU samples: half the interquartile range over the median. */
  readonly spread: number
  readonly samples: ReadonlyArray<number>
  readonly callsPerSample: number
}

export interface Plan {
  /** Calls per timed sample. */
  readonly calls: number
  /** Calls per warm-up round (two rounds per case, before any sample). */
  readonly warmup: number
  readonly repeats: number
}

/** Runs every case `plan.repeats` times after a warm-up; returns medians in the cases' order. */
export const measure = async (cases: ReadonlyArray<Case>, plan: Plan): Promise<ReadonlyArray<Measured>> => {
  for (let round = 0; round < 2; round++) {
    for (const c of cases) await c.run(plan.warmup)
  }
  const samples = cases.map(() => [] as Array<number>)
  const wall = cases.map(() => [] as Array<number>)
  for (let r = 0; r < plan.repeats; r++) {
    for (let k = 0; k < cases.length; k++) {
      const i = (k + r) % cases.length
      const start = process.hrtime.bigint()
      const cpuStart = process.cpuUsage()
      await cases[i]!.run(plan.calls)
      const cpu = process.cpuUsage(cpuStart)
      const elapsed = Number(process.hrtime.bigint() - start)
      samples[i]!.push(((cpu.user + cpu.system) * 1000) / plan.calls)
      wall[i]!.push(elapsed / plan.calls)
    }
  }
  return cases.map((c, i) => ({
    id: c.id,
    label: c.label,
    nsPerCall: median(samples[i]!),
    wallNsPerCall: median(wall[i]!),
    spread: spread(samples[i]!),
    samples: samples[i]!,
    callsPerSample: plan.calls
  }))
}
