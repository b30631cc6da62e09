/**
 * One scenario while it runs: its world, its arrivals, its requests in flight, and what they did.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Virtual from "#virtual"
import { currentOrigin, currentRandom } from "./fault.js"
import * as Random from "./random.js"
import type { Figures, Report, Second } from "../Scenario.js"
import { TypeId } from "./report.js"
import { type Runner, World } from "./world.js"

/** Counts what a scenario's fibers report with `count`, by the second of scenario time. */
class Recorder {
  readonly counts = new Map<string, Float64Array>()
  constructor(
    private readonly world: World,
    private readonly start: number,
    private readonly seconds: number
  ) {}

  /** The second of scenario time now; what happens after the last second counts in the last. */
  get second(): number {
    return Math.min(this.seconds - 1, Math.max(0, Math.floor((this.world.now - this.start) / 1000)))
  }

  add(name: string, second: number, by: number): void {
    let counts = this.counts.get(name)
    if (counts === undefined) this.counts.set(name, (counts = new Float64Array(this.seconds)))
    counts[second]! += by
  }
}

const currentRecorder = Virtual.local<Recorder | undefined>("@circuitry/chaos/currentRecorder", undefined)

/** @internal */
export const count = (name: string, by = 1): Effect.Effect<void> =>
  Virtual.withCurrent((fiber) => {
    const recorder = Virtual.get(fiber, currentRecorder)
    if (recorder !== undefined) recorder.add(name, recorder.second, by)
    return Effect.void
  })

/** The nearest-rank percentile of sorted values; 0 when there are none. */
const percentile = (sorted: Float64Array, q: number): number =>
  sorted.length === 0 ? 0 : sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!

const figures = (latencies: Float64Array, failures: number, counters: Record<string, number>): Figures => {
  latencies.sort()
  return {
    calls: latencies.length,
    failures,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    counters
  }
}

/** @internal */
export interface Plan {
  /** Clock milliseconds at which scenario time 0 is. */
  readonly start: number
  readonly durationMillis: number
  readonly seconds: number
  /** Requests per second, for each second. */
  readonly rates: ReadonlyArray<number>
  readonly seed: number
  readonly timeoutMillis: number | undefined
  readonly deadlineMillis: number | undefined
  readonly drainMillis: number
  readonly metrics: ReadonlyArray<readonly [string, Virtual.Counter]>
}

/** @internal */
export class Running<R> {
  private readonly world: World
  private readonly recorder: Recorder
  private readonly runner: Runner<R>
  private readonly latencies: Array<Array<number>>
  private readonly failures: Float64Array
  /** Each request in flight: the second it arrived in, and when. */
  private readonly inFlight = new Map<Virtual.RequestFiber, { readonly second: number; readonly at: number }>()
  private done = false
  // The arrival cursor: request `k` is next; `base` is the expected count at the start of `second`.
  private k = 0
  private second = 0
  private base = 0
  // Metric counters: their values when last read, and the next second to read them for.
  private readonly last: Array<number>
  private sampled = 0

  constructor(
    caller: Virtual.Caller<R>,
    private readonly request: (i: number) => Effect.Effect<unknown, unknown, R>,
    private readonly plan: Plan
  ) {
    this.world = new World(plan.start)
    this.recorder = new Recorder(this.world, plan.start, plan.seconds)
    // Every fiber of the scenario reads the virtual clock, knows where scenario time starts, and
    // where to count.
    this.runner = Virtual.runner(caller, this.world, [
      Virtual.set(currentOrigin, plan.start),
      Virtual.set(currentRecorder, this.recorder)
    ])
    this.latencies = Array.from({ length: plan.seconds }, () => [])
    this.failures = new Float64Array(plan.seconds)
    this.last = plan.metrics.map(([, metric]) => this.runner.read(metric))
  }

  /** Runs one virtual second of events (or to the end); true when the scenario is over. */
  turn(): boolean {
    if (this.done) return true
    const world = this.world
    let until: number | undefined
    const drainUntil = this.plan.start + this.plan.durationMillis + this.plan.drainMillis
    for (;;) {
      const arrival = this.nextArrival()
      const timer = world.next()
      if (arrival === undefined && this.inFlight.size === 0) return this.stop()
      const t = arrival === undefined ? timer : timer === undefined ? arrival : Math.min(arrival, timer)
      if (t === undefined || t > drainUntil) {
        // Nothing left that could wake what is still in flight, or its time is up.
        world.now = Math.max(world.now, drainUntil)
        return this.stop()
      }
      until ??= t + 1000
      if (t > until) return false
      this.readMetricsUpTo(t)
      if (arrival !== undefined && (timer === undefined || arrival < timer)) {
        world.now = arrival
        this.launch(this.k++, this.second)
        world.settle()
      } else {
        world.step()
      }
    }
  }

  /** Interrupts what is still in flight (it failed), and ends the scenario. */
  stop(): true {
    if (this.done) return true
    this.done = true
    for (const fiber of this.inFlight.keys()) Virtual.interrupt(fiber)
    this.world.settle()
    // A request that could not even finish being interrupted (its finalizer waits) failed now.
    for (const fiber of [...this.inFlight.keys()]) this.finished(fiber, true)
    return true
  }

  report(): Report {
    const { seconds } = this.plan
    this.readMetricsUpTo(Infinity)
    this.readMetrics(this.sampled)
    const names = [...this.recorder.counts.keys()].sort()
    const all = new Float64Array(this.latencies.reduce((n, list) => n + list.length, 0))
    let offset = 0
    const perSecond: Array<Second> = []
    for (let s = 0; s < seconds; s++) {
      const sorted = Float64Array.from(this.latencies[s]!)
      all.set(sorted, offset)
      offset += sorted.length
      const counters = Object.fromEntries(names.map((name) => [name, this.recorder.counts.get(name)![s]!]))
      perSecond.push({ second: s, ...figures(sorted, this.failures[s]!, counters) })
    }
    const totals = Object.fromEntries(
      names.map((name) => [name, this.recorder.counts.get(name)!.reduce((sum, n) => sum + n, 0)])
    )
    return {
      [TypeId]: TypeId,
      seed: this.plan.seed,
      durationMillis: this.plan.durationMillis,
      seconds: perSecond,
      total: figures(
        all,
        this.failures.reduce((sum, n) => sum + n, 0),
        totals
      )
    }
  }

  /** The next arrival's Clock time: the rate is the slope of the expected count, and request k
   * arrives when the count reaches k. */
  private nextArrival(): number | undefined {
    const { durationMillis, rates, seconds, start } = this.plan
    while (this.second < seconds) {
      const rate = rates[this.second]!
      const from = this.second * 1000
      const to = Math.min(durationMillis, from + 1000)
      if (rate > 0) {
        // Whole milliseconds, as the clock has; several requests may arrive in the same one.
        const t = from + Math.floor(((this.k - this.base) * 1000) / rate)
        if (t < to) return start + t
      }
      this.base += (rate * (to - from)) / 1000
      this.second++
    }
    return undefined
  }

  private launch(i: number, second: number): void {
    const at = this.world.now
    let request: Effect.Effect<unknown, unknown, R>
    try {
      request = this.request(i)
    } catch (defect) {
      request = Effect.die(defect)
    }
    const effect = this.plan.timeoutMillis === undefined ? request : Effect.timeout(request, this.plan.timeoutMillis)
    // Each request draws its faults from a stream of its own.
    const random = Random.make(Random.derive(this.plan.seed, i))
    const fiber = this.runner.fork(effect, Virtual.set(currentRandom, random))
    this.inFlight.set(fiber, { second, at })
    const deadline = this.plan.deadlineMillis
    fiber.addObserver((exit) =>
      this.finished(fiber, Exit.isFailure(exit) || (deadline !== undefined && this.world.now - at > deadline))
    )
  }

  private finished(fiber: Virtual.RequestFiber, failed: boolean): void {
    const request = this.inFlight.get(fiber)
    if (request === undefined) return
    this.inFlight.delete(fiber)
    const { at, second } = request
    this.latencies[second]!.push(this.world.now - at)
    if (failed) this.failures[second]!++
  }

  /** Metric counters are read at each second's end: what they gained in it is that second's. */
  private readMetricsUpTo(t: number): void {
    const { seconds, start } = this.plan
    while (this.sampled < seconds - 1 && start + (this.sampled + 1) * 1000 <= t) this.readMetrics(this.sampled++)
  }

  private readMetrics(second: number): void {
    this.plan.metrics.forEach(([name, metric], m) => {
      const value = this.runner.read(metric)
      this.recorder.add(name, second, value - this.last[m]!)
      this.last[m] = value
    })
  }
}
