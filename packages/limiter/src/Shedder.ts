/**
 * Shedding what the process cannot serve: a request that waited too long before its handler is
 * refused at once, before any work is done for it. The wait is judged with CoDel's target and
 * interval: a short burst passes, a standing queue is cut to `target`, oldest first. It counts the
 * time a request spent in the process before its handler and, while the event loop is saturated,
 * the loop's delay: the time bytes wait in the socket before a busy loop reads them, which no
 * concurrency limit can see. `@circuitry/platform`'s `LimiterHttpServer.shedding` puts one in front
 * of an HTTP server.
 *
 * @since 0.2.0
 */
import type * as Edition from "@circuitry/core/Edition"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { InvalidLimiterOptions } from "./internal/errors.js"
import * as internal from "./internal/shedder.js"

/**
 * @since 0.2.0
 * @category symbols
 */
export const TypeId: unique symbol = internal.TypeId

/**
 * @since 0.2.0
 * @category symbols
 */
export type TypeId = typeof TypeId

/**
 * The event loop over the last sample: how late it ran its timers, and the share of the time it
 * was busy.
 *
 * @since 0.2.0
 * @category models
 */
export interface LoopSignal {
  /** How much later than due the loop ran its timers (the most in the sample), in milliseconds. */
  readonly delayMillis: number
  /** Between 0 (idle) and 1 (never waited for I/O). */
  readonly utilization: number
}

/**
 * Why a request was shed: it waited past `target` while the queue stood (`"standing"`), or past
 * `interval`, longer than a burst may (`"overdue"`).
 *
 * @since 0.2.0
 * @category models
 */
export type Reason = "standing" | "overdue"

/**
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** Shows in errors and metrics. Default `"default"`. */
  readonly name?: string | undefined
  /** The longest a request may wait while the queue stands. Default 50 ms. */
  readonly target?: Edition.DurationInput | undefined
  /**
   * How long the queue may stay non-empty before it is standing, and the longest a request may
   * wait in a burst. Longer than `target`. Default 500 ms.
   */
  readonly interval?: Edition.DurationInput | undefined
  /**
   * The loop input. `true` (the default): Node's event loop, its delay (how late a 10 ms timer
   * fires, as `perf_hooks.monitorEventLoopDelay` measures it) and `performance.eventLoopUtilization`. `false`: none; only
   * the wait the caller measures counts, and a request served within `target` marks the queue
   * empty. An Effect: read it for each sample (another runtime's signal, or a test's).
   */
  readonly loop?: boolean | Effect.Effect<LoopSignal> | undefined
  /**
   * The loop is saturated when its utilization over a sample is at least this (0 < u <= 1): only
   * then can a queue stand in front of it, and only then does its delay count as waiting. A sample
   * under it marks the queue empty. Default 0.9.
   */
  readonly utilization?: number | undefined
  /** How often the loop is sampled (on the Effect Clock); at most `interval`. Default 20 ms. */
  readonly sampleEvery?: Edition.DurationInput | undefined
}

/**
 * What a shedder sees now.
 *
 * @since 0.2.0
 * @category models
 */
export interface Snapshot {
  readonly name: string
  /** The queue has not been empty for a whole interval: waits past `target` are shed. */
  readonly standing: boolean
  /** The last loop sample's utilization was at least `utilization`. */
  readonly saturated: boolean
  readonly loop: LoopSignal
}

/**
 * @since 0.2.0
 * @category models
 */
export interface Shedder {
  readonly [TypeId]: TypeId
  readonly name: string
  /**
   * The verdict for a request about to start its handler, which has waited `waitedMillis` since it
   * reached the process: it succeeds (serve it) or fails with `LoadShedError` (refuse it, at once).
   */
  readonly admit: (waitedMillis: number) => Effect.Effect<void, LoadShedError>
  /**
   * `admit` outside any fiber, for a server's own request listener (see `@circuitry/platform`'s
   * `LimiterHttpServer.trackArrivals`): the refusal, or `undefined` to serve the request. Both read
   * the Clock of the fiber that made the shedder, as its sampler does.
   */
  readonly unsafeAdmit: (waitedMillis: number) => LoadShedError | undefined
  readonly snapshot: Effect.Effect<Snapshot>
}

/**
 * A request refused because it waited too long before its handler: nothing was run for it.
 * `waitedMillis` is the wait it was judged by (the caller's measure plus the loop's delay);
 * `retryAfterMillis` is the shedder's interval, about how long a standing queue takes to clear. It
 * is a rejection (`Rejection.isRejection` from `@circuitry/core`), built without a stack trace.
 *
 * @since 0.2.0
 * @category errors
 */
export const LoadShedError: typeof internal.LoadShedError = internal.LoadShedError

/**
 * @since 0.2.0
 * @category errors
 */
export type LoadShedError = internal.LoadShedError

/**
 * Whether a value is a `LoadShedError`, from this copy of the package or another (it is recognised
 * by `Rejection.TypeId` from `@circuitry/core`, not by its class); a look-alike with the same
 * `_tag` is not one. A shed is a rejection, so `Rejection.isRejection` holds for it too: `Retry`
 * waits its `retryAfterMillis`, hedging stops, and a limiter's default `isDrop` counts it.
 *
 * @since 0.2.0
 * @category guards
 * @example
 * ```ts
 * import { Shedder } from "@circuitry/limiter"
 * import { Effect } from "effect"
 *
 * const fallback = <A, E, R>(self: Effect.Effect<A, E, R>) =>
 *   Effect.catchIf(self, Shedder.isLoadShedError, () => Effect.succeed("shed"))
 * ```
 */
export const isLoadShedError: (u: unknown) => u is LoadShedError = internal.isLoadShedError

/**
 * @since 0.2.0
 * @category guards
 */
export const isShedder: (u: unknown) => u is Shedder = internal.isShedder

/**
 * Makes a shedder. Options are validated here, once, into `InvalidLimiterOptions`. With the Node
 * loop input, its histogram is enabled for the life of the scope and sampled every `sampleEvery`.
 * Its metric series leave the registry when the scope closes.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { Shedder } from "@circuitry/limiter"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const shedder = yield* Shedder.make({ name: "api", target: "50 millis", interval: "500 millis" })
 *   // a request that waited 5 ms in the process: served
 *   yield* shedder.admit(5)
 *   return yield* shedder.snapshot
 * })
 * ```
 */
export const make: (options?: Options) => Effect.Effect<Shedder, InvalidLimiterOptions, Scope.Scope> = internal.make

/**
 * A shedder as a `Layer` for the given tag.
 *
 * @since 0.2.0
 * @category layers
 * @example
 * ```ts
 * import { Shedder } from "@circuitry/limiter"
 * import { Context } from "effect"
 *
 * class ApiShedder extends Context.Tag("ApiShedder")<ApiShedder, Shedder.Shedder>() {}
 *
 * const ApiShedderLive = Shedder.layer(ApiShedder, { name: "api" })
 * ```
 */
export const layer: <I>(tag: Edition.Key<I, Shedder>, options?: Options) => Layer.Layer<I, InvalidLimiterOptions> =
  internal.layer

/**
 * Requests shed, a counter tagged `shedder` and `reason` (`standing`, `overdue`).
 *
 * @since 0.2.0
 * @category metrics
 */
export const shedTotal: Edition.Counter = internal.shedTotal

/**
 * How long each judged request waited before its handler, loop delay included, in milliseconds: a
 * histogram tagged `shedder`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const waited: Edition.Histogram = internal.waited

/**
 * The event loop's delay over the last sample, in milliseconds: a gauge tagged `shedder`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const loopDelay: Edition.Gauge = internal.loopDelay

/**
 * The event loop's utilization over the last sample: a gauge tagged `shedder`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const loopUtilization: Edition.Gauge = internal.loopUtilization
