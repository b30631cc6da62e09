import type { Limiter } from "@circuitry/limiter"
import { yieldNow } from "@circuitry/testkit"
import { Effect } from "effect"

/** Lets forked calls start until `n` are in flight (fails the test rather than spinning forever). */
export const untilInFlight = (limiter: Limiter.Limiter, n: number) =>
  Effect.gen(function* () {
    for (let i = 0; i < 1000; i++) {
      if ((yield* limiter.inFlight) === n) return
      yield* yieldNow
    }
    throw new Error(`never reached ${n} in flight`)
  })

/** Lets forked callers reach the queue until `n` wait there. */
export const untilQueued = (limiter: Limiter.Limiter, n: number) =>
  Effect.gen(function* () {
    for (let i = 0; i < 1000; i++) {
      if ((yield* limiter.snapshot).queued === n) return
      yield* yieldNow
    }
    throw new Error(`never reached ${n} queued`)
  })
