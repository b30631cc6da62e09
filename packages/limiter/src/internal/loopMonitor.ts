/**
 * The Node event loop as a shedder's input: its delay (how late a timer due every `resolution` ms
 * fires, as `perf_hooks.monitorEventLoopDelay` measures it) and its utilization
 * (`performance.eventLoopUtilization`), each over the time since the last read.
 */
import * as Edition from "@circuitry/core/Edition"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { performance } from "node:perf_hooks"
import type * as S from "../Shedder.js"

/**
 * The loop's lateness: a timer due every `resolution` ms keeps the largest time past its due since
 * the last read. It is a timer of our own, not `monitorEventLoopDelay`'s histogram: resetting that
 * histogram for the next window also forgets its timer's last fire, so the first fire after a read
 * records nothing, and a loop blocked between every two reads (an overloaded one) read as no delay.
 * Here only the largest lateness is reset; the time of the last fire is kept across reads.
 */
interface Lateness {
  readonly timer: ReturnType<typeof setInterval>
  /** The largest lateness since the last read, in ms. */
  max: number
}

/**
 * A reader of the loop's signal since the previous read. A block shows when the timer fires after
 * it (at the start of the next timers phase), so a read right after the timers phase sees it.
 *
 * @internal
 */
export const nodeLoop = (resolutionMillis: number): Effect.Effect<Effect.Effect<S.LoopSignal>, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync((): Lateness => {
        let lastFire = performance.now()
        const lateness: Lateness = {
          max: 0,
          timer: setInterval(() => {
            const now = performance.now()
            lateness.max = Math.max(lateness.max, now - lastFire - resolutionMillis)
            lastFire = now
          }, resolutionMillis)
        }
        // The monitor never keeps a process alive on its own.
        lateness.timer.unref()
        return lateness
      }),
      (lateness) => Effect.sync(() => clearInterval(lateness.timer))
    ),
    (lateness) => {
      let last = performance.eventLoopUtilization()
      const read = (): S.LoopSignal => {
        const now = performance.eventLoopUtilization()
        const utilization = performance.eventLoopUtilization(now, last).utilization
        last = now
        const delayMillis = lateness.max
        lateness.max = 0
        return { delayMillis, utilization }
      }
      // Read after the timers phase: a late timer due in the same phase has recorded by then, so a
      // block shows in the same sample as the utilization it caused.
      return Edition.callback<S.LoopSignal, never>((resume) => {
        const immediate = setImmediate(() => resume(Effect.succeed(read())))
        return Effect.sync(() => clearImmediate(immediate))
      })
    }
  )
