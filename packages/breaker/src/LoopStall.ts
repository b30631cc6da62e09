/**
 * The event loop's own stalls, so that a deadline does not blame a dependency for time the process
 * lost. A stalled loop (a busy loop, a long GC pause, a process starved of CPU) runs no timer and
 * reads no socket: a dependency that answered during the stall has its reply waiting in the socket,
 * but Node runs expired timers first, so without this its deadline would fire and count as the
 * dependency's failure.
 *
 * Every deadline in circuitry (the breaker's `timeout`, the shared store's waits, RedisStore's
 * `deadline` and liveness watchdog) counts the loop's running time: the Clock minus the time lost
 * to stalls since the call started. A call thus gets its whole limit of time in which its answer
 * could have been read, and ends at most the stall itself after its Clock deadline; a dependency
 * that is really slow still fails once it has had its limit.
 *
 * The live monitor (the default) is process-wide and needs no setup. Tests provide `scripted`
 * stalls on the TestClock's times instead.
 *
 * @since 0.2.0
 */
import type * as Edition from "@circuitry/core/Edition"
import type * as Clock from "effect/Clock"
import type * as Runtime from "#runtime"
import * as internal from "./internal/loopStall.js"

/**
 * A source of the event loop's stalls.
 *
 * @since 0.2.0
 * @category models
 */
export interface Service {
  /**
   * How many milliseconds of the Clock's time before `at` (epoch milliseconds on the Effect Clock)
   * the event loop lost to stalls. It never decreases as `at` grows, and grows by at most 1 ms per
   * ms: `at - lostBefore(at)` is the loop's running clock.
   */
  readonly lostBefore: (at: number) => number
}

/**
 * The service's key. Unless one is provided, it is `live`: what the process's monitor measures.
 *
 * @since 0.2.0
 * @category tags
 * @example
 * ```ts
 * import { CircuitBreaker, LoopStall } from "@circuitry/breaker"
 * import { Effect } from "effect"
 *
 * // A breaker whose deadlines ignore the loop's stalls (the behaviour before 0.2).
 * const breaker = CircuitBreaker.make({ name: "db", timeout: "1 second" }).pipe(
 *   Effect.provideService(LoopStall.LoopStall, LoopStall.none)
 * )
 * ```
 */
export const LoopStall: Runtime.Reference<internal.LoopStallTag, Service> = internal.LoopStallTag

/**
 * The process's monitor: a timer every 10 ms that sees how late it fires. A timer more than 10 ms
 * late is a stall (the 10 ms are ordinary jitter and are not counted), dated on the live Clock
 * (`Date.now`); a stall still going on when a deadline asks is counted up to that moment. It starts
 * on the first question, keeps no process alive (`unref`), stops after 5 minutes without one, and
 * adds up what it saw in the counter `circuitry_event_loop_stall_seconds_total`. Under a TestClock
 * the stalls it saw are at real dates, which virtual times never reach: they move no test's deadline.
 *
 * @since 0.2.0
 * @category constructors
 */
export const live: Service = internal.live

/**
 * No stalls: deadlines on the Clock alone.
 *
 * @since 0.2.0
 * @category constructors
 */
export const none: Service = internal.none

/**
 * Stalls a test says happened, as `[from, to]` pairs of Clock times (overlapping ones count once),
 * plus `stall(from, to)` to add one later.
 *
 * @since 0.2.0
 * @category models
 */
export interface Scripted extends Service {
  readonly stall: (from: number, to: number) => void
}

/**
 * A `Scripted` source: the loop was stalled exactly when the test says, on the TestClock's times.
 *
 * @since 0.2.0
 * @category constructors
 * @example
 * ```ts
 * import { CircuitBreaker, LoopStall, Policy } from "@circuitry/breaker"
 * import { Effect, Fiber, TestClock } from "effect"
 *
 * // The loop stalled from 50 to 350 ms: the 200 ms deadline gives the call the time it lost.
 * const program = Effect.gen(function* () {
 *   const breaker = yield* CircuitBreaker.make({ policy: Policy.consecutiveFailures(1), timeout: "200 millis" })
 *   const call = yield* Effect.fork(CircuitBreaker.withBreaker(Effect.sleep("300 millis"), breaker))
 *   yield* TestClock.adjust("300 millis")
 *   yield* Fiber.join(call) // succeeds: the deadline is now at 350 ms
 * }).pipe(Effect.provideService(LoopStall.LoopStall, LoopStall.scripted([[50, 350]])), Effect.scoped)
 * ```
 */
export const scripted: (stalls?: Iterable<readonly [from: number, to: number]>) => Scripted = internal.scripted

/**
 * Time the event loop lost to stalls, as the live monitor measured it, in seconds (a monotonic
 * counter, no tags).
 *
 * @since 0.2.0
 * @category metrics
 */
export const stallSeconds: Edition.Counter = internal.stallSeconds

/**
 * Deadlines that reached their Clock time and were carried on for time the loop lost to a stall
 * (each counted once), tagged `deadline`: `breaker_timeout` (a breaker's `timeout`), `store_wait`
 * (a breaker's waits on its shared store), `redis_deadline` (a RedisStore or RedisBreakerStore
 * call's `deadline`). Such a call then ends with its own outcome, or times out once it has had its
 * whole limit of the loop's running time; the breaker counts that outcome as it would any other.
 *
 * @since 0.2.0
 * @category metrics
 */
export const deadlineExtensions: Edition.Counter = internal.deadlineExtensions

/**
 * The source that applies on `clock`: `stall`, except that the live monitor (which measures the
 * real event loop) applies only on the live Clock; on a TestClock or a simulation's virtual clock
 * it is `none`, so a virtual run's deadlines never depend on how busy the machine was.
 *
 * @since 0.2.0
 * @category combinators
 * @example
 * ```ts
 * import { LoopStall } from "@circuitry/breaker"
 * import { Clock, Effect } from "effect"
 *
 * const source = Effect.map(Effect.clock, (clock) => LoopStall.onClock(LoopStall.live, clock))
 * ```
 */
export const onClock: (stall: Service, clock: Clock.Clock) => Service = internal.onClock
