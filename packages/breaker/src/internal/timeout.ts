/**
 * Deadlines: the breaker's `timeout` around a call, and the least default probe timeout. A call
 * past its deadline is answered at once, whatever its interruption costs (it finishes in the
 * background), with the failure `BreakerTimeoutError`, which always counts as a failure. The
 * deadline is kept on the loop's running clock (loopStall.ts): time the event loop lost to a stall
 * is given back to the call, so a stall of the process's own is not the dependency's failure. The
 * failure is in the error type of a breaker made from `TimeoutOptions` (circuitBreaker.ts `make`),
 * not in these functions' types, which the breaker shares with its timeout-free kind.
 */
import * as Edition from "@circuitry/core/Edition"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { BreakerTimeoutError } from "./errors.js"
import { timeoutFail } from "./loopStall.js"
import { repairedEffect, repairing } from "./repair.js"

/** The least default `probeTimeout`: an open time of 0 must not fail every probe at once. @internal */
export const MIN_PROBE_TIMEOUT = 1_000

/** Whether a call failed by running past the breaker's timeout. @internal */
export const isTimeout = (cause: Cause.Cause<unknown>): boolean =>
  Option.exists(Edition.findError(cause), (error) => error instanceof BreakerTimeoutError)

/** Marks an effect `deadline` made. */
const Bounded: unique symbol = Symbol.for("@circuitry/breaker/bounded")

/**
 * `self`, answered at `millis` (of the loop's running clock): the loser is disconnected, so its
 * cleanup (a driver's cancel) finishes in the background, and the caller does not wait for it.
 */
const deadline = <A, E, R>(self: Effect.Effect<A, E, R>, breaker: string, millis: number): Effect.Effect<A, E, R> =>
  Object.assign(
    timeoutFail(
      Edition.disconnect(self),
      millis,
      () => new BreakerTimeoutError({ breaker, timeoutMillis: millis }) as E,
      "breaker_timeout"
    ),
    { [Bounded]: true }
  )

/**
 * The breaker's `timeout`, put around a call. Repair traffic's mark stays outermost, where the
 * breaker looks for it; a call decided again (a probe readmitted, repair traffic unwrapped) is
 * bounded already.
 *
 * @internal
 */
export const limit =
  (breaker: string, millis: number) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
    if (Bounded in self) return self
    const repaired = repairedEffect(self)
    return repaired === undefined ? deadline(self, breaker, millis) : repairing(deadline(repaired, breaker, millis))
  }
