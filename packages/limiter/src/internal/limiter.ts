/**
 * The limiter. Its state (limit, counts, partitions, queue) is a plain object changed only inside
 * synchronous steps, which JavaScript runs to completion: that is what makes admission atomic
 * without a lock, and the admitted path needs no fiber, no Ref and no Semaphore (as the breaker's
 * closed path). Callers in the queue wait in `Effect.async`, resumed by whoever frees a slot.
 *
 * Longer than most modules, for a reason: admission, release, partitions and the queue read and
 * write one state, and the invariant (at most `limit` running, no free slot while an admissible
 * caller waits) is easiest to check when every step that touches it is in one place.
 *
 * The fiber a call runs in is read through `#fiber` (fiber.effect3.ts / fiber.effect4.ts): its
 * Clock, and its end, without an effect of its own on the admitted path.
 */
import * as Edition from "@circuitry/core/Edition"
import * as Fiber from "#fiber"
import type * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as L from "../Limiter.js"
import type { Algorithm } from "./algorithm.js"
import { InvalidLimiterOptions, LimiterRejectedError, rejection } from "./errors.js"
import { LimiterMetrics, type Outcome } from "./metrics.js"
import { type Resolved, resolve } from "./options.js"
import * as Series from "./series.js"

export { callsTotal, inFlightGauge, limitGauge, roundTrip } from "./metrics.js"
export { defaultIsDrop, type Resolved, resolve } from "./options.js"

type Limiter = L.Limiter
type Options = L.Options

/** @internal */
export const TypeId: typeof L.TypeId = Symbol.for("@circuitry/limiter/Limiter") as typeof L.TypeId

/** @internal */
export const isLimiter = (u: unknown): u is Limiter => typeof u === "object" && u !== null && TypeId in u

// ---------------------------------------------------------------------------------------------
// the limiter
// ---------------------------------------------------------------------------------------------

/** A partition that has had no call for this long lends its share (it is not in use). */
const IDLE_MILLIS = 1000

/** Weight of each round trip in the average behind `retryAfterMillis`. */
const RTT_WEIGHT = 0.1

/** @internal */
export class Partition {
  /** Slots guaranteed at the current limit. */
  guaranteed = 0
  busy = 0
  waiting = 0
  lastArrival = -Infinity
  constructor(
    readonly name: string,
    readonly share: number
  ) {}
}

const WAITING = 0
const GRANTED = 1
const CANCELLED = 2

interface Waiter {
  readonly partition: Partition | undefined
  state: typeof WAITING | typeof GRANTED | typeof CANCELLED
  /** In flight when the slot was granted (itself included). */
  inflight: number
  resume: ((effect: Effect.Effect<void>) => void) | undefined
}

/** An admitted call, as the fiber that runs it knows it: enough to free its slot. */
class Call {
  constructor(
    readonly limiter: LimiterImpl,
    readonly partition: Partition | undefined,
    readonly clock: Clock.Clock,
    readonly start: number,
    readonly inflight: number
  ) {}
}

/**
 * The calls a fiber has running through limiters, newest last (calls in one fiber nest, so they
 * mostly end newest first). An interrupted fiber skips the calls' handlers (Effect does not run
 * them while it unwinds an interruption), so one observer per fiber frees the slots still held
 * when the fiber ends. One observer per call would cost more than the rest of the call: Effect 3's
 * `removeObserver` copies the fiber's list of observers every time.
 */
class Running {
  private readonly calls: Array<Call> = []

  constructor(fiber: Fiber.Fiber) {
    Fiber.onEnd(fiber, () => {
      if (lastFiber === fiber) lastFiber = lastRunning = undefined
      const left = this.calls.splice(0)
      for (const c of left) c.limiter.finish(c.partition, c.clock, c.start, c.inflight, "interrupted")
    })
  }

  add(call: Call): void {
    this.calls.push(call)
  }

  /** Whether `call` was still running: its handler frees the slot then, and only then. */
  remove(call: Call): boolean {
    const calls = this.calls
    const last = calls.length - 1
    if (last >= 0 && calls[last] === call) {
      calls.pop()
      return true
    }
    const i = calls.lastIndexOf(call)
    if (i < 0) return false
    calls.splice(i, 1)
    return true
  }
}

const runningByFiber = new WeakMap<Fiber.Fiber, Running>()
// Most calls come from the fiber that made the last one; forgotten when that fiber ends.
let lastFiber: Fiber.Fiber | undefined
let lastRunning: Running | undefined

const runningOf = (fiber: Fiber.Fiber): Running => {
  if (fiber === lastFiber) return lastRunning!
  let running = runningByFiber.get(fiber)
  if (running === undefined) {
    running = new Running(fiber)
    runningByFiber.set(fiber, running)
  }
  lastFiber = fiber
  lastRunning = running
  return running
}

class LimiterImpl implements Limiter {
  readonly [TypeId]: typeof TypeId = TypeId
  private readonly algorithm: Algorithm<unknown>
  private state: unknown
  /** The limit now (whole, in [min, max]). */
  current: number
  running = 0
  rejected = 0
  private avgRtt = 0
  private announced = false
  private lastRejection: LimiterRejectedError | undefined
  private readonly adaptive: boolean
  /** Whether a 0 ms round trip goes to the algorithm (only to one that may change on it). */
  private readonly sampleZeroRtt: boolean
  private readonly min: number
  private readonly max: number
  private readonly isDrop: (cause: Cause.Cause<unknown>) => boolean
  private readonly queueSize: number
  private readonly queueTimeoutMillis: number
  private readonly queue: Array<Waiter> = []
  private readonly byName: Map<string, Partition> | undefined
  private readonly partitionList: ReadonlyArray<Partition>
  private hub: PubSub.PubSub<L.Change> | undefined
  private readonly metrics: LimiterMetrics

  constructor(
    readonly name: string,
    resolved: Resolved,
    registry: Series.Registry
  ) {
    this.algorithm = resolved.limit.makeAlgorithm()
    this.state = this.algorithm.initial
    this.current = this.algorithm.limitOf(this.state)
    this.adaptive = resolved.limit._tag !== "Fixed"
    this.sampleZeroRtt = this.adaptive && this.algorithm.ignoresZeroRtt !== true
    this.min = resolved.limit.min
    this.max = resolved.limit.max
    this.isDrop = resolved.isDrop
    this.queueSize = resolved.queueSize
    this.queueTimeoutMillis = resolved.queueTimeoutMillis
    this.partitionList = resolved.partitions.map(([n, share]) => new Partition(n, share))
    this.byName = this.partitionList.length === 0 ? undefined : new Map(this.partitionList.map((p) => [p.name, p]))
    this.metrics = new LimiterMetrics(name, registry)
    this.shareOut()
  }

  /** @internal */
  releaseMetrics(): void {
    this.metrics.release()
  }

  // -- reads ----------------------------------------------------------------------------------

  get limit(): Effect.Effect<number> {
    return Effect.sync(() => this.current)
  }

  get inFlight(): Effect.Effect<number> {
    return Effect.sync(() => this.running)
  }

  get snapshot(): Effect.Effect<L.Snapshot> {
    return Effect.sync(() => ({
      name: this.name,
      limit: this.current,
      inFlight: this.running,
      queued: this.queue.length,
      rejected: this.rejected,
      partitions: this.partitionList.map((p) => ({
        name: p.name,
        share: p.share,
        guaranteed: p.guaranteed,
        inFlight: p.busy
      }))
    }))
  }

  get changes(): Stream.Stream<L.Change> {
    return Stream.suspend(() => Stream.fromPubSub(this.pubsub()))
  }

  private pubsub(): PubSub.PubSub<L.Change> {
    return (this.hub ??= Effect.runSync(PubSub.unbounded<L.Change>()))
  }

  /** When to try again: about one round trip, by when the calls now in flight have finished. */
  private retryAfter(): number {
    return Math.ceil(this.avgRtt)
  }

  // -- admission ------------------------------------------------------------------------------

  /**
   * Whether a call in `p` may start now. Every call needs a free slot under the limit; past its
   * guaranteed slots, a partition may only borrow what the other partitions in use do not need
   * for their own guarantees.
   */
  private canAdmit(p: Partition | undefined, now: number): boolean {
    if (this.running >= this.current) return false
    if (this.byName === undefined) return true
    if (p !== undefined && p.busy < p.guaranteed) return true
    let held = 0
    for (const q of this.partitionList) {
      if (q !== p && q.busy < q.guaranteed && (q.busy > 0 || q.waiting > 0 || now - q.lastArrival < IDLE_MILLIS)) {
        held += q.guaranteed - q.busy
      }
    }
    return this.running + held < this.current
  }

  private acquire(p: Partition | undefined): number {
    if (!this.announced) {
      // The limit gauge starts on first use, so that an idle limiter costs no metric memory.
      this.announced = true
      this.metrics.limit(this.current)
    }
    const inflight = ++this.running
    if (p !== undefined) p.busy++
    this.metrics.inFlight(p, inflight)
    return inflight
  }

  execute<A, E, R>(
    self: Effect.Effect<A, E, R>,
    options?: L.CallOptions
  ): Effect.Effect<A, E | LimiterRejectedError, R> {
    const partition = options?.partition
    return Fiber.withFiber((fiber) => {
      const clock = Fiber.clockOf(fiber)
      // Only partitions need the time to decide; a rejection without them reads no clock.
      let now = -1
      let p: Partition | undefined
      if (this.byName !== undefined) {
        now = Edition.nowUnsafe(clock)
        p = partition === undefined ? undefined : this.byName.get(partition)
        if (p !== undefined) p.lastArrival = now
      }
      if (!this.canAdmit(p, now)) return this.refuse(self, p, partition, clock)
      return this.run(self, p, clock, now === -1 ? Edition.nowUnsafe(clock) : now, this.acquire(p), fiber)
    })
  }

  /**
   * Runs an admitted call; its slot is freed however it ends, and its outcome is a sample unless
   * interrupted (then the fiber's `Running` frees it, when the fiber ends).
   */
  private run<A, E, R>(
    self: Effect.Effect<A, E, R>,
    p: Partition | undefined,
    clock: Clock.Clock,
    start: number,
    inflight: number,
    fiber: Fiber.Fiber
  ): Effect.Effect<A, E, R> {
    const call = new Call(this, p, clock, start, inflight)
    const running = runningOf(fiber)
    running.add(call)
    return Effect.matchCauseEffect(self, {
      onSuccess: (a) => {
        if (running.remove(call)) this.finish(p, clock, start, inflight, "success")
        return Effect.succeed(a)
      },
      onFailure: (cause) => {
        if (running.remove(call)) this.finish(p, clock, start, inflight, this.classify(cause))
        return Effect.failCause(cause)
      }
    })
  }

  private classify(cause: Cause.Cause<unknown>): Outcome {
    if (Edition.hasInterruptsOnly(cause)) return "interrupted"
    try {
      return this.isDrop(cause) ? "dropped" : "failure"
    } catch {
      return "dropped" // a user `isDrop` that throws: err on the side of backing off
    }
  }

  /** @internal */
  finish(p: Partition | undefined, clock: Clock.Clock, start: number, inflight: number, outcome: Outcome) {
    const running = --this.running
    if (p !== undefined) p.busy--
    this.metrics.inFlight(p, running)
    const now = Edition.nowUnsafe(clock)
    if (outcome === "interrupted") {
      this.metrics.call(p, outcome)
    } else {
      const rtt = now - start
      this.metrics.call(p, outcome, rtt)
      this.avgRtt = this.avgRtt === 0 ? rtt : this.avgRtt + (rtt - this.avgRtt) * RTT_WEIGHT
      if (rtt > 0 ? this.adaptive : this.sampleZeroRtt) this.sample(start, rtt, inflight, outcome === "dropped", now)
    }
    if (this.queue.length > 0) this.drain(now)
  }

  /** Feeds one sample to the algorithm; a changed limit is announced and shared out. */
  private sample(start: number, rtt: number, inflight: number, drop: boolean, now: number): void {
    const state = this.algorithm.step(this.state, { start, rtt, inflight, drop })
    // A step that keeps its state (a 0 ms round trip for most) keeps the limit: `limitOf` is pure.
    if (state === this.state) return
    this.state = state
    const next = this.algorithm.limitOf(state)
    // The limit never leaves [min, max], whatever a user's function made of the estimate.
    const limit = Number.isFinite(next) ? Math.max(this.min, Math.min(this.max, next)) : this.current
    if (limit === this.current) return
    this.current = limit
    this.shareOut()
    if (this.announced) this.metrics.limit(limit)
    if (this.hub !== undefined) Edition.publishUnsafe(this.hub, { limit, at: now })
  }

  /**
   * Each partition is guaranteed its share of the limit rounded up (as Netflix's partitions are):
   * at least its share. When the shares add up to 1 the roundings may overlap by a slot, which goes
   * to whichever partition asks first; the total never exceeds the limit.
   */
  private shareOut(): void {
    for (const p of this.partitionList) p.guaranteed = Math.ceil(this.current * p.share)
  }

  // -- refusal and the queue --------------------------------------------------------------------

  private refuse<A, E, R>(
    self: Effect.Effect<A, E, R>,
    p: Partition | undefined,
    partition: string | undefined,
    clock: Clock.Clock
  ): Effect.Effect<A, E | LimiterRejectedError, R> {
    if (this.queue.length < this.queueSize) return this.wait(self, p, partition, clock)
    return Effect.fail(this.reject(p, partition))
  }

  private reject(p: Partition | undefined, partition: string | undefined): LimiterRejectedError {
    this.rejected++
    this.metrics.call(p, "rejected")
    // A burst of rejections mostly says the same thing: an error is a value, so share it then.
    const last = this.lastRejection
    const retryAfter = this.retryAfter()
    if (
      last !== undefined &&
      last.limit === this.current &&
      last.inFlight === this.running &&
      last.partition === partition &&
      last.retryAfterMillis === retryAfter
    ) {
      return last
    }
    return (this.lastRejection = rejection(this.name, this.current, this.running, partition, retryAfter))
  }

  /** Hands free slots to waiters, first come first served among those that may start. */
  private drain(now: number): void {
    const queue = this.queue
    for (let i = 0; i < queue.length && this.running < this.current;) {
      const w = queue[i]!
      if (!this.canAdmit(w.partition, now)) {
        i++
        continue
      }
      queue.splice(i, 1)
      if (w.partition !== undefined) w.partition.waiting--
      w.state = GRANTED
      w.inflight = this.acquire(w.partition)
      w.resume?.(Effect.void)
    }
  }

  private cancel(w: Waiter): void {
    if (w.state !== WAITING) return
    w.state = CANCELLED
    const i = this.queue.indexOf(w)
    if (i >= 0) this.queue.splice(i, 1)
    if (w.partition !== undefined) w.partition.waiting--
  }

  /**
   * Waits in the queue for a slot (at most `queue.timeout`), then runs. A waiter that is
   * interrupted or times out leaves the queue; one that was granted a slot in the same instant
   * gives it back to the next waiter, unsampled.
   */
  private wait<A, E, R>(
    self: Effect.Effect<A, E, R>,
    p: Partition | undefined,
    partition: string | undefined,
    clock: Clock.Clock
  ): Effect.Effect<A, E | LimiterRejectedError, R> {
    const w: Waiter = { partition: p, state: WAITING, inflight: 0, resume: undefined }
    this.queue.push(w)
    if (p !== undefined) p.waiting++
    const granted = Edition.callback<void, never>((resume) => {
      if (w.state === GRANTED) return resume(Effect.void)
      w.resume = resume
      return Effect.sync(() => this.cancel(w))
    })
    const waiting = Effect.flatMap(Effect.timeoutOption(granted, this.queueTimeoutMillis), (slot) => {
      if (Option.isSome(slot)) return Effect.void
      this.cancel(w)
      return Effect.fail(this.reject(p, partition))
    })
    return Effect.uninterruptibleMask((restore) =>
      Effect.matchCauseEffect(restore(waiting), {
        onFailure: (cause) => {
          if (w.state === GRANTED) this.finish(p, clock, 0, 0, "interrupted")
          else this.cancel(w)
          return Effect.failCause(cause)
        },
        onSuccess: () =>
          Fiber.withFiber<A, E, R>((fiber) =>
            this.run(restore(self), p, clock, Edition.nowUnsafe(clock), w.inflight, fiber)
          )
      })
    )
  }
}

/** A limiter whose series go to `registry` (see `release`). @internal */
export const unsafeMake = (resolved: Resolved, registry: Series.Registry): Limiter =>
  new LimiterImpl(resolved.name, resolved, registry)

/** Whether a limiter has no call running (for the registry's eviction). @internal */
export const isIdle = (limiter: Limiter): boolean => {
  const impl = limiter as LimiterImpl
  return impl.running === 0
}

/**
 * Takes a limiter's metric series out of the registry (dropped by its `LimiterRegistry`, or its
 * scope closed). It keeps limiting; its calls record no metrics from then on. @internal
 */
export const release = (limiter: Limiter): void => (limiter as LimiterImpl).releaseMetrics()

/** @internal */
export const make = (options?: Options): Effect.Effect<Limiter, InvalidLimiterOptions, Scope.Scope> =>
  Effect.flatMap(resolve(options), (resolved) =>
    Effect.flatMap(Series.currentRegistry, (registry) => {
      const limiter = unsafeMake(resolved, registry)
      return Effect.as(
        Effect.addFinalizer(() => Effect.sync(() => release(limiter))),
        limiter
      )
    })
  )

/** @internal */
export const layer = <I>(tag: Edition.Key<I, Limiter>, options?: Options): Layer.Layer<I, InvalidLimiterOptions> =>
  Edition.layerScoped(tag, make(options))

const limited = <A, E, R, I>(
  self: Effect.Effect<A, E, R>,
  limiter: Limiter | Edition.Key<I, Limiter>,
  options: L.CallOptions | undefined
): Effect.Effect<A, E | LimiterRejectedError, R | I> =>
  isLimiter(limiter)
    ? limiter.execute(self, options)
    : Effect.flatMap(Edition.service(limiter), (l) => l.execute(self, options))

/** @internal */
export const withLimiter: {
  <I = never>(
    limiter: Limiter | Edition.Key<I, Limiter>,
    options?: L.CallOptions
  ): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | LimiterRejectedError, R | I>
  <A, E, R, I = never>(
    self: Effect.Effect<A, E, R>,
    limiter: Limiter | Edition.Key<I, Limiter>,
    options?: L.CallOptions
  ): Effect.Effect<A, E | LimiterRejectedError, R | I>
} = function (first: unknown, second?: unknown, third?: unknown): unknown {
  // Data-first when the second argument is the limiter (a Tag is an Effect too, so look there).
  // Written out rather than `dual` with a predicate, which builds `arguments` on every call.
  type AnyLimiter = Limiter | Edition.Key<unknown, Limiter>
  if (isLimiter(second) || Edition.isKey(second)) {
    return limited(first as Effect.Effect<unknown>, second as AnyLimiter, third as L.CallOptions | undefined)
  }
  return (self: Effect.Effect<unknown>) => limited(self, first as AnyLimiter, second as L.CallOptions | undefined)
} as typeof withLimiter

export { InvalidLimiterOptions, LimiterRejectedError }
