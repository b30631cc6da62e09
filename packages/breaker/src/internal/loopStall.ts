/**
 * The event loop's own stalls, and deadlines that do not blame a dependency for them.
 *
 * A stalled loop (a busy loop, a long GC, a process starved of CPU) runs no timer and reads no
 * socket. A dependency that answered during the stall has its reply waiting in the socket, but
 * Node runs expired timers before it reads sockets: without this, the deadline fires first and the
 * dependency is blamed for time the process lost. So every deadline here is kept on the loop's
 * running clock, the Clock minus the time lost to stalls: a call gets its whole limit of time in
 * which the loop could have read its answer, and is held past its Clock deadline by at most the
 * stall itself.
 */
import * as Edition from "@circuitry/core/Edition"
import * as MetricSeries from "@circuitry/core/MetricSeries"
import * as Runtime from "#runtime"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

/** @internal */
export interface LoopStall {
  readonly lostBefore: (at: number) => number
}

/** The identity of the `LoopStall` reference (its type parameter on Effect 3). @internal */
export interface LoopStallTag {
  readonly _: unique symbol
}

/** @internal */
export const LoopStallTag: Runtime.Reference<LoopStallTag, LoopStall> = Runtime.reference<LoopStallTag, LoopStall>(
  "@circuitry/breaker/LoopStall",
  () => live
)

/** How often the monitor's timer fires. */
const INTERVAL_MILLIS = 10
/** Lateness up to this is a timer's ordinary jitter, not a stall (and is not counted). */
const TOLERANCE_MILLIS = 10
/** The stalls kept to answer for times in the past (older ones are summed). */
const KEPT = 256
/** A monitor nobody has asked for this long stops its timer (the next question starts it again). */
const IDLE_MILLIS = 5 * 60_000

/** @internal */
export const stallSeconds = MetricSeries.counter({
  name: "circuitry_event_loop_stall_seconds_total",
  description: `Time the event loop lost to stalls (a timer more than ${TOLERANCE_MILLIS} ms late), in seconds`
})

/** @internal */
export const deadlineExtensions = MetricSeries.counter({
  name: "circuitry_deadline_stall_extensions_total",
  description: "Deadlines that reached their Clock time and were carried on for the time the event loop lost to a stall"
})
const countStallSeconds = Edition.counterSeries(stallSeconds, {})

/** The extension counter of each kind of deadline, made once. */
const extensions = new Map<string, (by: number) => void>()
/** @internal */
export const extensionsOf = (kind: string): ((by: number) => void) => {
  let counter = extensions.get(kind)
  if (counter === undefined) {
    counter = Edition.counterSeries(deadlineExtensions, { deadline: kind })
    extensions.set(kind, counter)
  }
  return counter
}

/**
 * The process's monitor: a timer every INTERVAL_MILLIS that sees how late it fires. Lateness past
 * TOLERANCE_MILLIS is a stall, dated on the live Clock (`Date.now`) as the interval that ends when
 * the timer finally ran. A stall still going on (the timer has not run yet: the question comes in
 * the first turn after it) is counted up to the time asked about, so the order in which expired
 * timers run does not matter. A question reads no clock unless a stall may be going on (the caller's
 * `at` is its Clock's now). Under a TestClock the dates are real ones, far from the virtual times
 * asked about, so a real stall never moves a test's deadlines; a Clock offset from the live one sees
 * the stalls offset as much.
 */
class Monitor implements LoopStall {
  private timer: ReturnType<typeof setInterval> | undefined = undefined
  /** At the last tick: `performance.now()` (lateness is measured on it) and `Date.now()` (stalls are dated on it). */
  private lastTick = 0
  private lastTickWall = 0
  /** Ticks since the last question. */
  private idleTicks = 0
  /** The last KEPT stalls, oldest first, on the live Clock (a ring). */
  private readonly froms = new Float64Array(KEPT)
  private readonly tos = new Float64Array(KEPT)
  /** Where the ring starts, and how many it holds. */
  private start = 0
  private count = 0
  /** The stalls that fell out of the ring. */
  private dropped = 0
  /** Every stall recorded, and where the first one began. */
  private total = 0
  private firstFrom = Infinity

  lostBefore(at: number): number {
    this.idleTicks = 0
    if (this.timer === undefined) {
      this.begin()
      return this.recordedBefore(at)
    }
    const recorded = this.recordedBefore(at)
    // A stall going on: the timer has not run since its last tick, and what is past its interval
    // and tolerance is lost, up to `at` (and not past the live Clock's now, for a Clock ahead of it).
    if (at - this.lastTickWall <= INTERVAL_MILLIS + TOLERANCE_MILLIS) return recorded
    const gap = Math.min(at, Date.now()) - this.lastTickWall - INTERVAL_MILLIS - TOLERANCE_MILLIS
    return gap > 0 ? recorded + gap : recorded
  }

  private recordedBefore(at: number): number {
    const last = (this.start + this.count - 1) % KEPT
    // The usual question (now, after every stall recorded) costs no loop.
    if (this.count === 0 || at >= this.tos[last]!) return this.total
    // Before the first stall (a TestClock's virtual times, in the 1970s): stable as stalls fall out of the ring.
    if (at <= this.firstFrom) return 0
    let lost = this.dropped
    for (let i = 0; i < this.count; i++) {
      const j = (this.start + i) % KEPT
      if (this.froms[j]! >= at) break
      lost += Math.min(this.tos[j]!, at) - this.froms[j]!
    }
    return lost
  }

  private begin(): void {
    this.lastTick = performance.now()
    this.lastTickWall = Date.now()
    this.timer = setInterval(() => this.tick(), INTERVAL_MILLIS)
    // A monitor never keeps a process alive (Node); a browser's timers have no unref.
    const timer = this.timer as { unref?: () => void }
    if (typeof timer.unref === "function") timer.unref()
  }

  private tick(): void {
    const now = performance.now()
    const lost = now - this.lastTick - INTERVAL_MILLIS - TOLERANCE_MILLIS
    this.lastTick = now
    this.lastTickWall = Date.now()
    if (lost > 0) this.record(lost)
    if (++this.idleTicks > IDLE_MILLIS / INTERVAL_MILLIS) {
      clearInterval(this.timer)
      this.timer = undefined
    }
  }

  private record(lost: number): void {
    const wall = this.lastTickWall
    if (this.count === KEPT) {
      this.dropped += this.tos[this.start]! - this.froms[this.start]!
      this.start = (this.start + 1) % KEPT
      this.count--
    }
    const j = (this.start + this.count) % KEPT
    this.froms[j] = wall - lost
    if (this.firstFrom === Infinity) this.firstFrom = wall - lost
    this.tos[j] = wall
    this.count++
    this.total += lost
    countStallSeconds(lost / 1000)
  }
}

/** @internal */
export const live: LoopStall = new Monitor()

/** @internal */
export const none: LoopStall = { lostBefore: () => 0 }

/** The live Clock: the one whose time line the live monitor dates its stalls on. */
const liveClock = Runtime.liveClock

/**
 * The source that applies to a fiber on `clock`: the live monitor measures the real loop, so on
 * any other Clock (a TestClock, a simulation's virtual clock, which may start at the real time and
 * run far ahead of it) it is `none`; a source provided for that clock (`scripted`) applies as given.
 * @internal
 */
export const onClock = (stall: LoopStall, clock: Clock.Clock): LoopStall =>
  stall === live && clock !== liveClock ? none : stall

/** @internal */
export interface Scripted extends LoopStall {
  readonly stall: (from: number, to: number) => void
}

/** @internal */
export const scripted = (stalls: Iterable<readonly [from: number, to: number]> = []): Scripted => {
  let froms: Array<number> = []
  let tos: Array<number> = []
  const stall = (from: number, to: number): void => {
    if (!(to > from)) return
    // Kept sorted and merged, so overlapping stalls count once.
    const all = froms.map((f, i) => [f, tos[i]!] as const).concat([[from, to]])
    all.sort((a, b) => a[0] - b[0])
    froms = []
    tos = []
    for (const [f, t] of all) {
      const last = tos.length - 1
      if (last >= 0 && f <= tos[last]!) tos[last] = Math.max(tos[last]!, t)
      else {
        froms.push(f)
        tos.push(t)
      }
    }
  }
  for (const [from, to] of stalls) stall(from, to)
  const lostBefore = (at: number): number => {
    let lost = 0
    for (let i = 0; i < froms.length && froms[i]! < at; i++) lost += Math.min(tos[i]!, at) - froms[i]!
    return lost
  }
  return { stall, lostBefore }
}

/**
 * `self`, failed with `onTimeout()` once it has run for `millis` of the loop's running clock: at
 * its Clock deadline, the time lost to stalls since it started is given back (as often as stalls
 * take it), so it ends at most that lost time after its Clock deadline. The loser of the race is
 * interrupted (disconnect `self` to answer without waiting for its cleanup).
 *
 * @internal
 */
export const timeoutFail = <A, E, R, E2>(
  self: Effect.Effect<A, E, R>,
  millis: number,
  onTimeout: () => E2,
  kind: string
): Effect.Effect<A, E | E2, R> =>
  // Read from the fiber in one step, as the breaker reads its clock: this is on a timed call's path.
  Runtime.withFiber((fiber) => {
    const clock = Runtime.clockOf(fiber)
    const stall = onClock(Runtime.refOf(fiber, LoopStallTag), clock)
    const started = Edition.nowUnsafe(clock)
    const lostAtStart = stall.lostBefore(started)
    const end = started - lostAtStart + millis
    let extended = false
    const rest: Effect.Effect<void> = Effect.suspend(() => {
      const now = Edition.nowUnsafe(clock)
      const lost = stall.lostBefore(now)
      const left = end - (now - lost)
      if (left <= 0) return Effect.void
      const wait = Effect.andThen(Effect.sleep(Math.ceil(left)), rest)
      // Past the Clock deadline only because of a stall: counted once.
      if (extended || now - started < millis || lost === lostAtStart) return wait
      extended = true
      return Effect.andThen(
        Effect.sync(() => extensionsOf(kind)(1)),
        wait
      )
    })
    // The first wait is the Clock's limit; the rest, only what stalls took. Interruptible (as
    // `Effect.timeout`'s): in a finalizer, a call that ends first does not wait for it.
    const expiry = Effect.interruptible(Effect.andThen(Effect.sleep(millis), rest))
    // The first to end answers; the other is interrupted (and waited for).
    return Effect.raceFirst(self, Effect.andThen(expiry, Effect.failSync(onTimeout)))
  })

/**
 * `Effect.timeout` on the loop's running clock: fails with a `TimeoutException` once `self` has
 * run for `duration` of it.
 *
 * @internal
 */
export const timeout = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  duration: Edition.DurationInput,
  kind: string
): Effect.Effect<A, E | Edition.TimeoutError, R> =>
  timeoutFail(self, Duration.toMillis(duration), Edition.timeoutError, kind)
