/**
 * The Node event loop as a shedder's input: its delay (`perf_hooks.monitorEventLoopDelay`) and its
 * utilization (`performance.eventLoopUtilization`), each over the time since the last read.
 */
import * as Edition from "@circuitry/core/Edition"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { monitorEventLoopDelay, performance } from "node:perf_hooks"
import type * as S from "../Shedder.js"

/**
 * A reader of the loop's signal since the previous read. The histogram's timer fires every
 * `resolution` ms and records the whole time between two fires, so the delay is what exceeds the
 * resolution; a window in which it did not fire reads 0 (the next read sees that fire's delay), and
 * the first fire after `enable` records nothing.
 *
 * @internal
 */
export const nodeLoop = (resolutionMillis: number): Effect.Effect<Effect.Effect<S.LoopSignal>, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => {
        const histogram = monitorEventLoopDelay({ resolution: resolutionMillis })
        histogram.enable()
        return histogram
      }),
      (histogram) => Effect.sync(() => histogram.disable())
    ),
    (histogram) => {
      let last = performance.eventLoopUtilization()
      const read = (): S.LoopSignal => {
        const now = performance.eventLoopUtilization()
        const utilization = performance.eventLoopUtilization(now, last).utilization
        last = now
        const delayMillis = histogram.count === 0 ? 0 : Math.max(0, histogram.max / 1e6 - resolutionMillis)
        histogram.reset()
        return { delayMillis, utilization }
      }
      // Read after the timers phase: a late histogram timer due in the same phase has recorded by
      // then, so a block shows in the same sample as the utilization it caused.
      return Edition.callback<S.LoopSignal, never>((resume) => {
        const immediate = setImmediate(() => resume(Effect.succeed(read())))
        return Effect.sync(() => clearImmediate(immediate))
      })
    }
  )
