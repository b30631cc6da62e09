/**
 * The overload simulation, in virtual time: a dependency with capacity C (latency is
 * `base` while at most C calls are in it, growing linearly beyond), called open-loop at a multiple
 * of its capacity by callers that give up at a deadline (the dependency keeps working on what they
 * abandoned, as a real server does). Through a limiter, or not, the figures are the goodput (calls
 * answered within the deadline, per second, as a share of the capacity C / base) and the latency
 * percentiles of the calls that were admitted.
 */
import * as Edition from "@circuitry/core/Edition"
import * as Heap from "@circuitry/core/Heap"
import { Limiter } from "@circuitry/limiter"
import type { Limit } from "@circuitry/limiter"
import { runVirtual as runOn, timeoutError, type VirtualTime } from "@circuitry/testkit"
import { Effect, Fiber } from "effect"

export interface Dependency {
  /** Calls the dependency serves at the base latency. */
  readonly capacity: number
  /** Latency in ms at or under capacity. */
  readonly baseMillis: number
  /** The callers' deadline in ms: a slower answer is a timeout. */
  readonly deadlineMillis: number
}

export const DEPENDENCY: Dependency = { capacity: 10, baseMillis: 100, deadlineMillis: 1000 }

/** A phase of constant load: `load` times the capacity, with the dependency's capacity scaled by `capacity`. */
export interface Phase {
  readonly seconds: number
  readonly load: number
  readonly capacity?: number
}

export interface Window {
  readonly from: number
  readonly to: number
  /** Answered within the deadline, per second, over the capacity (C / base) at that time. */
  readonly goodput: number
  readonly p50: number
  readonly p99: number
  readonly admitted: number
  /** Admitted calls by partition. */
  readonly byPartition: Record<string, number>
  readonly rejected: number
  readonly timeouts: number
  /** Mean limit over the window (NaN without a limiter). */
  readonly meanLimit: number
}

export interface Run {
  /** [time ms, limit] every 100 ms (empty without a limiter). */
  readonly limits: ReadonlyArray<readonly [number, number]>
  readonly window: (fromSeconds: number, toSeconds: number) => Window
}

interface Call {
  readonly partition: string | undefined
  readonly start: number
  end: number
  ok: boolean
}

/** Exponential inter-arrival times from a seeded generator: the same arrivals in every run. */
const arrivals = (phases: ReadonlyArray<Phase>, dependency: Dependency): Array<number> => {
  let seed = 0x2545f491
  const random = () => {
    seed ^= seed << 13
    seed ^= seed >>> 17
    seed ^= seed << 5
    return ((seed >>> 0) + 0.5) / 4294967296
  }
  const times: Array<number> = []
  let phaseStart = 0
  for (const phase of phases) {
    const perMilli = (phase.load * dependency.capacity) / dependency.baseMillis
    const end = phaseStart + phase.seconds * 1000
    for (let t = phaseStart - Math.log(random()) / perMilli; t < end; t -= Math.log(random()) / perMilli) {
      times.push(Math.round(t)) // the Clock counts whole milliseconds
    }
    phaseStart = end
  }
  return times
}

/** The times at which the dependency finishes work it has accepted: a min-heap. */
const finishTimes = () => Heap.make<number>((a, b) => a < b)

/** Drops the work finished by `t`. */
const popUntil = (work: Heap.Heap<number>, t: number): void => {
  while (work.size > 0 && work.peek()! <= t) work.pop()
}

const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

/**
 * A discrete-event virtual clock. `TestClock.adjust` waits for real timers (two `setTimeout(0)`)
 * at every step and every due sleep, so the ~100,000 events of this simulation would take many
 * minutes of real time; this clock jumps from one due sleep to the next instead, with every fiber
 * on a scheduler that the driver (the testkit's `runVirtual`, one per major) steps until all of
 * them are suspended. Time is as virtual and as deterministic as with TestClock.
 */
class VirtualClock {
  now = 0
  private seq = 0
  private readonly timers: Array<{ readonly at: number; readonly seq: number; readonly wake: () => void }> = []
  sleep = (millis: number, wake: () => void): (() => void) => {
    const timer = { at: this.now + millis, seq: this.seq++, wake }
    this.insert(timer)
    return () => {
      const i = this.timers.indexOf(timer)
      if (i >= 0) this.timers.splice(i, 1)
    }
  }
  private insert(timer: { readonly at: number; readonly seq: number; readonly wake: () => void }) {
    // Kept sorted by (at, seq), latest first, so the next due timer pops off the end.
    let lo = 0
    let hi = this.timers.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      const t = this.timers[mid]!
      if (t.at > timer.at || (t.at === timer.at && t.seq > timer.seq)) lo = mid + 1
      else hi = mid
    }
    this.timers.splice(lo, 0, timer)
  }
  /** Moves time to the next due sleep and wakes it; false when nothing sleeps. */
  advance = (): boolean => {
    const timer = this.timers.pop()
    if (timer === undefined) return false
    this.now = Math.max(this.now, timer.at)
    timer.wake()
    return true
  }
}

/** Runs `program` to its end in virtual time on the clock given to it. */
const runVirtual = <A>(program: (clock: VirtualClock) => Effect.Effect<A>): A => {
  const clock = new VirtualClock()
  const time: VirtualTime = { now: () => clock.now, sleep: clock.sleep, advance: clock.advance }
  return runOn(program(clock), time)
}

export interface Partitioned {
  /** Guaranteed shares, as `Limiter.Options.partitions`. */
  readonly shares: Record<string, number>
  /** Which share of the arrivals each partition sends. */
  readonly mix: ReadonlyArray<readonly [string, number]>
}

export const simulate = (
  limit: Limit.Limit | undefined,
  phases: ReadonlyArray<Phase>,
  options?: { readonly dependency?: Dependency; readonly partitioned?: Partitioned }
): Run =>
  runVirtual((clock) =>
    Effect.gen(function* () {
      const dependency = options?.dependency ?? DEPENDENCY
      const partitioned = options?.partitioned
      const limiter =
        limit === undefined
          ? undefined
          : yield* Effect.orDie(
              Effect.scoped(
                Limiter.make({
                  name: "simulated",
                  limit,
                  ...(partitioned === undefined ? {} : { partitions: partitioned.shares })
                })
              )
            )
      const times = arrivals(phases, dependency)
      const total = phases.reduce((sum, p) => sum + p.seconds * 1000, 0)
      const capacityAt = (t: number): number => {
        let start = 0
        for (const phase of phases) {
          if (t < start + phase.seconds * 1000) return dependency.capacity * (phase.capacity ?? 1)
          start += phase.seconds * 1000
        }
        return dependency.capacity
      }
      const work = finishTimes()
      const calls: Array<Call> = []
      const rejected: Array<number> = []
      const call = (partition: string | undefined) =>
        Effect.suspend(() => {
          const now = clock.now
          popUntil(work, now)
          const latency = Math.round(dependency.baseMillis * Math.max(1, (work.size + 1) / capacityAt(now)))
          work.push(now + latency)
          const record: Call = { start: now, end: now, ok: false, partition }
          calls.push(record)
          const answered = latency <= dependency.deadlineMillis
          return Effect.sleep(answered ? latency : dependency.deadlineMillis).pipe(
            Effect.andThen(
              Effect.suspend(() => {
                record.end = clock.now
                record.ok = answered
                return answered ? Effect.void : Effect.fail(timeoutError())
              })
            )
          )
        })
      const attemptIn = (partition: string | undefined) => {
        const guarded =
          limiter === undefined ? call(partition) : Limiter.withLimiter(call(partition), limiter, { partition })
        return Effect.ignore(
          Effect.catchTag(guarded, "LimiterRejectedError", () => Effect.sync(() => void rejected.push(clock.now)))
        )
      }
      let pick = 0x1234567
      const partitionOf = (): string | undefined => {
        if (partitioned === undefined) return undefined
        pick ^= pick << 13
        pick ^= pick >>> 17
        pick ^= pick << 5
        let u = (pick >>> 0) / 4294967296
        for (const [name, share] of partitioned.mix) {
          if (u < share) return name
          u -= share
        }
        return partitioned.mix[partitioned.mix.length - 1]?.[0]
      }
      const limits: Array<readonly [number, number]> = []
      if (limiter !== undefined) {
        yield* Edition.forkChild(
          Effect.gen(function* () {
            for (let t = 0; t < total; t += 100) {
              limits.push([t, yield* limiter.limit])
              yield* Effect.sleep(100)
            }
          })
        )
      }
      const fibers: Array<Edition.Fiber<void, never>> = []
      for (const t of times) {
        if (t > clock.now) yield* Effect.sleep(t - clock.now)
        fibers.push(yield* Edition.forkChild(attemptIn(partitionOf())))
      }
      yield* Effect.sleep(total + dependency.deadlineMillis - clock.now)
      for (const f of fibers) yield* Fiber.join(f)
      const window = (fromSeconds: number, toSeconds: number): Window => {
        const from = fromSeconds * 1000
        const to = toSeconds * 1000
        const admitted = calls.filter((c) => c.start >= from && c.start < to)
        const latencies = admitted.map((c) => c.end - c.start).sort((a, b) => a - b)
        const answered = calls.filter((c) => c.ok && c.end >= from && c.end < to).length
        let capacityCalls = 0
        for (let t = from; t < to; t += 10) capacityCalls += (capacityAt(t) / dependency.baseMillis) * 10
        const inWindow = limits.filter(([t]) => t >= from && t < to)
        const byPartition: Record<string, number> = {}
        for (const c of admitted)
          if (c.partition !== undefined) byPartition[c.partition] = (byPartition[c.partition] ?? 0) + 1
        return {
          byPartition,
          from: fromSeconds,
          to: toSeconds,
          goodput: answered / capacityCalls,
          p50: percentile(latencies, 50),
          p99: percentile(latencies, 99),
          admitted: admitted.length,
          rejected: rejected.filter((t) => t >= from && t < to).length,
          timeouts: admitted.filter((c) => !c.ok).length,
          meanLimit: inWindow.length === 0 ? NaN : inWindow.reduce((s, [, l]) => s + l, 0) / inWindow.length
        }
      }
      return { limits, window } satisfies Run
    })
  )
