/** The shedder: the rule of codel.ts on the Effect Clock, fed by the event loop's signal. */
import type * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import type * as MetricHook from "effect/MetricHook"
import * as MetricKey from "effect/MetricKey"
import * as MetricLabel from "effect/MetricLabel"
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
  reason: Schema.Literal("standing", "overdue"),
  waitedMillis: Schema.Number,
  retryAfterMillis: Schema.Number
}) {
  override get message(): string {
    const why =
      this.reason === "standing"
        ? "the queue in front of the handler has not been empty for an interval"
        : "it waited longer than a burst may"
    return `shedder "${this.shedder}" shed a request that waited ${Math.round(this.waitedMillis)} ms: ${why}; retry after ${this.retryAfterMillis} ms`
  }
}

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

const shedKey = MetricKey.counter("circuitry_shedder_shed_total", {
  incremental: true,
  description: "Requests shed before their handler, by reason: standing, overdue"
})
const waitKey = MetricKey.histogram(
  "circuitry_shedder_wait_millis",
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 14 }),
  "How long each request waited before its handler (the sojourn), in milliseconds, loop delay included"
)
const delayKey = MetricKey.gauge("circuitry_shedder_loop_delay_millis", {
  description: "The event loop's delay over the last sample, in milliseconds"
})
const utilizationKey = MetricKey.gauge("circuitry_shedder_loop_utilization", {
  description: "The event loop's utilization over the last sample, between 0 and 1"
})

/** @internal */
export const shedTotal = Metric.fromMetricKey(shedKey)
/** @internal */
export const waited = Metric.fromMetricKey(waitKey)
/** @internal */
export const loopDelay = Metric.fromMetricKey(delayKey)
/** @internal */
export const loopUtilization = Metric.fromMetricKey(utilizationKey)

const hook = (key: MetricKey.MetricKey<any>, labels: ReadonlyArray<MetricLabel.MetricLabel>) =>
  Metric.globalMetricRegistry.get(MetricKey.taggedWithLabels(key, labels)) as MetricHook.MetricHook<number, unknown>

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
    readonly standing: MetricHook.MetricHook<number, unknown>
    readonly overdue: MetricHook.MetricHook<number, unknown>
    readonly waited: MetricHook.MetricHook<number, unknown>
    readonly delay: MetricHook.MetricHook<number, unknown>
    readonly utilization: MetricHook.MetricHook<number, unknown>
  }

  constructor(
    private readonly options: Resolved,
    /** The Clock of the fiber that made the shedder: its sampler and every decision read it. */
    private readonly clock: Clock.Clock
  ) {
    this.name = options.name
    this.state = Codel.empty(clock.unsafeCurrentTimeMillis())
    const labels = [MetricLabel.make("shedder", options.name)]
    this.hooks = {
      standing: hook(shedKey, [...labels, MetricLabel.make("reason", "standing")]),
      overdue: hook(shedKey, [...labels, MetricLabel.make("reason", "overdue")]),
      waited: hook(waitKey, labels),
      delay: hook(delayKey, labels),
      utilization: hook(utilizationKey, labels)
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
    const reason = this.judge(waitedMillis, this.clock.unsafeCurrentTimeMillis())
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
      standing: Codel.isStanding(this.options, this.state, this.clock.unsafeCurrentTimeMillis()),
      saturated: this.saturated,
      loop: this.signal
    }))
  }
}

/** @internal */
export const make = (options?: S.Options): Effect.Effect<S.Shedder, InvalidLimiterOptions, Scope.Scope> =>
  Effect.gen(function* () {
    const resolved = yield* resolve(options)
    const shedder = new ShedderImpl(resolved, yield* Effect.clock)
    const read = resolved.loop === "node" ? yield* nodeLoop(RESOLUTION_MILLIS) : resolved.loop
    if (read !== undefined) {
      const sample = Effect.clockWith((clock) =>
        Effect.flatMap(
          Effect.sync(() => shedder.woke(clock.unsafeCurrentTimeMillis())),
          () =>
            Effect.flatMap(read, (signal) =>
              Effect.sync(() => shedder.observe(signal, clock.unsafeCurrentTimeMillis()))
            )
        )
      )
      yield* Effect.forkScoped(Effect.repeat(sample, Schedule.spaced(resolved.sampleEvery)))
    }
    return shedder
  })

/** @internal */
export const layer = <I>(tag: Context.Tag<I, S.Shedder>, options?: S.Options): Layer.Layer<I, InvalidLimiterOptions> =>
  Layer.scoped(tag, make(options))
