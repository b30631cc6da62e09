/**
 * Turns guards into timed cases, one shape per scenario: many calls in one `Effect.gen` loop, one
 * `Effect.runPromise` per call, and a burst of concurrent calls.
 */
import * as Edition from "@circuitry/core/Edition"
import * as Effect from "effect/Effect"
import type { Case } from "./harness.js"
import type { Guard, Work } from "./subjects.js"

/** Many calls inside one `Effect.gen` loop (the call is built inside the loop, as a user writes it). */
export const inFiber = (id: string, label: string, guard: Guard, work: Work): Case => ({
  id,
  label,
  run: (n) =>
    Effect.runPromise(
      Effect.gen(function* () {
        for (let i = 0; i < n; i++) yield* guard(work)
      })
    )
})

/** Many calls inside one `Effect.gen` loop, each expected to fail (the open-state rejection). */
export const inFiberFailing = (id: string, label: string, guard: Guard, work: Work): Case => ({
  id,
  label,
  run: (n) =>
    Effect.runPromise(
      Effect.gen(function* () {
        for (let i = 0; i < n; i++) yield* Edition.result(guard(work))
      })
    )
})

/** One `Effect.runPromise` per call, awaited in turn. */
export const perCall = (id: string, label: string, guard: Guard, work: Work): Case => ({
  id,
  label,
  run: async (n) => {
    for (let i = 0; i < n; i++) await Effect.runPromise(guard(work))
  }
})

/** Plain Promise code, no Effect: `call` is awaited `n` times in turn. */
export const promiseLoop = (id: string, label: string, call: () => Promise<unknown>): Case => ({
  id,
  label,
  run: async (n) => {
    for (let i = 0; i < n; i++) await call()
  }
})

/** Plain Promise code whose calls are expected to reject. */
export const promiseLoopFailing = (id: string, label: string, call: () => Promise<unknown>): Case => ({
  id,
  label,
  run: async (n) => {
    for (let i = 0; i < n; i++) {
      try {
        await call()
      } catch {
        // the rejection is what is measured
      }
    }
  }
})

/** `n` calls at once through `Effect.all` with unbounded concurrency (one fiber each). */
export const burst = (id: string, label: string, guard: Guard, work: Work): Case => ({
  id,
  label,
  run: (n) =>
    Effect.runPromise(
      Effect.all(
        Array.from({ length: n }, () => guard(work)),
        { concurrency: "unbounded", discard: true }
      )
    )
})

/** `n` calls at once through `Promise.all`. */
export const promiseBurst = (id: string, label: string, call: () => Promise<unknown>): Case => ({
  id,
  label,
  run: async (n) => {
    await Promise.all(Array.from({ length: n }, call))
  }
})
