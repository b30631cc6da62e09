/** The shedder: the rule of codel.ts on the Effect Clock, fed by the event loop's signal. */
import * as Edition from "@circuitry/core/Edition"
import * as MetricSeries from "@circuitry/core/MetricSeries"
import * as Rejection from "@circuitry/core/Rejection"
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as S from "../Shedder.js"
import * as Codel from "./codel.js"
import type { InvalidLimiterOptions } from "./errors.js"
import { nodeLoop } from "./loopMonitor.js"
import { resolve, RESOLUTION_MILLIS, type Resolved } from "./shedderOptions.js"

/** @internal */
export const TypeId: typeof S.TypeId = Symbol.for("@circuitry/limiter/Shedder") as typeof S.TypeId

/** @internal */
export const isShedder = (u: unknown): u is S.Shedder => typeof u === "object" && u !== null && TypeId in u

/** @internal */
export class LoadShedError extends Schema.TaggedError<LoadShedError>()("LoadShedError", {
  shedder: Schema.String,
  reason: Edition.literals(["standing", "overdue"]),
  waitedMillis: Schema.Number,
  retryAfterMillis: Schema.Number
}) {
  /** A rejection (`Rejection.isRejection`), on the prototype: a stackless shed has it too. */
  get [Rejection.TypeId](): Rejection.TypeId {
    return Rejection.TypeId
  }

  override get message(): string {
    const why =
      this.reason === "standing"
        ? "the queue in front of the handler has not been empty for an interval"
        : "it waited longer than a burst may"
    return `shedder "${this.shedder}" shed a request that waited ${Math.round(this.waitedMillis)} ms: ${why}; retry after ${this.retryAfterMillis} ms`
  }
}

/** @internal */
export const isLoadShedError = (u: unknown): u is LoadShedError => Rejection.isTagged(u, "LoadShedError")

/** Under overload a shed is the common answer: built without a stack trace, as the limiter's rejection is. */
const shed = (shedder: string, reason: S.Reason, waitedMillis: number, retryAfterMillis: number): LoadShedError => {
  const error = Object.create(LoadShedError.prototype)
  error.shedder = shedder
  error.reason = reason
  error.waitedMillis = waitedMillis
  error.retryAfterMillis = retryAfterMillis
  error._tag = "LoadShedError"
  return error
}

const SHED = {
  name: "circuitry_shedder_shed_total",
  description: "Requests shed before their handler, by reason: standing, overdue"
}
const WAIT = {
  name: "circuitry_shedder_wait_millis",
  description: "How long each request waited before its handler (the sojourn), in milliseconds, loop delay included",
  boundaries: MetricSeries.exponentialBoundaries({ start: 1, factor: 2, count: 14 })
}
const DELAY = {
  name: "circuitry_shedder_loop_delay_millis",
  description: "The event loop's delay over the last sample, in milliseconds"
}
const UTILIZATION = {
  name: "circuitry_shedder_loop_utilization",
  description: "The event loop's utilization over the last sample, between 0 and 1"
}

/** @internal */
export const shedTotal = MetricSeries.counter(SHED)
/** @internal */
export const waited = MetricSeries.histogram(WAIT)
/** @internal */
export const loopDelay = MetricSeries.gauge(DELAY)
/** @internal */
export const loopUtilization = MetricSeries.gauge(UTILIZATION)

class ShedderImpl implements S.Shedder {
  readonly [TypeId]: typeof TypeId = TypeId
  readonly name: string
  private state: Codel.State
  private signal: S.LoopSignal = { delayMillis: 0, utilization: 0 }
  private saturated = false
  /** When the sampler's timer last fired; undefined without a loop input. */
  private sampledAt: number | undefined
  /** The whole wait of the request judged last, loop delay included, for its LoadShedError. */
  private lastWaited = 0
  private readonly hooks: {
    readonly standing: MetricSeries.Updater
    readonly overdue: MetricSeries.Updater
    readonly waited: MetricSeries.Updater
    readonly delay: MetricSeries.Updater
    readonly utilization: MetricSeries.Updater
  }

  constructor(
    private readonly options: Resolved,
    /** The Clock of the fiber that made the shedder: its sampler and every decision read it. */
    private readonly clock: Clock.Clock,
    /** The owner of its series (`MetricSeries.scoped`: taken out of the registry when its scope closes). */
    owner: MetricSeries.Owner
  ) {
    this.name = options.name
    this.state = Codel.empty(Edition.nowUnsafe(clock))
    const shedder = ["shedder", options.name] as const
    this.hooks = {
      standing: owner.series(shedTotal, [shedder, ["reason", "standing"]]),
      overdue: owner.series(shedTotal, [shedder, ["reason", "overdue"]]),
      waited: owner.series(waited, [shedder]),
      delay: owner.series(loopDelay, [shedder]),
      utilization: owner.series(loopUtilization, [shedder])
    }
  }

  /** A new reading of the loop. A loop with time to spare drained whatever waited in front of it. */
  /** The sampler's timer fired: the loop has come round to its timers. */
  woke(now: number): void {
    this.sampledAt = now
  }

  observe(signal: S.LoopSignal, now: number): void {
    this.signal = signal
    this.saturated = signal.utilization >= this.options.utilization
    if (!this.saturated) this.state = Codel.empty(now)
    this.hooks.delay.update(signal.delayMillis)
    this.hooks.utilization.update(signal.utilization)
  }

  /**
   * What a request waited: in the process, as measured, plus how late the loop is now: how long
   * past its due time the sampler's timer has not fired. Timers run at the start of each turn of
   * the loop, and requests are read in its poll phase, so a late timer means this turn has run
   * long and each request read in it waited behind the ones handled before it. Each turn may
   * admit work until it is `target` late; the next turn starts afresh. (The sampled delay is the
   * worst of a past window, not this request's: counting it for every request of the next window
   * would refuse all of them after one long turn.)
   */
  judge(waitedMillis: number, now: number): S.Reason | undefined {
    const late = this.sampledAt === undefined ? 0 : now - this.sampledAt - this.options.sampleEvery
    const waited = late > 0 ? waitedMillis + late : waitedMillis
    this.lastWaited = waited
    this.hooks.waited.update(waited)
    // Without a loop input, a request served within target is the only sign of an empty queue.
    if (this.options.loop === undefined && waited <= this.options.target) this.state = Codel.empty(now)
    const verdict = Codel.decide(this.options, this.state, now, waited)
    if (verdict === "admit") return undefined
    this.hooks[verdict].update(1)
    return verdict
  }

  unsafeAdmit(waitedMillis: number): LoadShedError | undefined {
    const reason = this.judge(waitedMillis, Edition.nowUnsafe(this.clock))
    return reason === undefined ? undefined : shed(this.name, reason, this.lastWaited, this.options.interval)
  }

  admit(waitedMillis: number): Effect.Effect<void, LoadShedError> {
    return Effect.suspend(() => {
      const error = this.unsafeAdmit(waitedMillis)
      return error === undefined ? Effect.void : Effect.fail(error)
    })
  }

  get snapshot(): Effect.Effect<S.Snapshot> {
    return Effect.sync(() => ({
      name: this.name,
      standing: Codel.isStanding(this.options, this.state, Edition.nowUnsafe(this.clock)),
      saturated: this.saturated,
      loop: this.signal
    }))
  }
}

/** @internal */
export const make = (options?: S.Options): Effect.Effect<S.Shedder, InvalidLimiterOptions, Scope.Scope> =>
  Effect.gen(function* () {
    const resolved = yield* resolve(options)
    const clock = yield* Effect.clockWith(Effect.succeed)
    const shedder = new ShedderImpl(resolved, clock, yield* MetricSeries.scoped)
    const read = resolved.loop === "node" ? yield* nodeLoop(RESOLUTION_MILLIS) : resolved.loop
    if (read !== undefined) {
      const sample = Effect.clockWith((clock) =>
        Effect.flatMap(
          Effect.sync(() => shedder.woke(Edition.nowUnsafe(clock))),
          () => Effect.flatMap(read, (signal) => Effect.sync(() => shedder.observe(signal, Edition.nowUnsafe(clock))))
        )
      )
      yield* Effect.forkScoped(Effect.repeat(sample, Schedule.spaced(resolved.sampleEvery)))
    }
    return shedder
  })

/** @internal */
export const layer = <I>(tag: Edition.Key<I, S.Shedder>, options?: S.Options): Layer.Layer<I, InvalidLimiterOptions> =>
  Edition.layerScoped(tag, make(options))
