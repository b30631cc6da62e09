/**
 * The limiter. Its state (limit, counts, partitions, queue) is a plain object changed only inside
 * synchronous steps, which JavaScript runs to completion: that is what makes admission atomic
 * without a lock, and the admitted path needs no fiber, no Ref and no Semaphore (as the breaker's
 * closed path). Callers in the queue wait in `Effect.async`, resumed by whoever frees a slot.
 *
 * It owns the limit and the count of calls running, and every step that changes them (admission,
 * release, samples), so that the invariant (at most `limit` running, no free slot while an
 * admissible caller waits) is checked in one place. The partitions' shares are partition.ts's, the
 * queue's order and states waiters.ts's, the slots each fiber holds running.ts's.
 *
 * The fiber a call runs in is read through `#fiber` (fiber.effect3.ts / fiber.effect4.ts): its
 * Clock, and its end, without an effect of its own on the admitted path.
 */
import * as Edition from "@circuitry/core/Edition"
import * as MetricSeries from "@circuitry/core/MetricSeries"
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
import { canBorrow, Partition, shareOut } from "./partition.js"
import { Call, runningOf, type Slots } from "./running.js"
import { type Admission, GRANTED, Waiters } from "./waiters.js"

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

/** Weight of each round trip in the average behind `retryAfterMillis`. */
const RTT_WEIGHT = 0.1

class LimiterImpl implements Limiter, Admission, Slots {
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
  private readonly queue = new Waiters()
  private readonly byName: Map<string, Partition> | undefined
  private readonly partitionList: ReadonlyArray<Partition>
  private hub: PubSub.PubSub<L.Change> | undefined
  private readonly metrics: LimiterMetrics

  constructor(
    readonly name: string,
    resolved: Resolved,
    registry: MetricSeries.Registry
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
    shareOut(this.partitionList, this.current)
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
  canAdmit(p: Partition | undefined, now: number): boolean {
    if (this.running >= this.current) return false
    return this.byName === undefined || canBorrow(this.partitionList, p, this.running, this.current, now)
  }

  /** @internal */
  hasRoom(): boolean {
    return this.running < this.current
  }

  /** @internal */
  acquire(p: Partition | undefined): number {
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
    if (this.queue.length > 0) this.queue.grant(this, now)
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
    shareOut(this.partitionList, limit)
    if (this.announced) this.metrics.limit(limit)
    if (this.hub !== undefined) Edition.publishUnsafe(this.hub, { limit, at: now })
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
    const w = this.queue.add(p)
    const granted = Edition.callback<void, never>((resume) => {
      if (w.state === GRANTED) return resume(Effect.void)
      w.resume = resume
      return Effect.sync(() => this.queue.cancel(w))
    })
    const waiting = Effect.flatMap(Effect.timeoutOption(granted, this.queueTimeoutMillis), (slot) => {
      if (Option.isSome(slot)) return Effect.void
      this.queue.cancel(w)
      return Effect.fail(this.reject(p, partition))
    })
    return Effect.uninterruptibleMask((restore) =>
      Effect.matchCauseEffect(restore(waiting), {
        onFailure: (cause) => {
          if (w.state === GRANTED) this.finish(p, clock, 0, 0, "interrupted")
          else this.queue.cancel(w)
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
export const unsafeMake = (resolved: Resolved, registry: MetricSeries.Registry): Limiter =>
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
    Effect.flatMap(MetricSeries.currentRegistry, (registry) => {
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
